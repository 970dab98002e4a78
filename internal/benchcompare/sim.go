package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/internal/freeport"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// simAPI talks to one lifecyclesim over its public HTTP API only: the simulator's internals
// are being rewritten, and the benchmark must keep measuring across that. Setup goes through
// the project's Go client; the measured requests are sent raw (send), so that what is timed
// is one HTTP request and nothing else.
type simAPI struct {
	base string
	hc   *http.Client
	c    *client.Client
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// create asks for an object and returns its ID (not waiting for its transition). It is sent
// raw, as the measured creates are: the client's Idempotency-Key would make the server keep
// a key per filled object, which the measured store should not hold.
func (a *simAPI) create(ctx context.Context, collection, name, parent string, spec map[string]any) (string, error) {
	body, err := json.Marshal(client.CreateRequest{Name: name, ParentID: parent, Spec: spec})
	if err != nil {
		return "", err
	}
	status, b, err := send(ctx, a.hc, http.MethodPost, a.base+"/v1/"+collection, jsonHeader, body, true)
	if err != nil {
		return "", err
	}
	if status != http.StatusCreated && status != http.StatusAccepted {
		return "", statusError("create "+collection, status, b)
	}
	var o client.Object
	return o.ID, json.Unmarshal(b, &o)
}

// rests waits until an object rests in a static state, which must be want.
func (a *simAPI) rests(ctx context.Context, collection, id, want string) error {
	o, err := a.c.WaitStatic(ctx, collection, id, client.WaitOptions{})
	if err != nil {
		return err
	}
	if o.State != want {
		return fmt.Errorf("%s %s rests in %s, want %s", collection, id, o.State, want)
	}
	return nil
}

// createStatic creates an object and waits until it rests in want.
func (a *simAPI) createStatic(ctx context.Context, collection, name, parent string, spec map[string]any, want string) (string, error) {
	id, err := a.create(ctx, collection, name, parent, spec)
	if err != nil {
		return "", err
	}
	return id, a.rests(ctx, collection, id, want)
}

// actStatic runs an action and waits until the object rests in want.
func (a *simAPI) actStatic(ctx context.Context, collection, id, action, want string) error {
	if _, err := a.c.Act(ctx, collection, id, action, client.ActionRequest{}); err != nil {
		return err
	}
	return a.rests(ctx, collection, id, want)
}

// settle waits until no object of collection is in one of the transitional states given (a
// list ?state=…&limit=1 every 20 ms), or until ctx ends: then the error names the state.
func settle(ctx context.Context, c *client.Client, collection string, states ...string) error {
	for _, st := range states {
		for {
			l, err := c.List(ctx, collection, client.ListOptions{State: st, Limit: 1})
			if err != nil {
				return err
			}
			if len(l.Items) == 0 {
				break
			}
			sleepCtx(ctx, 20*time.Millisecond)
			if ctx.Err() != nil {
				return fmt.Errorf("some %s are still %s: %w", collection, st, ctx.Err())
			}
		}
	}
	return nil
}

// kindDurations reads a kind from the simulator: the duration of its create (as "create")
// and of each action, the sum of its phases at time scale 1.
func (a *simAPI) kindDurations(ctx context.Context, kind string) (map[string]time.Duration, error) {
	k, err := a.c.Kind(ctx, kind)
	if err != nil {
		return nil, err
	}
	out := map[string]time.Duration{}
	for i, act := range k.AllActions() {
		name := act.Name
		if i == 0 {
			name = "create"
		}
		var d time.Duration
		for _, p := range act.Via {
			d += k.PhaseDuration(p)
		}
		out[name] = d
	}
	return out, nil
}

// simSystem is one lifecyclesim under load in the comparison: each client owns a cloudspace
// (where its creates go) and a pool of RUNNING machines (for GETs and actions).
type simSystem struct {
	pooled
	label string
	api   *simAPI
	// bases are the replicas' URLs when there are several (client c sends to c mod n);
	// empty: api's.
	bases []string
	image string
	names atomic.Int64 // numbers the created machines' names
	// per client
	cloudspaces []string
	halted      [][]bool // the client's idea of each pool machine's state: flipped on a 202
}

func (s *simSystem) Name() string { return s.label }

// pooled is what every compared system has: its server process, each client's pool of
// objects, and a count of the objects the creates made.
type pooled struct {
	srv     *server
	pools   [][]string
	created atomic.Int64
}

func (p *pooled) PID() int { return p.srv.pid() }
func (p *pooled) Stop()    { p.srv.stop() }

// Objects counts the pools' objects and the objects created since.
func (p *pooled) Objects() int {
	n := int(p.created.Load())
	for _, pool := range p.pools {
		n += len(pool)
	}
	return n
}

// Ops says what each operation sends.
func (s *simSystem) Ops() map[string]string {
	return map[string]string{
		"get":    "GET /v1/machines/{id}, round robin over the client's pool",
		"act":    "POST /v1/machines/{id}/actions/stop or /start, alternating per machine, round robin over the client's pool; 202 counts, 409 busy apart",
		"create": "POST /v1/machines (a machine in the client's DEPLOYED cloudspace, with an image_id); 202 counts",
	}
}

// Prepare makes an account, an image, and per client a cloudspace and pool RUNNING machines.
func (s *simSystem) Prepare(ctx context.Context, clients, pool int) error {
	acct, err := s.api.createStatic(ctx, "accounts", "bench", "", nil, "CONFIRMED")
	if err != nil {
		return err
	}
	if s.image, err = s.api.createStatic(ctx, "images", "bench", "", nil, "CREATED"); err != nil {
		return err
	}
	s.cloudspaces = make([]string, clients)
	err = parallel(ctx, clients, 8, func(ctx context.Context, c int) error {
		id, err := s.api.createStatic(ctx, "cloudspaces", "bench-"+strconv.Itoa(c), acct, nil, "DEPLOYED")
		s.cloudspaces[c] = id
		return err
	})
	if err != nil {
		return err
	}
	s.pools = make([][]string, clients)
	s.halted = make([][]bool, clients)
	for c := range clients {
		s.pools[c] = make([]string, pool)
		s.halted[c] = make([]bool, pool)
	}
	return parallel(ctx, clients*pool, 16, func(ctx context.Context, i int) error {
		c, j := i/pool, i%pool
		id, err := s.api.createStatic(ctx, "machines", fmt.Sprintf("pool-%d-%d", c, j), s.cloudspaces[c],
			map[string]any{"image_id": s.image}, "RUNNING")
		s.pools[c][j] = id
		return err
	})
}

// baseOf is the URL client c sends its requests to.
func (s *simSystem) baseOf(c int) string {
	if len(s.bases) == 0 {
		return s.api.base
	}
	return s.bases[c%len(s.bases)]
}

// Request returns the request function of op.
func (s *simSystem) Request(op string) requestFunc {
	hc := s.api.hc
	switch op {
	case "get":
		return func(ctx context.Context, c, seq int) outcome {
			p := s.pools[c]
			status, _, err := send(ctx, hc, http.MethodGet, s.baseOf(c)+"/v1/machines/"+p[seq%len(p)], nil, nil, false)
			return classify(status, err, false)
		}
	case "act":
		body := []byte("{}")
		return func(ctx context.Context, c, seq int) outcome {
			p, h := s.pools[c], s.halted[c]
			i := seq % len(p)
			action := "stop"
			if h[i] {
				action = "start"
			}
			status, _, err := send(ctx, hc, http.MethodPost, s.baseOf(c)+"/v1/machines/"+p[i]+"/actions/"+action, jsonHeader, body, false)
			if status == http.StatusAccepted {
				h[i] = !h[i]
			}
			return classify(status, err, true)
		}
	case "create":
		return func(ctx context.Context, c, _ int) outcome {
			body := fmt.Appendf(nil, `{"name":"bench-%d","parent_id":%q,"spec":{"image_id":%q}}`, s.names.Add(1), s.cloudspaces[c], s.image)
			status, _, err := send(ctx, hc, http.MethodPost, s.baseOf(c)+"/v1/machines", jsonHeader, body, false)
			if status == http.StatusAccepted || status == http.StatusCreated {
				s.created.Add(1)
			}
			return classify(status, err, false)
		}
	}
	panic("unknown op " + op)
}

// startSim starts lifecyclesim (-sim) with the given store arguments on a free port.
func startSim(ctx context.Context, cfg *config, label string, storeArgs []string, timeScale float64, logPath string) (*server, *simAPI, error) {
	return launchSim(ctx, cfg, cfg.sim, label, storeArgs, timeScale, logPath)
}

// launchSim starts the lifecyclesim binary bin with the given arguments (a store's, and any
// more) on a free port, pinned to cfg.serverCPU.
func launchSim(ctx context.Context, cfg *config, bin, label string, args []string, timeScale float64, logPath string) (*server, *simAPI, error) {
	port, err := freeport.Loopback()
	if err != nil {
		return nil, nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	argv := []string{bin, "--addr", addr, "--time-scale", strconv.FormatFloat(timeScale, 'g', -1, 64),
		"--max-objects", "100000000", "--max-conns", "4096"}
	argv = append(argv, args...)
	argv = append(argv, strings.Fields(cfg.simArgs)...)
	srv, err := startServer(label, cfg.serverCPU, argv, "http://"+addr, logPath, cfg.pidFile)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(client.Config{Endpoint: srv.base, UserAgent: "benchcompare"})
	if err != nil {
		srv.stop()
		return nil, nil, err
	}
	api := &simAPI{base: srv.base, hc: newHTTPClient(), c: c}
	if err := srv.waitReady(ctx, 30*time.Second, httpCheck(api.hc, srv.base+"/readyz")); err != nil {
		srv.stop()
		return nil, nil, err
	}
	return srv, api, nil
}

// checkpointed waits, at most maxWait, until the server's SQLite journal holds nothing its
// tables do not, as its /metrics say: otherwise a checkpoint of what the last run wrote could
// start inside the next measured run (the journal waits for a quiet half second before
// checkpointing). A store without a journal has nothing to wait for.
func (a *simAPI) checkpointed(ctx context.Context, maxWait time.Duration) error {
	deadline := time.Now().Add(maxWait)
	for {
		status, b, err := send(ctx, a.hc, http.MethodGet, a.base+"/metrics", nil, nil, true)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return statusError("metrics", status, b)
		}
		m := metricValues(string(b))
		commits, ok := m["lifecyclesim_store_journal_commits_total"]
		checkpointed, known := m["lifecyclesim_store_checkpointed_commits_total"]
		if !ok || !known || checkpointed >= commits {
			// No journal, or a lifecyclesim from before the checkpointed counter (-sim): the
			// wait for idle CPU is all there is.
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the journal still holds %.0f commits after %v", commits-checkpointed, maxWait)
		}
		sleepCtx(ctx, 50*time.Millisecond)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// metricValues reads the unlabelled samples of a Prometheus text exposition (name, value and
// an optional timestamp).
func metricValues(text string) map[string]float64 {
	out := map[string]float64{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || strings.Contains(f[0], "{") {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}
