package simulator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
)

// openAPIDoc is the API's OpenAPI document, as the server embeds it.
var openAPIDoc = func() []byte {
	b, err := os.ReadFile(filepath.Join("httpapi", "openapi.json"))
	if err != nil {
		panic(err)
	}
	return b
}()

// updateObject writes one object at its expected version, as the engine would (tests that
// set up what an older build or a crash left behind).
func updateObject(ctx context.Context, s store.Store, o *store.Object, expect int64, events []store.Event, key string) error {
	return s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o, Expect: expect, Events: events}}, Key: key, KeyAt: time.Now()})
}

// harnessT0 is where every manual clock starts.
var harnessT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// harnessOptions configure newTestServer. The zero value is an open in-memory simulator on a
// manual clock at time scale 1, with no worker: tests move time with harness.advance.
type harnessOptions struct {
	store     store.Store // default: a new MemStore
	reg       *lifecycle.Registry
	tokens    map[string]string
	timeScale float64
	healAfter time.Duration
	seed      uint64
	metrics   bool
	// clock, if set, is the manual clock to use (a restarted simulator keeps its time).
	clock *engine.ManualClock
	// worker runs engine.Run on the wall clock (a SimClock) until the test ends; use it with a
	// tiny timeScale and assert only on eventual states.
	worker bool
	// openapi, if set, validates every exchange against openapi.json.
	openapi *openAPIValidator
	// noInvariants leaves the cross-object invariants unchecked, as the server does by
	// default: for benchmarks, which measure what a server costs.
	noInvariants bool
	// adminToken, maxObjects and requestDeadline are passed on (see ServerOptions, Options).
	adminToken      string
	maxObjects      int
	requestDeadline time.Duration
	// httpServer serves through NewHTTPServer (timeouts), capped at maxConns when set.
	httpServer bool
	maxConns   int
	// landingWait is engine.Options.LandingWait.
	landingWait time.Duration
	// maxWaits and heldConns are ServerOptions.MaxWaitsPerTenant and MaxConns (of which held
	// requests together leave httpapi.ReservedConns free).
	maxWaits, heldConns int
}

// harness is a simulator served over httptest.
type harness struct {
	t       testing.TB
	engine  *engine.Engine
	srv     *httptest.Server
	server  *httpapi.Server
	store   store.Store
	clock   engine.Clock
	sim     *simtest.Sim
	manual  *engine.ManualClock // nil with a worker
	metrics *httpapi.Metrics
	// token is sent as the bearer token by do (empty: none).
	token string
}

func newTestServer(t testing.TB, opt harnessOptions) *harness {
	t.Helper()
	opts := []simtest.Option{
		simtest.WithTimeScale(cmp.Or(opt.timeScale, 1)), simtest.WithHealAfter(opt.healAfter), simtest.WithSeed(opt.seed),
		simtest.WithTokens(opt.tokens), simtest.WithAdminToken(opt.adminToken),
		simtest.WithEngineOptions(func(eo *engine.Options) {
			eo.CheckInvariants, eo.MaxObjects, eo.LandingWait = !opt.noInvariants, opt.maxObjects, opt.landingWait
			eo.Logger = slog.New(slog.NewTextHandler(t.Output(), nil)).With(slog.String("layer", "engine"))
		}),
		simtest.WithServerOptions(func(so *httpapi.ServerOptions) {
			so.RequestDeadline, so.MaxWaitsPerTenant, so.MaxConns = opt.requestDeadline, opt.maxWaits, opt.heldConns
		}),
	}
	if opt.store != nil {
		opts = append(opts, simtest.WithStore(opt.store))
	}
	if opt.reg != nil {
		opts = append(opts, simtest.WithRegistry(opt.reg))
	}
	h := &harness{t: t}
	if !opt.worker {
		h.manual = opt.clock
		if h.manual == nil {
			h.manual = engine.NewManualClock(harnessT0)
		}
		opts = append(opts, simtest.WithClock(h.manual), simtest.WithoutWorker())
	}
	if opt.metrics {
		opts = append(opts, simtest.WithMetrics())
	}
	if opt.openapi != nil {
		opts = append(opts, simtest.WithMiddleware(opt.openapi.wrap))
	}
	if opt.httpServer {
		opts = append(opts, simtest.WithHTTPServer(opt.maxConns))
	}
	// Every test checks the kinds' cross-object invariants after every commit. Registered
	// first, so it runs after the simulator has stopped.
	t.Cleanup(func() {
		for _, v := range h.engine.Violations() {
			t.Errorf("%v", v)
		}
	})
	h.sim = simtest.Start(t, opts...)
	h.engine, h.server, h.store, h.metrics, h.srv = h.sim.Engine, h.sim.Server, h.sim.Store, h.sim.Metrics, h.sim.HTTP
	h.clock = h.sim.Clock()
	return h
}

// openTestSQLite opens a SQLite file store in a fresh temporary directory, closed when the
// test ends.
func openTestSQLite(t testing.TB) (*sqlitestore.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sim.db")
	s, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("OpenSQLite(%q) = %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// response is an HTTP answer, body read.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *response) String() string {
	return fmt.Sprintf("%d %s", r.Status, bytes.TrimSpace(r.Body))
}

// request sends a request; body is JSON-encoded unless it is a string or nil. headers are
// name, value pairs; an Authorization header overrides the harness token ("" sends none).
// It is safe to call from other goroutines.
func (h *harness) request(method, path string, body any, headers ...string) (*response, error) {
	req, err := h.newRequest(method, path, body, headers...)
	if err != nil {
		return nil, err
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// newRequest builds a request as request sends it.
func (h *harness) newRequest(method, path string, body any, headers ...string) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	return req, nil
}

// do sends a request and fails the test on a transport error.
func (h *harness) do(method, path string, body any, headers ...string) *response {
	h.t.Helper()
	r, err := h.request(method, path, body, headers...)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// as returns a copy of the harness that sends token.
func (h *harness) as(token string) *harness {
	c := *h
	c.token = token
	return &c
}

func decodeAs[T any](t testing.TB, r *response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, r, err)
	}
	return v
}

// wantStatus fails the test unless r has one of the statuses.
func wantStatus(t testing.TB, r *response, what string, statuses ...int) {
	t.Helper()
	if !slices.Contains(statuses, r.Status) {
		t.Fatalf("%s = %s, want status %v", what, r, statuses)
	}
}

// wantAPIError checks r is the error envelope with status and code, and returns it.
func wantAPIError(t testing.TB, r *response, status int, code client.Code) client.ErrorDetail {
	t.Helper()
	var body client.ErrorBody
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Error.Code == "" {
		t.Fatalf("answer %s is not the error envelope (%v)", r, err)
	}
	if r.Status != status || body.Error.Code != string(code) {
		t.Fatalf("answer = %s, want %d %s", r, status, code)
	}
	if body.Error.Message == "" {
		t.Errorf("error %s has no message", r)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type = %q, want application/json", ct)
	}
	return body.Error
}

func objPath(coll, id string) string { return "/v1/" + coll + "/" + id }

// withSample fills the required fields a test's spec leaves out with the kind's sample values.
func withSample(k *lifecycle.Kind, spec map[string]any, now time.Time) map[string]any {
	if spec == nil {
		return k.SampleSpec(now)
	}
	sample := k.SampleSpec(now)
	out := maps.Clone(spec)
	for _, f := range k.Fields {
		if _, ok := out[f.Name]; f.Required && !ok {
			out[f.Name] = sample[f.Name]
		}
	}
	return out
}

// create POSTs an object and checks the 201/202 answer. Required fields the request leaves out
// get the kind's sample values.
func (h *harness) create(coll string, req client.CreateRequest) client.Object {
	h.t.Helper()
	r := h.do(http.MethodPost, "/v1/"+coll, h.sampled(coll, req))
	wantStatus(h.t, r, "POST /v1/"+coll, http.StatusCreated, http.StatusAccepted)
	return decodeAs[client.Object](h.t, r)
}

// sampled is req with the kind's sample values in the required fields it leaves out.
func (h *harness) sampled(coll string, req client.CreateRequest) client.CreateRequest {
	if k, ok := h.engine.Registry().ByCollection(coll); ok {
		req.Spec = withSample(k, req.Spec, h.clock.Now())
	}
	return req
}

// act runs an action and checks the 202 answer.
func (h *harness) act(coll, id, action string, params map[string]any) client.Object {
	h.t.Helper()
	r := h.do(http.MethodPost, objPath(coll, id)+"/actions/"+action, client.ActionRequest{Params: params})
	wantStatus(h.t, r, "action "+action, http.StatusAccepted)
	return decodeAs[client.Object](h.t, r)
}

// get reads an object that must exist.
func (h *harness) get(coll, id string) client.Object {
	h.t.Helper()
	r := h.do(http.MethodGet, objPath(coll, id), nil)
	wantStatus(h.t, r, "GET "+objPath(coll, id), http.StatusOK)
	return decodeAs[client.Object](h.t, r)
}

// events reads an object's history.
func (h *harness) events(coll, id string) []client.Event {
	h.t.Helper()
	r := h.do(http.MethodGet, objPath(coll, id)+"/events", nil)
	wantStatus(h.t, r, "GET events", http.StatusOK)
	return decodeAs[client.EventList](h.t, r).Items
}

// advance moves the manual clock and runs the engine over what is due.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	if h.manual == nil {
		h.t.Fatal("advance needs the manual clock (no worker)")
	}
	h.sim.Advance(h.t, d)
}

// settle moves the manual clock from due time to due time until the object is static, and
// returns it; exists is false when it is gone.
func (h *harness) settle(coll, id string) (o client.Object, exists bool) {
	h.t.Helper()
	for range 50 {
		r := h.do(http.MethodGet, objPath(coll, id), nil)
		if r.Status == http.StatusNotFound {
			return client.Object{}, false
		}
		wantStatus(h.t, r, "GET "+objPath(coll, id), http.StatusOK)
		o = decodeAs[client.Object](h.t, r)
		if o.Static {
			return o, true
		}
		due := time.Time{}
		if o.Operation != nil {
			due = o.Operation.DueAt
		}
		if due.IsZero() {
			// Waiting for related operations (an MCI for its VMs): move to the next due time.
			next, ok, err := h.store.NextDue(context.Background())
			if err != nil || !ok {
				h.t.Fatalf("%s %s is stuck in %s (operation %+v; nothing else is due)", o.Kind, id, o.State, o.Operation)
			}
			due = next
		}
		h.advance(max(due.Sub(h.manual.Now()), 0))
	}
	h.t.Fatalf("%s/%s did not settle after 50 phases", coll, id)
	return o, false
}

// mustSettle settles an object that must still exist, in state want.
func (h *harness) mustSettle(coll, id, want string) client.Object {
	h.t.Helper()
	o, ok := h.settle(coll, id)
	if !ok {
		h.t.Fatalf("%s/%s is gone, want it %s", coll, id, want)
	}
	if o.State != want {
		h.t.Fatalf("%s/%s settled in %s, want %s", coll, id, o.State, want)
	}
	return o
}

// eventStates lists the states of a history: the first event's from, then every to.
func eventStates(evs []client.Event) []string {
	if len(evs) == 0 {
		return nil
	}
	out := []string{evs[0].From}
	for _, e := range evs {
		out = append(out, e.To)
	}
	return out
}

// checkEventLog checks the history's seqs run 1..n with no gap or duplicate, and that it
// chains: each event starts where the one before ended.
func checkEventLog(t testing.TB, evs []client.Event) {
	t.Helper()
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d, want %d (seqs must run 1..n): %+v", i, e.Seq, i+1, evs)
		}
		if i > 0 && e.From != evs[i-1].To {
			t.Errorf("event %d goes %s → %s but the one before ended in %s", e.Seq, e.From, e.To, evs[i-1].To)
		}
	}
}

// openvcloud makes a CONFIRMED account and a DEPLOYED cloudspace in it.
func (h *harness) openvcloud() (account, cloudspace client.Object) {
	h.t.Helper()
	account = h.create("accounts", client.CreateRequest{Name: "acme"})
	if account.State != "CONFIRMED" {
		h.t.Fatalf("new account is %s, want CONFIRMED", account.State)
	}
	cloudspace = h.create("cloudspaces", client.CreateRequest{Name: "net", ParentID: account.ID})
	cloudspace = h.mustSettle("cloudspaces", cloudspace.ID, "DEPLOYED")
	return account, cloudspace
}

// runningMachine makes a RUNNING machine in a cloudspace.
// attachedDisk creates a disk in an account and attaches it to a machine.
func (h *harness) attachedDisk(accountID, machineID string) client.Object {
	h.t.Helper()
	d := h.create("disks", client.CreateRequest{Name: "d", ParentID: accountID})
	h.mustSettle("disks", d.ID, "CREATED")
	h.act("disks", d.ID, "attach", map[string]any{"machine_id": machineID})
	return h.mustSettle("disks", d.ID, "ASSIGNED")
}

func (h *harness) runningMachine(cloudspaceID, name string) client.Object {
	h.t.Helper()
	m := h.create("machines", client.CreateRequest{Name: name, ParentID: cloudspaceID, Spec: map[string]any{"memory": 2048}})
	return h.mustSettle("machines", m.ID, "RUNNING")
}
