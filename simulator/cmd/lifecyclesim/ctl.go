package main

// The client commands drive a running simulator from a CI script, with the project's Go
// client: reset, the clock, fault rules, waiting for readiness or for an object to be static,
// and the request journal. They live in the server's binary on purpose (TestLayers allows
// this binary, and only it, to link the client): the container image has no shell and no
// curl, so one binary that serves and drives is what a job can `docker exec`.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// The client commands read the provider's environment, so a CI job sets it once for both.
const (
	envEndpoint = "LIFECYCLE_ENDPOINT"
	envToken    = "LIFECYCLE_TOKEN"
)

// defaultEndpoint is where a simulator started with the default --addr answers.
const defaultEndpoint = "http://127.0.0.1:7575"

// ctlCommands are the client commands, with their synopsis for --help.
var ctlCommands = []struct{ name, synopsis string }{
	{"reset", "remove the tenant's objects, fault rules and request journal"},
	{"clock", "print the simulator's clock; clock advance DURATION moves it forward (admin token when tokens are set)"},
	{"faults", "faults list | faults add --mode MODE [--kind K --action A --phase P ...] | faults remove ID"},
	{"wait", "wait ready (until /readyz answers 200) | wait static COLLECTION ID (until the object is static)"},
	{"journal", "print the tenant's request journal [--method M --path P --status 4xx --request-id ID --after SEQ --limit N]"},
	{"export", "print the tenant's state (objects, histories, fault rules, clock) as one document [--out FILE] [--tenant T with the admin token] [--db FILE | --postgres URL: from a store, not a running simulator]"},
	{"import", "import FILE (- for standard input) into an empty tenant [--tenant T with the admin token, which also advances a clock behind the document's] [--db FILE | --postgres URL: into a store]"},
}

// isCtl reports whether name is a client command.
func isCtl(name string) bool {
	for _, c := range ctlCommands {
		if c.name == name {
			return true
		}
	}
	return false
}

// ctlOptions are the flags every client command takes.
type ctlOptions struct {
	endpoint, token, output string
	timeout                 time.Duration
}

// ctlFlags declares the common flags on fs, with their environment defaults.
func ctlFlags(fs *flag.FlagSet, getenv func(string) string) *ctlOptions {
	o := &ctlOptions{}
	fs.StringVar(&o.endpoint, "endpoint", cmpEnv(getenv(envEndpoint), defaultEndpoint), "the simulator's base `URL` ["+envEndpoint+"]")
	fs.StringVar(&o.token, "token", getenv(envToken), "bearer `token` of the tenant (or the admin token for clock advance) ["+envToken+"]")
	fs.StringVar(&o.output, "output", "table", "`format` of what is printed: table or json")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "how long the command may take (a wait, its whole wait)")
	return o
}

func cmpEnv(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// ctl runs a client command; what it prints goes to out.
func ctl(ctx context.Context, name string, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("lifecyclesim "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	o := ctlFlags(fs, getenv)
	var run func(ctx context.Context, c *client.Client, p printer, args []string) error
	switch name {
	case "reset":
		run = ctlReset
	case "clock":
		run = ctlClock
	case "faults":
		run = faultsCommand(fs)
	case "wait":
		run = ctlWait
	case "journal":
		run = journalCommand(fs)
	case "export", "import":
		run = stateCommand(fs, name, os.Stdin)
	default:
		return fmt.Errorf("unknown command %q", name)
	}
	fs.Usage = func() {
		for _, c := range ctlCommands {
			if c.name == name {
				fmt.Fprintf(fs.Output(), "Usage: lifecyclesim %s [flags]: %s\n\nFlags:\n", name, c.synopsis)
			}
		}
		fs.PrintDefaults()
	}
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.output != "table" && o.output != "json" {
		return fmt.Errorf("%s: --output %q: want table or json", name, o.output)
	}
	if o.timeout <= 0 {
		return fmt.Errorf("%s: --timeout must be positive, got %v", name, o.timeout)
	}
	c, err := client.New(client.Config{Endpoint: o.endpoint, Token: o.token, UserAgent: "lifecyclesim-cli/" + appVersion()})
	if err != nil {
		return fmt.Errorf("%s: %w (set --endpoint or %s)", name, err, envEndpoint)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := run(ctx, c, printer{w: out, json: o.output == "json"}, fs.Args()); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// interleave moves flags after positional arguments to the front (faults remove ID --token T),
// since the flag package stops at the first positional one.
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && i+1 < len(args) {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			i++
			flags = append(flags, args[i])
		}
	}
	return append(flags, pos...)
}

// printer prints a command's result as JSON or as a table.
type printer struct {
	w    io.Writer
	json bool
}

// print writes v as indented JSON, or the rows under header as a table.
func (p printer) print(v any, header []string, rows [][]string) error {
	if p.json {
		enc := json.NewEncoder(p.w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	if header != nil {
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// wantArgs checks a command's positional arguments.
func wantArgs(args []string, n int, usage string) error {
	if len(args) != n {
		return fmt.Errorf("want %s, got %d arguments %q", usage, len(args), args)
	}
	return nil
}

func ctlReset(ctx context.Context, c *client.Client, p printer, args []string) error {
	if err := wantArgs(args, 0, "no arguments"); err != nil {
		return err
	}
	if err := c.Reset(ctx); err != nil {
		return err
	}
	return p.print(map[string]bool{"reset": true}, nil, [][]string{{"reset"}})
}

func ctlClock(ctx context.Context, c *client.Client, p printer, args []string) error {
	var st *client.ClockState
	var err error
	switch {
	case len(args) == 0:
		st, err = c.Clock(ctx)
	case args[0] == "advance" && len(args) == 2:
		d, perr := time.ParseDuration(args[1])
		if perr != nil || d <= 0 {
			return fmt.Errorf("advance %q: want a positive duration such as 90m or 24h", args[1])
		}
		st, err = c.AdvanceClock(ctx, d)
	default:
		return fmt.Errorf("want no arguments (read the clock) or advance DURATION, got %q", args)
	}
	if err != nil {
		return err
	}
	return p.print(st, []string{"NOW", "TIME_SCALE"}, [][]string{{st.Now.UTC().Format(time.RFC3339Nano), strconv.FormatFloat(st.TimeScale, 'g', -1, 64)}})
}

// faultsCommand declares the flags of faults add on fs.
func faultsCommand(fs *flag.FlagSet) func(ctx context.Context, c *client.Client, p printer, args []string) error {
	var r client.FaultRule
	fs.StringVar(&r.Kind, "kind", "", "add: the `kind` the rule matches (any when empty)")
	fs.StringVar(&r.Action, "action", "", "add: the `action` it matches (any when empty)")
	fs.StringVar(&r.Phase, "phase", "", "add: the transition `state` it matches (any when empty)")
	fs.StringVar(&r.Mode, "mode", "", "add: fail, hang, slow, http_error or drop")
	fs.Float64Var(&r.Factor, "factor", 0, "add: slow: multiplies the phase's duration")
	fs.IntVar(&r.HTTPStatus, "http-status", 0, "add: http_error: the `status` answered")
	fs.StringVar(&r.Code, "code", "", "add: http_error: the error `code` answered")
	fs.StringVar(&r.Message, "message", "", "add: fail: the error `message`")
	fs.BoolVar(&r.Fatal, "fatal", false, "add: fail: land in the action's error state instead of rolling back")
	fs.Float64Var(&r.Probability, "probability", 0, "add: the chance it fires (1 when 0)")
	fs.IntVar(&r.Count, "count", 0, "add: how many times it fires (unlimited when 0)")
	return func(ctx context.Context, c *client.Client, p printer, args []string) error {
		if len(args) == 0 {
			return errors.New("want list, add or remove ID")
		}
		switch args[0] {
		case "list":
			if err := wantArgs(args[1:], 0, "no arguments after list"); err != nil {
				return err
			}
			rules, err := c.Faults(ctx)
			if err != nil {
				return err
			}
			return printFaults(p, client.FaultList{Items: rules})
		case "add":
			if err := wantArgs(args[1:], 0, "flags only after add (--mode, --kind, ...)"); err != nil {
				return err
			}
			if r.Mode == "" {
				return errors.New("add needs --mode: fail, hang, slow, http_error or drop")
			}
			added, err := c.AddFault(ctx, r)
			if err != nil {
				return err
			}
			if p.json {
				return p.print(added, nil, nil)
			}
			return printFaults(p, client.FaultList{Items: []client.FaultRule{*added}})
		case "remove":
			if err := wantArgs(args[1:], 1, "remove ID"); err != nil {
				return err
			}
			if err := c.DeleteFault(ctx, args[1]); err != nil {
				return err
			}
			return p.print(map[string]string{"removed": args[1]}, nil, [][]string{{"removed " + args[1]}})
		}
		return fmt.Errorf("unknown subcommand %q: want list, add or remove ID", args[0])
	}
}

func printFaults(p printer, list client.FaultList) error {
	rows := make([][]string, 0, len(list.Items))
	orAny := func(v string) string { return cmpEnv(v, "*") }
	for _, r := range list.Items {
		var detail []string
		if r.Message != "" {
			detail = append(detail, "message="+strconv.Quote(r.Message))
		}
		if r.Fatal {
			detail = append(detail, "fatal")
		}
		if r.Factor != 0 {
			detail = append(detail, "factor="+strconv.FormatFloat(r.Factor, 'g', -1, 64))
		}
		if r.HTTPStatus != 0 {
			detail = append(detail, "http_status="+strconv.Itoa(r.HTTPStatus))
		}
		if r.Probability != 0 {
			detail = append(detail, "probability="+strconv.FormatFloat(r.Probability, 'g', -1, 64))
		}
		if r.Count != 0 {
			detail = append(detail, "count="+strconv.Itoa(r.Count))
		}
		rows = append(rows, []string{r.ID, orAny(r.Kind), orAny(r.Action), orAny(r.Phase), r.Mode, strconv.Itoa(r.Fired), strings.Join(detail, " ")})
	}
	return p.print(list, []string{"ID", "KIND", "ACTION", "PHASE", "MODE", "FIRED", "DETAIL"}, rows)
}

// readyPoll is how often wait ready asks again.
const readyPoll = 200 * time.Millisecond

func ctlWait(ctx context.Context, c *client.Client, p printer, args []string) error {
	if len(args) == 0 {
		return errors.New("want ready, or static COLLECTION ID")
	}
	switch args[0] {
	case "ready":
		if err := wantArgs(args[1:], 0, "no arguments after ready"); err != nil {
			return err
		}
		for {
			err := c.Ready(ctx)
			if err == nil {
				return p.print(map[string]string{"status": "ready", "endpoint": c.Endpoint()}, nil, [][]string{{c.Endpoint() + " is ready"}})
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s not ready within --timeout: %w", c.Endpoint(), err)
			case <-time.After(readyPoll):
			}
		}
	case "static":
		if err := wantArgs(args[1:], 2, "static COLLECTION ID"); err != nil {
			return err
		}
		o, err := c.WaitStatic(ctx, args[1], args[2], client.WaitOptions{})
		if err != nil {
			if ctx.Err() != nil && o != nil {
				return fmt.Errorf("%s %s still %s after --timeout: %w", args[1], args[2], o.State, err)
			}
			return err
		}
		return p.print(o, []string{"ID", "KIND", "STATE", "VERSION"}, [][]string{{o.ID, o.Kind, o.State, strconv.FormatInt(o.Version, 10)}})
	}
	return fmt.Errorf("unknown subcommand %q: want ready, or static COLLECTION ID", args[0])
}

// journalCommand declares the journal's filters on fs.
func journalCommand(fs *flag.FlagSet) func(ctx context.Context, c *client.Client, p printer, args []string) error {
	var q client.JournalQuery
	fs.StringVar(&q.Method, "method", "", "only requests of this `method`")
	fs.StringVar(&q.Path, "path", "", "only requests whose path starts with this `prefix`")
	fs.StringVar(&q.Status, "status", "", "only answers of this `status` (404) or class (4xx)")
	fs.StringVar(&q.RequestID, "request-id", "", "only the request of this `ID`")
	fs.Int64Var(&q.After, "after", 0, "only entries whose seq is above this")
	fs.IntVar(&q.Limit, "limit", 0, "the newest `N` entries that match (all the journal keeps when 0)")
	return func(ctx context.Context, c *client.Client, p printer, args []string) error {
		if err := wantArgs(args, 0, "flags only"); err != nil {
			return err
		}
		list, err := c.Journal(ctx, q)
		if err != nil {
			return err
		}
		rows := make([][]string, 0, len(list.Items))
		for _, e := range list.Items {
			req := e.Method + " " + e.Path
			if e.Query != "" {
				req += "?" + e.Query
			}
			errText := e.ErrorCode
			if e.ErrorMessage != "" {
				errText += ": " + e.ErrorMessage
			}
			rows = append(rows, []string{strconv.FormatInt(e.Seq, 10), e.Time.UTC().Format(time.RFC3339Nano), req, strconv.Itoa(e.Status),
				strconv.FormatFloat(e.DurationMS, 'f', 1, 64), e.RequestID, e.IdempotencyKey, errText})
		}
		return p.print(list, []string{"SEQ", "TIME", "REQUEST", "STATUS", "MS", "REQUEST_ID", "IDEMPOTENCY_KEY", "ERROR"}, rows)
	}
}
