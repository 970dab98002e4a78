package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

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
		w.Static = engine.Static(k, o)
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
