// Command lifecyclesim serves the lifecycle simulator's HTTP API.
//
// Every flag has an environment twin: --addr is LIFECYCLESIM_ADDR, --time-scale is
// LIFECYCLESIM_TIME_SCALE, and so on. Flags win over the environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle/kindref"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/fixture"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, nil); err != nil {
		fmt.Fprintln(os.Stderr, "lifecyclesim:", err)
		os.Exit(1)
	}
}

// tokenFlags collects repeated --token TENANT=TOKEN values.
type tokenFlags map[string]string

func (t tokenFlags) String() string { return fmt.Sprintf("%d tokens", len(t)) }

func (t tokenFlags) Set(v string) error {
	for _, pair := range strings.Split(v, ",") {
		tenant, token, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || tenant == "" || token == "" {
			return fmt.Errorf("token %q: write TENANT=TOKEN", pair)
		}
		t[token] = tenant
	}
	return nil
}

type config struct {
	addr      string
	db        string
	postgres  string
	timeScale float64
	kinds     string
	tokens    tokenFlags
	healAfter time.Duration
	seed      uint64
	logFormat string
	logLevel  slog.Level
	version   bool
	// checkInvariants checks the kinds' cross-object invariants after every commit.
	checkInvariants bool
	adminToken      string
	maxConns        int
	maxObjects      int
	maxWaits        int
	maxStreams      int
	streamLifetime  time.Duration
	trustProxy      bool
	// journalSize and journalBodyBytes size the request journal (0 switches it off).
	journalSize, journalBodyBytes int
	// Connection bounds (httpapi.ConnLimits) and the body timeout.
	maxPendingPerAddr                       int
	headerTimeout, bodyTimeout, idleTimeout time.Duration
	proxyAddrs                              prefixFlags
	// acceptLogLoss opens a SQLite file whose log is damaged (sqlitestore.Options.AcceptLogLoss).
	acceptLogLoss bool
	// fixtures is the fixture file whose objects are created before serving.
	fixtures string
	// pprofAddr, when set, is the loopback address Go's runtime profiles are served on.
	pprofAddr string
}

// prefixFlags collects --proxy-addrs: IP addresses and CIDR prefixes, comma-separated.
type prefixFlags []netip.Prefix

func (p *prefixFlags) String() string {
	out := make([]string, len(*p))
	for i, v := range *p {
		out[i] = v.String()
	}
	return strings.Join(out, ",")
}

func (p *prefixFlags) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			*p = append(*p, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		pf, err := netip.ParsePrefix(s)
		if err != nil {
			return fmt.Errorf("%q is not an IP address or CIDR prefix (write 10.0.0.5 or 10.0.0.0/24)", s)
		}
		*p = append(*p, pf.Masked())
	}
	return nil
}

// defaultDB is the default of --db.
const defaultDB = "lifecyclesim.db"

// shutdownGrace is how long a shutdown waits for requests in flight.
const shutdownGrace = 10 * time.Second

// envPrefix starts the environment twin of every flag: --time-scale is LIFECYCLESIM_TIME_SCALE.
const envPrefix = "LIFECYCLESIM_"

// envName is the environment twin of a flag.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// examples says what a valid value of each typed flag looks like, for error messages.
var examples = map[string]string{
	"time-scale":       "a positive number such as 0.01",
	"heal-after":       "a duration such as 10m or 90s",
	"header-timeout":   "a duration such as 5s",
	"body-timeout":     "a duration such as 10s",
	"idle-timeout":     "a duration such as 30s",
	"seed":             "a whole number such as 42",
	"log-format":       "text or json",
	"log-level":        "debug, info, warn or error",
	"check-invariants": "true or false",
}

// logFormat is the --log-format value: text or json.
type logFormat struct{ v *string }

func (f logFormat) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f logFormat) Set(s string) error {
	if s != "text" && s != "json" {
		return fmt.Errorf("%q is not a log format", s)
	}
	*f.v = s
	return nil
}

// newFlagSet declares the server's flags on cfg. Defaults are the built-in ones: parseFlags
// applies the environment on top.
func newFlagSet(cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet("lifecyclesim", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:7575", "listen `address`; 0.0.0.0:7575 for every interface (use --token there)")
	fs.StringVar(&cfg.db, "db", defaultDB, "SQLite `file`, or :memory: for an in-memory store")
	fs.BoolVar(&cfg.acceptLogLoss, "accept-log-loss", false, "open a --db file whose log (FILE-log) is damaged or missing, which is refused otherwise: as its last checkpoint left it plus the log's intact frames before the damage, logging what was dropped (restoring the file and its log from a copy loses nothing)")
	fs.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL connection `URL` (postgres://user:password@host:5432/db); keeps the objects there instead of in --db")
	fs.Float64Var(&cfg.timeScale, "time-scale", 1, "multiplies every transition duration; 0.01 is 100x faster")
	fs.StringVar(&cfg.kinds, "kinds", "", "YAML `file` of extra user-defined kinds")
	fs.StringVar(&cfg.fixtures, "fixtures", "", "YAML or JSON `file` of objects to create before serving, each walked to its state by its actions, timers and fault rules (objects a previous start made are kept as they are); lifecyclesim check --fixtures FILE checks it")
	fs.Var(cfg.tokens, "token", "`TENANT=TOKEN`, repeatable (comma-separated in the environment); with none the API is open on one tenant")
	fs.DurationVar(&cfg.healAfter, "heal-after", 10*time.Minute, "how long a transition may be stuck before self-healing repairs it")
	fs.StringVar(&cfg.adminToken, "admin-token", "", "`TOKEN` for the simulator-wide controls (clock, time scale, heal_after) when --token is set; without it they are refused")
	fs.IntVar(&cfg.maxConns, "max-conns", httpapi.DefaultMaxConns, "most client `connections` open at once: past it a new one closes the longest waiting idle one, and waits only while all serve requests")
	fs.IntVar(&cfg.maxObjects, "max-objects", engine.DefaultMaxObjects, "per-tenant object `quota` (counting every object a request makes: an MCI's VMs, a scale-out's)")
	fs.IntVar(&cfg.maxWaits, "max-waits", httpapi.DefaultMaxWaitsPerTenant, "most open long-polls (?wait=static) per tenant; more get 429")
	fs.IntVar(&cfg.maxStreams, "max-streams", httpapi.DefaultMaxStreamsPerTenant, "most open dashboard event streams per tenant; more get 429")
	fs.DurationVar(&cfg.streamLifetime, "stream-lifetime", httpapi.DefaultStreamLifetime, "a dashboard event stream ends after this long (the browser resumes it)")
	fs.IntVar(&cfg.maxPendingPerAddr, "max-pending-per-addr", httpapi.DefaultMaxPendingPerAddr, "most `connections` one client address may hold before it has sent a complete request; past it its longest waiting one is closed (--proxy-addrs are exempt)")
	fs.Var(&cfg.proxyAddrs, "proxy-addrs", "comma-separated `addresses` (IPs or CIDR prefixes) of load balancers or proxies in front, exempt from --max-pending-per-addr (every client behind one shares its address)")
	fs.DurationVar(&cfg.headerTimeout, "header-timeout", httpapi.DefaultHeaderTimeout, "how long a connection has to send a request's headers")
	fs.DurationVar(&cfg.bodyTimeout, "body-timeout", httpapi.DefaultBodyTimeout, "how long a request's body may take to arrive")
	fs.DurationVar(&cfg.idleTimeout, "idle-timeout", httpapi.DefaultIdleTimeout, "a keep-alive connection is closed when it sends no next request for this long")
	fs.BoolVar(&cfg.trustProxy, "trust-proxy", false, "trust X-Forwarded-Proto from a TLS-terminating proxy in front (the dashboard's cookie is then Secure); set it only behind such a proxy")
	fs.IntVar(&cfg.journalSize, "journal-size", httpapi.DefaultJournalSize, fmt.Sprintf("requests each tenant's request journal keeps (GET /v1/sim/journal), at most %d; 0 switches the journal off", httpapi.MaxJournalSize))
	fs.IntVar(&cfg.journalBodyBytes, "journal-body-bytes", 0, fmt.Sprintf("`bytes` of each request's and answer's body the journal keeps, at most %d; 0 keeps none", httpapi.MaxJournalBodyBytes))
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the fault RNG")
	cfg.logFormat = "text"
	fs.Var(logFormat{&cfg.logFormat}, "log-format", "log `format`: text or json")
	fs.TextVar(&cfg.logLevel, "log-level", slog.LevelInfo, "log `level`: debug (also logs health probes), info (requests), warn or error")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	fs.StringVar(&cfg.pprofAddr, "pprof-addr", "", "serve Go's runtime profiles (/debug/pprof/: heap, CPU, goroutines) on this loopback `address`, such as 127.0.0.1:6060; off by default")
	fs.BoolVar(&cfg.checkInvariants, "check-invariants", false, "check cross-object invariants (Blazar's lease table, MCI aggregates) after every change; violations are logged and counted in /metrics")
	return fs
}

// usage is lifecyclesim --help: a synopsis, the commands, the flags with their environment
// twins, and examples.
func usage(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		fmt.Fprint(w, `lifecyclesim serves a simulated cloud API whose objects follow real state machines.

Usage:
  lifecyclesim [flags]                serve the API (default 127.0.0.1:7575)
  lifecyclesim healthcheck [--addr A] exit 0 if the simulator at A is ready (GET /readyz); for container healthchecks
  lifecyclesim check FILE...          load kind files as --kinds would and list every problem with its fix (exit 1 on any)
  lifecyclesim check --fixtures FILE  the same for a fixture file (--fixtures), with the kinds of --kinds FILE if any
  lifecyclesim render FILE...         print the Mermaid state and relations diagrams of the kinds of FILE
  lifecyclesim schema                 print the JSON Schema of kind files (for editors)
  lifecyclesim version                print the version

Client commands, for CI scripts (--endpoint URL or LIFECYCLE_ENDPOINT, --token T or
LIFECYCLE_TOKEN, --output table|json; lifecyclesim COMMAND --help for their flags):
  lifecyclesim reset                  remove the tenant's objects, fault rules and request journal
  lifecyclesim clock [advance 2h]     print the simulator's clock, or move it forward first
  lifecyclesim faults list|add|remove add (--mode fail --kind machine --action stop ...), list or remove fault rules
  lifecyclesim wait ready             wait until the simulator is ready (GET /readyz)
  lifecyclesim wait static COLL ID    wait until an object is static
  lifecyclesim journal                print the tenant's request journal (--status 4xx, --path ..., --limit N)
  lifecyclesim export [--out FILE]    print the tenant's state as one document (--db FILE: of a stopped simulator's store)
  lifecyclesim import FILE            import a document into an empty tenant (--db FILE: into a store)

Flags (each has an environment twin; a flag wins over its twin):
`)
		fs.VisitAll(func(f *flag.Flag) {
			name, use := flag.UnquoteUsage(f)
			line := "  --" + f.Name
			if name != "" {
				line += " " + name
			}
			fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(use, "\n", "\n    \t"))
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0 tokens" {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			switch f.Name {
			case "version":
			case "token":
				fmt.Fprintf(w, " [%sTOKENS]", envPrefix)
			default:
				fmt.Fprintf(w, " [%s]", envName(f.Name))
			}
			fmt.Fprintln(w)
		})
		fmt.Fprint(w, `
Examples:
  # local development: SQLite file in the current directory, transitions 10x faster
  lifecyclesim --time-scale 0.1

  # CI: in memory, fast, JSON logs, reachable from other containers with a token
  LIFECYCLESIM_DB=:memory: LIFECYCLESIM_TIME_SCALE=0.01 LIFECYCLESIM_LOG_FORMAT=json \
    lifecyclesim --addr 0.0.0.0:7575 --token ci=s3cret

  # objects in a PostgreSQL database (the schema is created on start)
  LIFECYCLESIM_POSTGRES='postgres://sim:s3cret@db.internal:5432/lifecyclesim' lifecyclesim

  # your own kinds next to the built-in ones
  lifecyclesim --kinds my-kinds.yaml

  # start from a known state: the objects of a fixture file, in their states
  lifecyclesim --token ci=s3cret --fixtures examples/fixtures/ci.yaml

The API is described at /openapi.json and browsable at /docs; /healthz, /readyz and /metrics
are open without a token.
`)
	}
}

// parseFlags reads the flags and their environment twins. A bad environment value is an error
// that names the variable (even when a flag overrides it), but never stops --help.
func parseFlags(args []string, getenv func(string) string) (*config, error) {
	cfg := &config{tokens: tokenFlags{}}
	fs := newFlagSet(cfg)
	fs.Usage = usage(fs)
	// The environment first, so the flags parsed next win over it; errors wait until --help
	// has had its chance.
	var envErrs []error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "token" || f.Name == "version" {
			return
		}
		name := envName(f.Name)
		v := getenv(name)
		if v == "" {
			return
		}
		if err := f.Value.Set(v); err != nil {
			msg := fmt.Sprintf("%s=%q is not valid for --%s", name, v, f.Name)
			if ex, ok := examples[f.Name]; ok {
				msg += ": want " + ex
			}
			envErrs = append(envErrs, errors.New(msg))
		}
	})
	envTokens := tokenFlags{}
	if v := getenv(envPrefix + "TOKENS"); v != "" {
		if err := envTokens.Set(v); err != nil {
			envErrs = append(envErrs, fmt.Errorf("%sTOKENS: %w", envPrefix, err))
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if len(envErrs) > 0 {
		return nil, errors.Join(envErrs...)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: lifecyclesim takes flags, or the command healthcheck, check, render, schema, version, reset, clock, faults, wait, journal, export or import (see --help)", fs.Arg(0))
	}
	// Like every other flag, --token wins over the environment: it replaces the tokens of
	// LIFECYCLESIM_TOKENS rather than adding to them.
	if len(cfg.tokens) == 0 {
		cfg.tokens = envTokens
	}
	if cfg.postgres != "" && cfg.db != defaultDB {
		return nil, fmt.Errorf("--db %s and --postgres choose two stores: give one", cfg.db)
	}
	if cfg.timeScale <= 0 {
		return nil, fmt.Errorf("--time-scale must be positive, got %v", cfg.timeScale)
	}
	if cfg.healAfter <= 0 {
		return nil, fmt.Errorf("--heal-after must be positive, got %v", cfg.healAfter)
	}
	if cfg.maxPendingPerAddr < 1 || cfg.headerTimeout <= 0 || cfg.bodyTimeout <= 0 || cfg.idleTimeout <= 0 {
		return nil, fmt.Errorf("--max-pending-per-addr, --header-timeout, --body-timeout and --idle-timeout must be positive, got %d, %v, %v and %v",
			cfg.maxPendingPerAddr, cfg.headerTimeout, cfg.bodyTimeout, cfg.idleTimeout)
	}
	if cfg.maxConns < 1 || cfg.maxObjects < 1 || cfg.maxWaits < 1 || cfg.maxStreams < 1 || cfg.streamLifetime <= 0 {
		return nil, fmt.Errorf("--max-conns, --max-objects, --max-waits, --max-streams and --stream-lifetime must be positive, got %d, %d, %d, %d and %v",
			cfg.maxConns, cfg.maxObjects, cfg.maxWaits, cfg.maxStreams, cfg.streamLifetime)
	}
	if cfg.journalSize < 0 || cfg.journalSize > httpapi.MaxJournalSize || cfg.journalBodyBytes < 0 || cfg.journalBodyBytes > httpapi.MaxJournalBodyBytes {
		return nil, fmt.Errorf("--journal-size must be from 0 (off) to %d and --journal-body-bytes from 0 to %d, got %d and %d",
			httpapi.MaxJournalSize, httpapi.MaxJournalBodyBytes, cfg.journalSize, cfg.journalBodyBytes)
	}
	if cfg.pprofAddr != "" && !loopback(cfg.pprofAddr) {
		return nil, fmt.Errorf("--pprof-addr %s is not a loopback address with a port: the profiles show the process's memory, so they are served on 127.0.0.1, [::1] or localhost only (write 127.0.0.1:6060)", cfg.pprofAddr)
	}
	return cfg, nil
}

// loopback reports whether a listen address names a loopback IP or localhost (not another
// host name, not every interface).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// servePprof serves net/http/pprof's handlers on ln until ctx ends.
func servePprof(ctx context.Context, ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	_ = srv.Serve(ln)
}

// journalSize is httpapi.ServerOptions.JournalSize for --journal-size, whose 0 is off.
func journalSize(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}

// newLogger builds the process logger from --log-format and --log-level.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openWarning says why an address is risky to serve without tokens, or "" when it is not:
// without tokens anyone who can reach the port controls the simulator.
func openWarning(addr net.Addr, tokens int) string {
	if tokens > 0 {
		return ""
	}
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return ""
	}
	return "the API is open (no --token) on " + addr.String() +
		", which is not a loopback address: anyone who can reach it can read, change and reset every object; set --token TENANT=TOKEN"
}

// metricsSources wires /metrics to the store: its counts, and the SQLite store's journal.
func metricsSources(st store.Store) httpapi.MetricsSources {
	src := httpapi.MetricsSources{Counts: st.Counts, Version: appVersion()}
	if sq, ok := st.(*sqlitestore.Store); ok {
		src.Journal = func() httpapi.JournalStats { return httpapi.JournalStats(sq.JournalStats()) }
	}
	return src
}

// openStore opens the store the flags choose: PostgreSQL (--postgres), memory (--db
// :memory:) or a SQLite file (--db), and says which for the log.
func openStore(ctx context.Context, cfg *config) (store.Store, string, error) {
	switch {
	case cfg.postgres != "":
		s, err := pgstore.Open(ctx, cfg.postgres)
		if err != nil {
			return nil, "", err
		}
		return s, s.String(), nil
	case cfg.db == ":memory:":
		return memstore.New(), "in-memory", nil
	default:
		s, err := sqlitestore.OpenWith(ctx, cfg.db, sqlitestore.Options{AcceptLogLoss: cfg.acceptLogLoss})
		if err != nil {
			return nil, "", err
		}
		return s, "sqlite " + cfg.db, nil
	}
}

// run serves until ctx ends or a signal arrives, or runs a command (healthcheck, version).
// ready, if set, is told the address listened on (tests listen on port 0).
func run(ctx context.Context, args []string, getenv func(string) string, ready func(net.Addr)) error {
	if len(args) > 0 {
		switch args[0] {
		case "healthcheck":
			return healthcheck(ctx, args[1:], getenv, os.Stdout)
		case "version":
			fmt.Println(versionString())
			return nil
		case "check":
			return check(args[1:], os.Stdout)
		case "render":
			return renderKinds(args[1:], os.Stdout)
		case "schema":
			_, err := os.Stdout.Write(kindref.KindsJSONSchema())
			return err
		}
		if isCtl(args[0]) {
			return ctl(ctx, args[0], args[1:], getenv, os.Stdout)
		}
	}
	cfg, err := parseFlags(args, getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if cfg.version {
		fmt.Println(versionString())
		return nil
	}
	log := newLogger(os.Stderr, cfg.logFormat, cfg.logLevel)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	reg := lifecycle.Builtin()
	if cfg.kinds != "" {
		warns, err := reg.LoadFiles(cfg.kinds)
		for _, w := range warns {
			log.Warn(w.Located("warning"))
		}
		if err != nil {
			return fmt.Errorf("%s: %w (lifecyclesim check %s lists every problem)", cfg.kinds, err, cfg.kinds)
		}
	}

	st, storeDesc, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if sq, ok := st.(*sqlitestore.Store); ok && sq.LogLoss() != "" {
		log.Warn("--accept-log-loss: opened the database without the damaged part of its log", "loss", sq.LogLoss())
	}

	var eng *engine.Engine
	src := metricsSources(st)
	src.Overdue = func(ctx context.Context) (int, error) { return eng.Overdue(ctx) } // scraped once serving, eng set by then
	metrics := httpapi.NewMetrics(src)
	eng = engine.New(st, reg, engine.NewSimClock(), engine.Options{
		TimeScale: cfg.timeScale, HealAfter: cfg.healAfter, Seed: cfg.seed,
		OnTransition: metrics.Transition, CheckInvariants: cfg.checkInvariants, OnViolation: metrics.Violation, OnIsolate: metrics.Isolation,
		OnFault:    metrics.Fault,
		Logger:     log,
		MaxObjects: cfg.maxObjects,
	})
	// A restart keeps the simulated time: transitions due after a clock advance stay due.
	if err := eng.RestoreClock(ctx); err != nil {
		return err
	}
	// Replicas sharing a database share its time scale, heal limit and fault rules.
	if err := eng.RestoreSettings(ctx); err != nil {
		return err
	}
	if cfg.fixtures != "" {
		scale, healAfter := eng.Config()
		if err := loadFixtures(ctx, cfg, eng, st, reg, log, engine.Options{
			TimeScale: scale, HealAfter: healAfter, Seed: cfg.seed, MaxObjects: cfg.maxObjects, Logger: log,
			OnTransition: metrics.Transition, OnFault: metrics.Fault,
		}); err != nil {
			return err
		}
	}
	conns := httpapi.NewConns(httpapi.ConnLimits{MaxConns: cfg.maxConns, MaxPendingPerAddr: cfg.maxPendingPerAddr,
		HeaderTimeout: cfg.headerTimeout, IdleTimeout: cfg.idleTimeout, ProxyAddrs: cfg.proxyAddrs})
	srv := conns.Server(httpapi.NewServer(eng, httpapi.ServerOptions{
		Tokens: cfg.tokens, AdminToken: cfg.adminToken, Metrics: metrics, Logger: log, Version: appVersion(),
		MaxConns: cfg.maxConns, MaxWaitsPerTenant: cfg.maxWaits, MaxStreamsPerTenant: cfg.maxStreams, StreamLifetime: cfg.streamLifetime,
		TrustProxy: cfg.trustProxy, BodyTimeout: cfg.bodyTimeout,
		JournalSize: journalSize(cfg.journalSize), JournalBodyBytes: cfg.journalBodyBytes,
	}))
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	if cfg.pprofAddr != "" {
		pln, err := net.Listen("tcp", cfg.pprofAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--pprof-addr: %w", err)
		}
		go servePprof(ctx, pln)
		log.Info("serving Go's runtime profiles", "addr", "http://"+pln.Addr().String()+"/debug/pprof/")
	}
	ln = conns.Listener(ln)
	auth := "open (single tenant)"
	if len(cfg.tokens) > 0 {
		auth = fmt.Sprintf("%d bearer tokens", len(cfg.tokens))
	}
	if ready != nil {
		ready(ln.Addr())
	}
	log.Info("lifecyclesim listening", "version", appVersion(), "addr", "http://"+ln.Addr().String(), "store", storeDesc,
		"kinds", len(reg.Names()), "time_scale", cfg.timeScale, "heal_after", cfg.healAfter.String(), "auth", auth)
	if w := openWarning(ln.Addr(), len(cfg.tokens)); w != "" {
		log.Warn(w)
	}

	workerCtx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		_ = eng.Run(workerCtx)
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		stopWorker()
		<-workerDone
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	eng.Drain()
	err = srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		// A client still sending or reading after the grace period is not waited for: every
		// accepted operation is already in the store.
		log.Warn("shutting down: closing connections still busy after the grace period", "grace", shutdownGrace.String())
		err = srv.Close()
	}
	// Stop the worker only after the last request: operations still in flight stay in the
	// store with their due times and resume at the next start.
	stopWorker()
	<-workerDone
	log.Info("stopped")
	return err
}

// loadFixtures creates the objects of --fixtures that the store does not hold yet, then moves
// the simulator's clock, once, to the latest time their histories reach (a lease that ended),
// so no object's events are in the simulator's future. opt are the serving engine's options.
func loadFixtures(ctx context.Context, cfg *config, eng *engine.Engine, st store.Store, reg *lifecycle.Registry, log *slog.Logger, opt engine.Options) error {
	f, err := fixture.ReadFile(cfg.fixtures)
	if err == nil {
		var tenants []string
		for _, t := range cfg.tokens {
			if !slices.Contains(tenants, t) {
				tenants = append(tenants, t)
			}
		}
		slices.Sort(tenants)
		var res *fixture.Result
		res, err = fixture.Load(ctx, st, reg, f, eng.Clock().Now(), fixture.Options{Engine: opt, Tenants: tenants, Logger: log})
		if err == nil {
			log.Info("fixtures loaded", "file", cfg.fixtures, "created", res.Created, "present", res.Present)
			advance := res.Clock.Sub(eng.Clock().Now())
			if advance > 0 {
				if err := eng.AdvanceClock(ctx, advance); err != nil {
					return fmt.Errorf("--fixtures %s: move the clock to %s: %w", cfg.fixtures, res.Clock.Format(time.RFC3339), err)
				}
				log.Info("fixtures: moved the clock forward to the latest time the fixtures need", "advance", advance.Round(time.Millisecond).String(),
					"now", eng.Clock().Now().Format(time.RFC3339))
			}
			// Fault rules the fixtures used are gone: read the shared ones again.
			return eng.RestoreSettings(ctx)
		}
	}
	var ps fixture.Problems
	if errors.As(err, &ps) {
		return fmt.Errorf("--fixtures %s does not load:\n%w\n(lifecyclesim check --fixtures %s checks the file without starting)", cfg.fixtures, err, cfg.fixtures)
	}
	return fmt.Errorf("--fixtures %s: %w", cfg.fixtures, err)
}
