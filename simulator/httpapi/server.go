package httpapi

import (
	"cmp"
	_ "embed"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
)

//go:embed openapi.json
var openAPI []byte

// Longest long-poll a client may ask for.
const maxWait = 60 * time.Second

// ServerOptions configure the HTTP API.
type ServerOptions struct {
	// Tokens maps bearer tokens to tenants. With none, the API is open to one tenant.
	Tokens map[string]string
	// Metrics, if set, are served at /metrics.
	Metrics *Metrics
	// Logger, if set, logs every request (health probes at debug level).
	Logger *slog.Logger
	// Version is reported by /healthz and /readyz.
	Version string
	// AdminToken guards the simulator-wide controls (clock advance, time scale, heal_after)
	// when Tokens are configured; without it those controls are refused. With no Tokens the
	// API is open and so are they.
	AdminToken string
	// RequestDeadline bounds reading a request and writing its answer (30 s when 0); a
	// long-poll gets its longest timeout plus a margin instead.
	RequestDeadline time.Duration
	// BodyTimeout bounds reading a request's body (DefaultBodyTimeout when 0), within the
	// request's deadline.
	BodyTimeout time.Duration
	// MaxWaitsPerTenant and MaxStreamsPerTenant bound a tenant's open long-polls and
	// dashboard event streams (DefaultMaxWaitsPerTenant, DefaultMaxStreamsPerTenant when 0);
	// MaxConns is the server's connection cap (DefaultMaxConns when 0), of which held
	// requests together leave ReservedConns free. StreamLifetime ends a dashboard stream
	// (DefaultStreamLifetime when 0; the browser resumes).
	MaxWaitsPerTenant, MaxStreamsPerTenant, MaxConns int
	StreamLifetime                                   time.Duration
	// TrustProxy trusts X-Forwarded-Proto from a TLS-terminating proxy in front: the
	// dashboard's session cookie is then Secure. Set it only behind such a proxy.
	TrustProxy bool
	// JournalSize is how many requests each tenant's request journal keeps
	// (DefaultJournalSize when 0, at most MaxJournalSize; negative switches the journal off).
	// JournalBodyBytes keeps that much of each request's and answer's body (none when 0, at
	// most MaxJournalBodyBytes).
	JournalSize, JournalBodyBytes int
}

// Server is the HTTP API over an engine.
type Server struct {
	engine   *engine.Engine
	echo     *echo.Echo
	tokens   map[string]string
	admin    string
	version  string
	deadline time.Duration
	// bodyTimeout bounds reading a body.
	bodyTimeout time.Duration
	holds       *holds
	lifetime    time.Duration
	proxied     bool
	// journal keeps each tenant's recent requests (nil when switched off).
	journal *journal
}

// NewServer builds the API's routes.
func NewServer(eng *engine.Engine, opt ServerOptions) *Server {
	s := &Server{engine: eng, echo: echo.New(), tokens: opt.Tokens, admin: opt.AdminToken, version: opt.Version,
		deadline: cmp.Or(opt.RequestDeadline, requestDeadline), bodyTimeout: cmp.Or(opt.BodyTimeout, DefaultBodyTimeout),
		holds: newHolds(cmp.Or(opt.MaxWaitsPerTenant, DefaultMaxWaitsPerTenant), cmp.Or(opt.MaxStreamsPerTenant, DefaultMaxStreamsPerTenant),
			cmp.Or(opt.MaxConns, DefaultMaxConns)),
		lifetime: cmp.Or(opt.StreamLifetime, DefaultStreamLifetime), proxied: opt.TrustProxy}
	if opt.JournalSize >= 0 {
		s.journal = newJournal(min(cmp.Or(opt.JournalSize, DefaultJournalSize), MaxJournalSize),
			min(max(opt.JournalBodyBytes, 0), MaxJournalBodyBytes), eng.Clock().Now)
	}
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	// Before routing, so unknown paths and 405s close too.
	e.Pre(closeChunked)
	e.Use(withRequestID)
	// Date is the simulator's clock, not the host's: clients measure how long an operation
	// has been running (or overdue) against it, also after a clock advance.
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Response().Header().Set("Date", eng.Clock().Now().UTC().Format(http.TimeFormat))
			return next(c)
		}
	})
	if opt.Metrics != nil {
		e.Use(opt.Metrics.middleware)
		e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(opt.Metrics.Registry, promhttp.HandlerOpts{})))
	}
	if opt.Logger != nil {
		e.Use(requestLog(opt.Logger))
	}
	if s.journal != nil {
		e.Use(s.journaled)
	}
	// Inside the metrics and the log, so both see what these make of a request.
	e.Use(canceled, recoverPanic(opt.Metrics, opt.Logger), s.limitRequest)
	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, health{Status: "ok", Version: s.version}) })
	e.GET("/readyz", s.readyz)
	e.GET("/openapi.json", func(c echo.Context) error { return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPI) })
	// The API reference; the dashboard is at "/".
	e.GET("/docs", s.docs)
	s.mountDashboard()
	s.mountDialects()

	// Middleware goes on each route, not on the groups: echo answers a group's unknown paths
	// and methods from catch-all routes, which would turn 405 into 404.
	v1 := e.Group("/v1")
	v1.GET("/kinds", s.listKinds, s.readAuth)
	v1.GET("/kinds/:name", s.getKind, s.readAuth)

	sim := v1.Group("/sim")
	sim.GET("/faults", s.listFaults, s.auth)
	sim.POST("/faults", s.addFault, s.auth)
	sim.DELETE("/faults/:id", s.deleteFault, s.auth)
	sim.POST("/reset", s.reset, s.auth)
	sim.GET("/journal", s.getJournal, s.auth)
	sim.GET("/export", s.exportState, s.stateAuth)
	sim.POST("/import", s.importState, s.stateAuth)
	sim.GET("/clock", s.getClock, s.readAuth)
	sim.POST("/clock", s.advanceClock, s.adminAuth)
	sim.GET("/config", s.getConfig, s.readAuth)
	sim.PUT("/config", s.putConfig, s.adminAuth)
	sim.POST("/system/:collection/:id/:action", s.runSystem, s.auth)

	objs := v1.Group("/:collection")
	mw := []echo.MiddlewareFunc{s.auth, s.limitWaits, s.httpFaults}
	objs.POST("", s.create, mw...)
	objs.GET("", s.list, mw...)
	objs.GET("/:id", s.get, mw...)
	objs.PATCH("/:id", s.patch, mw...)
	objs.DELETE("/:id", s.delete, mw...)
	objs.POST("/:id/actions/:action", s.act, mw...)
	objs.GET("/:id/events", s.events, mw...)
	if opt.Metrics != nil {
		opt.Metrics.setRoutes(s.Routes())
		opt.Metrics.setLongPolls(eng.LongPolls)
		opt.Metrics.held.Store(&heldView{tenants: s.tenants(), holds: s.holds})
	}
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

// Routes lists the registered routes as "METHOD path" (the OpenAPI test checks them).
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}
