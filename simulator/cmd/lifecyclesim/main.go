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
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator"
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
	timeScale float64
	kinds     string
	tokens    tokenFlags
	healAfter time.Duration
	seed      uint64
	// checkInvariants checks the kinds' cross-object invariants after every commit.
	checkInvariants bool
}

func parseFlags(args []string, getenv func(string) string) (*config, error) {
	cfg := &config{tokens: tokenFlags{}}
	fs := flag.NewFlagSet("lifecyclesim", flag.ContinueOnError)
	env := func(name, def string) string {
		if v := getenv("LIFECYCLESIM_" + name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&cfg.addr, "addr", env("ADDR", "127.0.0.1:7575"), "listen address (LIFECYCLESIM_ADDR)")
	fs.StringVar(&cfg.db, "db", env("DB", "lifecyclesim.db"), "SQLite file, or :memory: for an in-memory store (LIFECYCLESIM_DB)")
	scale, err := strconv.ParseFloat(env("TIME_SCALE", "1"), 64)
	if err != nil {
		return nil, fmt.Errorf("LIFECYCLESIM_TIME_SCALE: %w", err)
	}
	fs.Float64Var(&cfg.timeScale, "time-scale", scale, "multiplies every transition duration; 0.01 is 100x faster (LIFECYCLESIM_TIME_SCALE)")
	fs.StringVar(&cfg.kinds, "kinds", env("KINDS", ""), "YAML file of extra user-defined kinds (LIFECYCLESIM_KINDS)")
	fs.Var(cfg.tokens, "token", "TENANT=TOKEN, repeatable; with none the API is open on one tenant (LIFECYCLESIM_TOKENS, comma-separated)")
	heal, err := time.ParseDuration(env("HEAL_AFTER", "10m"))
	if err != nil {
		return nil, fmt.Errorf("LIFECYCLESIM_HEAL_AFTER: %w", err)
	}
	fs.DurationVar(&cfg.healAfter, "heal-after", heal, "how long a transition may be stuck before self-healing repairs it (LIFECYCLESIM_HEAL_AFTER)")
	seed, err := strconv.ParseUint(env("SEED", "1"), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("LIFECYCLESIM_SEED: %w", err)
	}
	fs.Uint64Var(&cfg.seed, "seed", seed, "seed of the fault RNG (LIFECYCLESIM_SEED)")
	check, err := strconv.ParseBool(env("CHECK_INVARIANTS", "false"))
	if err != nil {
		return nil, fmt.Errorf("LIFECYCLESIM_CHECK_INVARIANTS: want true or false: %w", err)
	}
	fs.BoolVar(&cfg.checkInvariants, "check-invariants", check, "check cross-object invariants (Blazar's lease table, MCI aggregates) after every change; violations are logged and counted in /metrics (LIFECYCLESIM_CHECK_INVARIANTS)")
	envTokens := tokenFlags{}
	if v := getenv("LIFECYCLESIM_TOKENS"); v != "" {
		if err := envTokens.Set(v); err != nil {
			return nil, fmt.Errorf("LIFECYCLESIM_TOKENS: %w", err)
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: lifecyclesim takes only flags", fs.Arg(0))
	}
	// Like every other flag, --token wins over the environment: it replaces the tokens of
	// LIFECYCLESIM_TOKENS rather than adding to them.
	if len(cfg.tokens) == 0 {
		cfg.tokens = envTokens
	}
	if cfg.timeScale <= 0 {
		return nil, fmt.Errorf("--time-scale must be positive, got %v", cfg.timeScale)
	}
	if cfg.healAfter <= 0 {
		return nil, fmt.Errorf("--heal-after must be positive, got %v", cfg.healAfter)
	}
	return cfg, nil
}

// run serves until ctx ends or a signal arrives. ready, if set, is told the address listened
// on (tests listen on port 0).
func run(ctx context.Context, args []string, getenv func(string) string, ready func(net.Addr)) error {
	cfg, err := parseFlags(args, getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	reg := lifecycle.Builtin()
	if cfg.kinds != "" {
		kinds, err := lifecycle.LoadFile(cfg.kinds)
		if err != nil {
			return err
		}
		if err := reg.Add(kinds...); err != nil {
			return fmt.Errorf("%s: %w", cfg.kinds, err)
		}
	}

	var store simulator.Store
	storeDesc := "in-memory"
	if cfg.db == ":memory:" {
		store = simulator.NewMemStore()
	} else {
		s, err := simulator.OpenSQLite(ctx, cfg.db)
		if err != nil {
			return err
		}
		store, storeDesc = s, "sqlite "+cfg.db
	}
	defer store.Close()

	metrics := simulator.NewMetrics(store)
	engine := simulator.NewEngine(store, reg, simulator.NewSimClock(), simulator.Options{
		TimeScale: cfg.timeScale, HealAfter: cfg.healAfter, Seed: cfg.seed,
		OnTransition: metrics.Transition, CheckInvariants: cfg.checkInvariants, OnViolation: metrics.Violation,
		Logf: func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) },
	})
	srv := &http.Server{
		Handler:           simulator.NewServer(engine, simulator.ServerOptions{Tokens: cfg.tokens, Metrics: metrics}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	auth := "open (single tenant)"
	if len(cfg.tokens) > 0 {
		auth = fmt.Sprintf("%d bearer tokens", len(cfg.tokens))
	}
	if ready != nil {
		ready(ln.Addr())
	}
	log.Info("lifecyclesim listening", "addr", "http://"+ln.Addr().String(), "store", storeDesc,
		"kinds", len(reg.Names()), "time_scale", cfg.timeScale, "heal_after", cfg.healAfter, "auth", auth)

	workerCtx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		_ = engine.Run(workerCtx)
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
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	engine.Drain()
	err = srv.Shutdown(shutdownCtx)
	// Stop the worker only after the last request: operations still in flight stay in the
	// store with their due times and resume at the next start.
	stopWorker()
	<-workerDone
	log.Info("stopped")
	return err
}
