// Package simtest starts an in-process lifecyclesim for Go tests: the engine and its worker,
// the HTTP API on an httptest server, and a client, in one call, stopped by t.Cleanup. It is
// what this repository's own tests use (the provider's acceptance tests, the dashboard's
// browser tests, the reliability suite, the simulator's harness), and it is public so that a
// provider or module author can test against lifecycles the same way, as moto's
// ThreadedMotoServer serves AWS:
//
//	sim := simtest.Start(t, simtest.WithTimeScale(0.01))
//	m, err := sim.Client.Create(ctx, "machines", client.CreateRequest{...})
//
// By default the simulator is open (no tokens), keeps its objects in memory, serves the
// built-in kinds, and runs transitions 100× faster than their real durations on the wall
// clock. Options change each of these.
//
// It imports every layer of the simulator (engine, store, httpapi) and the client; nothing
// in the simulator imports it.
package simtest

import (
	"cmp"
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
)

// DefaultTimeScale is the time scale of a simulator started without WithTimeScale: a phase
// that takes 2 s in the kind's spec takes 20 ms.
const DefaultTimeScale = 0.01

// Sim is a running in-process simulator.
type Sim struct {
	// URL is the API's base URL (http://127.0.0.1:port): a provider's endpoint.
	URL string
	// Client is a client of the API, sending the lexically first token when there are tokens.
	Client *client.Client
	// Engine, Server and Store are the simulator's layers, for tests that reach past the API
	// (to move the clock, say).
	Engine *engine.Engine
	Server *httpapi.Server
	Store  store.Store
	// Metrics are the server's Prometheus metrics (nil without WithMetrics).
	Metrics *httpapi.Metrics
	// HTTP is the httptest server the API is served on.
	HTTP *httptest.Server
	// Conns guards the connections (with WithHTTPServer or WithConnLimits; else nil).
	Conns *httpapi.Conns

	clock  engine.Clock
	worker bool
}

// Option configures Start.
type Option func(*config)

type config struct {
	store      store.Store
	reg        *lifecycle.Registry
	kinds      []*lifecycle.Kind
	clock      engine.Clock
	noWorker   bool
	engine     engine.Options
	server     httpapi.ServerOptions
	metrics    bool
	middleware func(http.Handler) http.Handler
	httpServer bool
	maxConns   int
	connLimits httpapi.ConnLimits
}

// WithStore keeps the objects in s instead of a new in-memory store. The caller closes it.
func WithStore(s store.Store) Option { return func(c *config) { c.store = s } }

// WithTimeScale multiplies every phase duration by f (1 runs them in real time).
func WithTimeScale(f float64) Option { return func(c *config) { c.engine.TimeScale = f } }

// WithHealAfter sets how long a phase may hang before self-healing repairs it.
func WithHealAfter(d time.Duration) Option { return func(c *config) { c.engine.HealAfter = d } }

// WithSeed seeds the fault rules' random draws, so a run can be repeated.
func WithSeed(seed uint64) Option { return func(c *config) { c.engine.Seed = seed } }

// WithKinds serves user-defined kinds besides the built-in ones.
func WithKinds(kinds ...*lifecycle.Kind) Option {
	return func(c *config) { c.kinds = append(c.kinds, kinds...) }
}

// WithRegistry serves the kinds of reg instead of the built-in ones.
func WithRegistry(reg *lifecycle.Registry) Option { return func(c *config) { c.reg = reg } }

// WithTokens makes the API require bearer tokens (token → tenant); Sim.Client sends the
// lexically first one.
func WithTokens(tokens map[string]string) Option { return func(c *config) { c.server.Tokens = tokens } }

// WithAdminToken sets the token that may change the simulator-wide controls (the clock, the
// time scale) when there are tokens.
func WithAdminToken(token string) Option { return func(c *config) { c.server.AdminToken = token } }

// WithClock runs the engine on clock (an engine.ManualClock, say) instead of the wall clock.
func WithClock(clock engine.Clock) Option { return func(c *config) { c.clock = clock } }

// WithoutWorker starts no worker: nothing moves until the test calls Sim.Advance (or
// Engine.Tick). With a manual clock this makes a test step through phases exactly.
func WithoutWorker() Option { return func(c *config) { c.noWorker = true } }

// WithMetrics serves Prometheus metrics at /metrics (Sim.Metrics).
func WithMetrics() Option { return func(c *config) { c.metrics = true } }

// WithMiddleware wraps the API's handler (to watch or alter requests).
func WithMiddleware(mw func(http.Handler) http.Handler) Option {
	return func(c *config) { c.middleware = mw }
}

// WithEngineOptions edits the engine's options after the other options are applied (for
// the rarer ones: quotas, invariant checks, a logger).
func WithEngineOptions(edit func(*engine.Options)) Option {
	return func(c *config) { edit(&c.engine) }
}

// WithServerOptions edits the HTTP API's options after the other options are applied.
func WithServerOptions(edit func(*httpapi.ServerOptions)) Option {
	return func(c *config) { edit(&c.server) }
}

// WithConnLimits serves the API as WithHTTPServer does, under these connection limits.
func WithConnLimits(l httpapi.ConnLimits) Option {
	return func(c *config) {
		c.httpServer, c.connLimits, c.maxConns = true, l, cmp.Or(l.MaxConns, httpapi.DefaultMaxConns)
	}
}

// WithHTTPServer serves the API as the binary does (httpapi.Conns: its timeouts and
// connection bounds), accepting at most maxConns connections at once when maxConns > 0.
func WithHTTPServer(maxConns int) Option {
	return func(c *config) { c.httpServer, c.maxConns = true, maxConns }
}

// Start starts a simulator and stops it when the test ends: long-polls are answered, the
// server closed, the worker stopped.
func Start(t testing.TB, opts ...Option) *Sim {
	t.Helper()
	c := config{engine: engine.Options{TimeScale: DefaultTimeScale}}
	for _, o := range opts {
		o(&c)
	}
	s := &Sim{Store: c.store, clock: c.clock, worker: !c.noWorker}
	if s.Store == nil {
		s.Store = memstore.New()
	}
	reg := c.reg
	if reg == nil {
		reg = lifecycle.Builtin()
	}
	if len(c.kinds) > 0 {
		if err := reg.Add(c.kinds...); err != nil {
			t.Fatalf("simtest: adding kinds: %v", err)
		}
	}
	if s.clock == nil {
		s.clock = engine.NewSimClock()
	}
	if c.metrics {
		s.Metrics = httpapi.NewMetrics(httpapi.MetricsSources{Counts: s.Store.Counts, Version: "simtest",
			Overdue: func(ctx context.Context) (int, error) { return s.Engine.Overdue(ctx) }})
		c.server.Metrics = s.Metrics
		c.engine.OnTransition, c.engine.OnViolation, c.engine.OnIsolate = s.Metrics.Transition, s.Metrics.Violation, s.Metrics.Isolation
		c.engine.OnFault = s.Metrics.Fault
	}
	s.Engine = engine.New(s.Store, reg, s.clock, c.engine)
	if err := s.Engine.RestoreSettings(context.Background()); err != nil { // a store replicas share
		t.Fatalf("simtest: %v", err)
	}
	s.Server = httpapi.NewServer(s.Engine, c.server)
	var h http.Handler = s.Server
	if c.middleware != nil {
		h = c.middleware(h)
	}
	s.HTTP = httptest.NewUnstartedServer(h)
	if c.httpServer {
		limits := c.connLimits
		limits.MaxConns = cmp.Or(limits.MaxConns, c.maxConns)
		conns := httpapi.NewConns(limits)
		s.Conns = conns
		s.HTTP.Config = conns.Server(h)
		if limits.MaxConns > 0 {
			s.HTTP.Listener = conns.Listener(s.HTTP.Listener)
		}
	}
	s.HTTP.Start()
	s.URL = s.HTTP.URL
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if s.worker {
		go func() {
			defer close(done)
			_ = s.Engine.Run(ctx)
		}()
	} else {
		go func() {
			defer close(done)
			s.Engine.Follow(ctx) // over a store replicas share: their changes wake long-polls
		}()
	}
	t.Cleanup(func() {
		s.Engine.Drain() // answers long-polls and ends the dashboard's streams, so Close does not wait on them
		s.HTTP.Close()
		cancel()
		<-done
	})
	var token string
	if len(c.server.Tokens) > 0 {
		token = slices.Sorted(maps.Keys(c.server.Tokens))[0]
	}
	cl, err := client.New(client.Config{Endpoint: s.URL, Token: token})
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	s.Client = cl
	return s
}

// Clock is the engine's clock.
func (s *Sim) Clock() engine.Clock { return s.clock }

// Advance moves the simulated clock forward by d, and without a worker runs the engine over
// what is then due. Time-driven kinds (a Blazar lease's start and end) move with it.
func (s *Sim) Advance(t testing.TB, d time.Duration) {
	t.Helper()
	clock, ok := s.clock.(interface{ Advance(time.Duration) })
	if !ok {
		t.Fatalf("simtest: the clock %T cannot be advanced", s.clock)
	}
	clock.Advance(d)
	if !s.worker {
		if err := s.Engine.Tick(context.Background()); err != nil {
			t.Fatalf("simtest: Tick = %v", err)
		}
		return
	}
	s.Engine.Kick()
}
