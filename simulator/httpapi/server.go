package httpapi

import (
	"cmp"
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
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
}

// NewServer builds the API's routes.
func NewServer(eng *engine.Engine, opt ServerOptions) *Server {
	s := &Server{engine: eng, echo: echo.New(), tokens: opt.Tokens, admin: opt.AdminToken, version: opt.Version,
		deadline: cmp.Or(opt.RequestDeadline, requestDeadline), bodyTimeout: cmp.Or(opt.BodyTimeout, DefaultBodyTimeout),
		holds: newHolds(cmp.Or(opt.MaxWaitsPerTenant, DefaultMaxWaitsPerTenant), cmp.Or(opt.MaxStreamsPerTenant, DefaultMaxStreamsPerTenant),
			cmp.Or(opt.MaxConns, DefaultMaxConns)),
		lifetime: cmp.Or(opt.StreamLifetime, DefaultStreamLifetime), proxied: opt.TrustProxy}
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
	// Inside the metrics and the log, so both see what these make of a request.
	e.Use(canceled, recoverPanic(opt.Metrics, opt.Logger), s.limitRequest)
	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, health{Status: "ok", Version: s.version}) })
	e.GET("/readyz", s.readyz)
	e.GET("/openapi.json", func(c echo.Context) error { return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPI) })
	// The API reference; the dashboard is at "/".
	e.GET("/docs", s.docs)
	s.mountDashboard()

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

// tenantKey is the echo context key of the caller's tenant.
const tenantKey = "tenant"

func tenant(c echo.Context) string {
	t, _ := c.Get(tenantKey).(string)
	return t
}

// auth binds the bearer token to its tenant. With no tokens configured every caller is the
// one open tenant.
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.tokens) == 0 {
			c.Set(tenantKey, "")
			return next(c)
		}
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || tok == "" {
			return errorf(wire.CodeUnauthorized, "missing bearer token: send Authorization: Bearer <token>")
		}
		for t, ten := range s.tokens {
			if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
				c.Set(tenantKey, ten)
				return next(c)
			}
		}
		if s.isAdmin(tok) {
			return errorf(wire.CodeForbidden,
				"the admin token is for the simulator-wide controls (the clock, the time scale, heal_after); objects and fault rules belong to tenants: use a tenant's token")
		}
		return errorf(wire.CodeUnauthorized, "unknown token: check the token you configured")
	}
}

// isAdmin reports whether tok is the admin token.
func (s *Server) isAdmin(tok string) bool {
	return s.admin != "" && subtle.ConstantTimeCompare([]byte(s.admin), []byte(tok)) == 1
}

// readAuth guards a read of what is simulator-wide (the clock, the config, the kinds): a
// tenant's token or the admin token (which changes the settings, and whose dashboard session
// renders the kinds).
func (s *Server) readAuth(next echo.HandlerFunc) echo.HandlerFunc {
	authed := s.auth(next)
	return func(c echo.Context) error {
		if tok, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer "); ok && len(s.tokens) > 0 && s.isAdmin(tok) {
			c.Set(tenantKey, "")
			return next(c)
		}
		return authed(c)
	}
}

// adminAuth guards a simulator-wide control: with tokens configured, only the admin token
// may move every tenant's time.
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.tokens) == 0 {
			c.Set(tenantKey, "")
			return next(c)
		}
		tok, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
		if !ok || tok == "" {
			return errorf(wire.CodeUnauthorized, "missing bearer token: send Authorization: Bearer <admin token>")
		}
		if s.admin != "" && subtle.ConstantTimeCompare([]byte(s.admin), []byte(tok)) == 1 {
			return next(c)
		}
		for t := range s.tokens {
			if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
				return errorf(wire.CodeForbidden,
					"the clock, time scale and heal_after are simulator-wide: changing them needs the admin token (lifecyclesim --admin-token), not a tenant's")
			}
		}
		return errorf(wire.CodeUnauthorized, "unknown token: check the token you configured")
	}
}

// httpFaults answers matching object requests with an injected HTTP error.
func (s *Server) httpFaults(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		k, ok := s.engine.Registry().ByCollection(c.Param("collection"))
		if !ok {
			return next(c)
		}
		if r := s.engine.Faults().Match(c.Request().Context(), wire.FaultHTTPError, tenant(c), k.Name, c.Param("action"), ""); r != nil {
			msg := r.Message
			if msg == "" {
				msg = "injected HTTP error (fault " + r.ID + ")"
			}
			e := &wire.Error{Status: r.HTTPStatus, Code: wire.Code(r.Code), Message: msg}
			if r.HTTPStatus == http.StatusTooManyRequests || r.HTTPStatus == http.StatusServiceUnavailable {
				e.RetryAfter = time.Second
			}
			return e
		}
		return next(c)
	}
}

// errorf is an API error with a wire code, made by the HTTP layer itself (auth, limits,
// malformed requests).
func errorf(code wire.Code, format string, args ...any) *wire.Error {
	return wire.Errorf(code, format, args...)
}

// answerOf is the API error a handler's error is answered with, and its status: the one edge
// where errors are mapped. Injected HTTP errors keep their status, echo's own errors (unknown
// route, wrong method) are mapped, and the rest go through engine.AsError and the one
// code→status map.
func answerOf(err error) (*wire.Error, int) {
	var ae *wire.Error
	if errors.As(err, &ae) && ae.Status != 0 {
		return ae, ae.Status
	}
	if errors.Is(err, context.Canceled) {
		return &wire.Error{Code: wire.CodeCanceled, Message: "the client went away before the answer"}, wire.StatusClientClosedRequest
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if he.Code == http.StatusMethodNotAllowed {
			return &wire.Error{Code: wire.CodeInvalid, Message: "method not allowed here; /openapi.json lists the API"}, he.Code
		}
		err = &wire.Error{Code: wire.CodeOf(he.Code), Message: fmt.Sprint(he.Message)}
	}
	ae = engine.AsError(err)
	return ae, wire.StatusOf(ae.Code)
}

// handleError writes every error as the API's envelope. echo's default handler does not
// unwrap wrapped errors, so this one maps them itself.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae, status := answerOf(err)
	if ae.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ae.RetryAfter.Seconds()))))
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, body(ae, status, requestID(c)))
}

// body is the envelope an error is answered in. A server error's names its request, whose log
// lines hold the detail; its message is one the engine or this layer wrote (the cause of an
// internal error or an outage, in Err, is never answered).
func body(e *wire.Error, status int, id string) wire.ErrorBody {
	b := wire.ErrorBody{Error: wire.ErrorDetail{Code: string(e.Code), Message: e.Message}}
	if e.Details != nil {
		b.Error.Details, _ = json.Marshal(e.Details)
	}
	if status >= 500 && id != "" {
		b.Error.RequestID = id
		if e.Status == 0 { // an injected HTTP error keeps the message its rule gave
			b.Error.Message += " (request ID " + id + " in the server's log)"
		}
	}
	return b
}

func (s *Server) kind(c echo.Context) (*lifecycle.Kind, error) {
	coll := c.Param("collection")
	k, ok := s.engine.Registry().ByCollection(coll)
	if !ok {
		return nil, errorf(wire.CodeNotFound, "no collection %q; GET /v1/kinds lists them", coll)
	}
	return k, nil
}

// bind decodes a JSON body strictly; an empty body leaves v as it is (a request known to
// have none, such as most actions, makes no decoder).
func bind(c echo.Context, v any) error {
	if c.Request().ContentLength == 0 {
		return nil
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return errorf(wire.CodeTooLarge, "the request body is over the limit of %d bytes", mb.Limit)
		}
		return errorf(wire.CodeInvalid, "invalid JSON body: %v", err)
	}
	return nil
}

// wire turns a stored object into its API shape.
func (s *Server) wire(o *engine.Object) wire.Object {
	w := wire.Object{
		ID: o.ID, Kind: o.Kind, Name: o.Name, ParentID: o.ParentID, State: o.State,
		Spec: o.Spec, Defaulted: o.Defaulted, Status: o.Status, Version: o.Version, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
	}
	if k, err := s.engine.Registry().Kind(o.Kind); err == nil {
		w.Static = o.Op == nil && k.IsStatic(o.State)
	}
	if o.Op != nil {
		w.Operation = &wire.Operation{ID: o.Op.ID, Action: o.Op.Action, From: o.Op.From, Phase: o.State,
			StartedAt: o.Op.StartedAt, PhaseStartedAt: o.Op.PhaseStarted, Error: o.Op.Error}
		if !o.Op.Hung {
			w.Operation.DueAt = o.Due
		}
	}
	return w
}

func (s *Server) listKinds(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"items": s.engine.Registry().Kinds()})
}

func (s *Server) getKind(c echo.Context) error {
	k, err := s.engine.Registry().Kind(c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, k)
}

func (s *Server) create(c echo.Context) error {
	k, err := s.kind(c)
	if err != nil {
		return err
	}
	wait, err := waitParams(c)
	if err != nil {
		return err
	}
	var req wire.CreateRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	o, err := s.engine.Create(c.Request().Context(), tenant(c), k, req, c.Request().Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/"+k.Collection+"/"+o.ID)
	status := http.StatusAccepted
	if o.Op == nil {
		status = http.StatusCreated
	}
	return s.answer(c, status, k, o, wait)
}

// waitParams reads ?wait=static&timeout=...: whether the request waits for the object to be
// static, and how long at most (25 s unless told, capped at maxWait).
func waitParams(c echo.Context) (w waiting, err error) {
	switch wait := c.QueryParam("wait"); wait {
	case "":
		return w, nil
	case "static":
	default:
		return w, errorf(wire.CodeInvalid, "wait=%q is not supported; use wait=static", wait)
	}
	w = waiting{on: true, timeout: 25 * time.Second}
	if t := c.QueryParam("timeout"); t != "" {
		if w.timeout, err = time.ParseDuration(t); err != nil || w.timeout < 0 {
			return waiting{}, errorf(wire.CodeInvalid, "timeout %q is not a duration such as 25s", t)
		}
	}
	w.timeout = min(w.timeout, maxWait)
	return w, nil
}

// waiting is a request's ?wait=static.
type waiting struct {
	on      bool
	timeout time.Duration
}

// answer writes the object a create, an action or a deletion started. A request sent with
// ?wait=static is answered as a stream (application/x-ndjson): the object at once, so the
// client knows its ID and operation before any wait, and, when it was not static yet, a
// second line once it is static or the wait's timeout has passed: the object again, or the
// envelope of the error that ended the wait (not_found once a destroy removed it). One
// request then does what a request and a long-poll do.
func (s *Server) answer(c echo.Context, status int, k *lifecycle.Kind, o *engine.Object, wait waiting) error {
	if !wait.on {
		return c.JSON(status, s.wire(o))
	}
	holdOpen(c, wait.timeout)
	r := c.Response()
	r.Header().Set(echo.HeaderContentType, wire.NDJSON)
	r.WriteHeader(status)
	enc := json.NewEncoder(r)
	if err := enc.Encode(s.wire(o)); err != nil || o.Op == nil {
		return nil //nolint:nilerr // the status is sent: a client gone is only logged by the writer
	}
	_ = http.NewResponseController(r.Writer).Flush() // a writer that cannot flush sends both lines at the end
	if line, ok := s.landing(c, k, o.ID, wait.timeout); ok {
		_ = enc.Encode(line)
	}
	return nil
}

// landing is the second line of a stream answer: the object once static (or at the timeout),
// or the envelope of the error that ended the wait; ok is false when the client has gone.
func (s *Server) landing(c echo.Context, k *lifecycle.Kind, id string, timeout time.Duration) (line any, ok bool) {
	ctx := c.Request().Context()
	last, err := s.engine.Wait(ctx, tenant(c), k, id, timeout)
	switch {
	case ctx.Err() != nil: // nobody reads on
		return nil, false
	case err != nil:
		ae, st := answerOf(err)
		return body(ae, st, requestID(c)), true
	}
	return s.wire(last), true
}

func (s *Server) get(c echo.Context) error {
	k, err := s.kind(c)
	if err != nil {
		return err
	}
	wait, err := waitParams(c)
	if err != nil {
		return err
	}
	ctx, id := c.Request().Context(), c.Param("id")
	var o *engine.Object
	if wait.on {
		holdOpen(c, wait.timeout)
		o, err = s.engine.Wait(ctx, tenant(c), k, id, wait.timeout)
	} else {
		o, err = s.engine.Get(ctx, tenant(c), k, id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.wire(o))
}

func (s *Server) list(c echo.Context) error {
	k, err := s.kind(c)
	if err != nil {
		return err
	}
	limit := 100
	if l := c.QueryParam("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > wire.MaxPage {
			return errorf(wire.CodeInvalid, "limit %q must be a number from 1 to %d", l, wire.MaxPage)
		}
	}
	f := engine.ListOptions{Kind: k.Name, ParentID: c.QueryParam("parent_id"), State: c.QueryParam("state"), After: c.QueryParam("after"), Limit: limit}
	// One more than the page: a cursor is given only when more follow, so a client reading
	// every page does not ask for an empty last one.
	f.Limit++
	objs, err := s.engine.List(c.Request().Context(), tenant(c), f)
	if err != nil {
		return err
	}
	var out wire.ObjectList
	if len(objs) > limit {
		objs = objs[:limit]
		out.Next = objs[len(objs)-1].ID
	}
	out.Items = make([]wire.Object, len(objs))
	for i, o := range objs {
		out.Items[i] = s.wire(o)
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) act(c echo.Context) error {
	k, err := s.kind(c)
	if err != nil {
		return err
	}
	wait, err := waitParams(c)
	if err != nil {
		return err
	}
	var req wire.ActionRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	o, err := s.engine.Act(c.Request().Context(), tenant(c), k, c.Param("id"), c.Param("action"), req, c.Request().Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	return s.answer(c, http.StatusAccepted, k, o, wait)
}

// runSystem starts an action the system, a timer or a CRM drives (fault injection).
func (s *Server) runSystem(c echo.Context) error {
	k, err := s.kind(c)
	if err != nil {
		return err
	}
	o, err := s.engine.RunSystem(c.Request().Context(), tenant(c), k, c.Param("id"), c.Param("action"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, s.wire(o))
}

func (s *Server) patch(c echo.Context) error {
	k, err := s.kind(c)
	if err != nil {
		return err
	}
	var ifMatch int64
	if h := c.Request().Header.Get("If-Match"); h != "" {
		v := strings.Trim(strings.TrimPrefix(h, "W/"), `"`)
		if ifMatch, err = strconv.ParseInt(v, 10, 64); err != nil || ifMatch < 1 {
			return errorf(wire.CodeInvalid, "If-Match %q is not an object version (a positive number)", h)
		}
	}
	var req wire.PatchRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	o, err := s.engine.Patch(c.Request().Context(), tenant(c), k, c.Param("id"), ifMatch, req.Spec)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if o.Op != nil {
		status = http.StatusAccepted
	}
	return c.JSON(status, s.wire(o))
}

func (s *Server) delete(c echo.Context) error {
	k, err := s.kind(c)
	if err != nil {
		return err
	}
	mode := c.QueryParam("mode")
	if mode != "" && mode != "delete" && mode != "destroy" {
		return errorf(wire.CodeInvalid, "mode=%q: use mode=delete (recycle bin) or mode=destroy (permanent)", mode)
	}
	wait, err := waitParams(c)
	if err != nil {
		return err
	}
	o, err := s.engine.Delete(c.Request().Context(), tenant(c), k, c.Param("id"), mode)
	if err != nil {
		return err
	}
	switch {
	case o.Op == nil && k.IsGone(o.State):
		return c.NoContent(http.StatusNoContent)
	case o.Op == nil:
		return s.answer(c, http.StatusOK, k, o, wait) // already deleted in this mode
	}
	return s.answer(c, http.StatusAccepted, k, o, wait)
}

func (s *Server) events(c echo.Context) error {
	k, err := s.kind(c)
	if err != nil {
		return err
	}
	evs, err := s.engine.Events(c.Request().Context(), tenant(c), k, c.Param("id"))
	if err != nil {
		return err
	}
	out := wire.EventList{Items: make([]wire.Event, len(evs))}
	for i, e := range evs {
		out.Items[i] = wire.Event{Seq: e.Seq, ObjectID: e.ObjectID, Time: e.Time, Actor: e.Actor, From: e.From, To: e.To,
			Action: e.Action, OperationID: e.OperationID, Error: e.Error, Message: e.Message}
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) listFaults(c echo.Context) error {
	rules, err := s.engine.Faults().List(c.Request().Context(), tenant(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.FaultList{Items: rules})
}

func (s *Server) addFault(c echo.Context) error {
	var r wire.FaultRule
	if err := bind(c, &r); err != nil {
		return err
	}
	if err := s.checkFault(r); err != nil {
		return err
	}
	r, err := s.engine.Faults().Add(c.Request().Context(), tenant(c), r)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// checkFault refuses a rule that could never fire: an unknown kind; an action or a phase (a
// transition state) that no kind has, or not the rule's kind; a phase its action never passes
// through; a phase on an http_error rule, which matches requests.
func (s *Server) checkFault(r wire.FaultRule) error {
	kinds := s.engine.Registry().Kinds()
	if r.Kind != "" {
		k, err := s.engine.Registry().Kind(r.Kind)
		if err != nil {
			return errorf(wire.CodeInvalid, "%v", err)
		}
		kinds = []*lifecycle.Kind{k}
	}
	lacks := func(what, name string) error {
		if r.Kind == "" {
			return errorf(wire.CodeInvalid, "no kind has %s %q; GET /v1/kinds lists every kind's", what, name)
		}
		return errorf(wire.CodeInvalid, "kind %s has no %s %q; GET /v1/kinds/%s lists its actions and states", r.Kind, what, name, r.Kind)
	}
	if r.Action != "" && !slices.ContainsFunc(kinds, func(k *lifecycle.Kind) bool { _, ok := k.Action(r.Action); return ok }) {
		return lacks("action", r.Action)
	}
	if r.Phase != "" && !slices.ContainsFunc(kinds, func(k *lifecycle.Kind) bool { return k.IsTransition(r.Phase) }) {
		return lacks("transition state", r.Phase)
	}
	if r.Phase == "" {
		return nil
	}
	// A fail rule fires in an action's own phases only: an operation already failing does not
	// fail again. The other modes also act on a failure path's phases.
	through := func(k *lifecycle.Kind, a *lifecycle.Action) bool {
		if r.Mode == wire.FaultFail {
			return slices.ContainsFunc(a.Via, func(p lifecycle.Phase) bool { return p.State == r.Phase })
		}
		return a.PassesThrough(k, r.Phase)
	}
	passes := func(k *lifecycle.Kind) bool {
		if r.Action == "" {
			return slices.ContainsFunc(k.AllActions(), func(a *lifecycle.Action) bool { return through(k, a) })
		}
		a, ok := k.Action(r.Action)
		return ok && through(k, a)
	}
	if !slices.ContainsFunc(kinds, passes) {
		where := "no action passes through " + strconv.Quote(r.Phase)
		if r.Action != "" {
			where = fmt.Sprintf("action %q never passes through %q", r.Action, r.Phase)
		}
		if r.Mode == wire.FaultFail {
			where += " on its way (a failure path's phases fail no further)"
		}
		return errorf(wire.CodeInvalid, "%s; GET /v1/kinds lists each action's phases", where)
	}
	return nil
}

func (s *Server) deleteFault(c echo.Context) error {
	if err := s.engine.Faults().Delete(c.Request().Context(), tenant(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) reset(c echo.Context) error {
	if err := s.engine.Reset(c.Request().Context(), tenant(c), len(s.tokens) == 0); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) clockState() wire.ClockState {
	scale, _ := s.engine.Config()
	return wire.ClockState{Now: s.engine.Clock().Now(), TimeScale: scale}
}

func (s *Server) getClock(c echo.Context) error { return c.JSON(http.StatusOK, s.clockState()) }

func (s *Server) advanceClock(c echo.Context) error {
	var req wire.ClockAdvance
	if err := bind(c, &req); err != nil {
		return err
	}
	d, err := time.ParseDuration(req.Advance)
	if err != nil || d <= 0 {
		return errorf(wire.CodeInvalid, "advance %q is not a positive duration such as 1h (at most %s)", req.Advance, engine.MaxClockAdvance)
	}
	if err := s.engine.AdvanceClock(c.Request().Context(), d); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.clockState())
}

// simConfig is the body of /v1/sim/config.
type simConfig struct {
	TimeScale float64 `json:"time_scale"`
	HealAfter string  `json:"heal_after"`
}

func (s *Server) getConfig(c echo.Context) error {
	scale, heal := s.engine.Config()
	return c.JSON(http.StatusOK, simConfig{TimeScale: scale, HealAfter: heal.String()})
}

func (s *Server) putConfig(c echo.Context) error {
	scale, heal := s.engine.Config()
	req := simConfig{TimeScale: scale, HealAfter: heal.String()}
	if err := bind(c, &req); err != nil {
		return err
	}
	d, err := time.ParseDuration(req.HealAfter)
	if err != nil {
		return errorf(wire.CodeInvalid, "heal_after %q is not a duration such as 10m (at most %s)", req.HealAfter, engine.MaxHealAfter)
	}
	if err := s.engine.SetConfig(c.Request().Context(), req.TimeScale, d); err != nil {
		return err
	}
	// A new heal limit applies to operations already running, too.
	if err := s.engine.Reschedule(c.Request().Context()); err != nil {
		return err
	}
	return s.getConfig(c)
}
