package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name    string
		give    Config
		want    string // the endpoint kept, when valid
		wantErr string
	}{
		{name: "plain", give: Config{Endpoint: "http://127.0.0.1:8080"}, want: "http://127.0.0.1:8080"},
		{name: "trailing slash", give: Config{Endpoint: "https://sim.example/"}, want: "https://sim.example"},
		{name: "prefix", give: Config{Endpoint: "http://host:1/api/"}, want: "http://host:1/api"},
		{name: "empty", give: Config{}, wantErr: "endpoint is empty"},
		{name: "no scheme", give: Config{Endpoint: "foo"}, wantErr: `endpoint "foo" is not an absolute http(s) URL`},
		{name: "host only", give: Config{Endpoint: "localhost:8080"}, wantErr: "is not an absolute http(s) URL"},
		{name: "ftp", give: Config{Endpoint: "ftp://host"}, wantErr: "is not an absolute http(s) URL"},
		{name: "no host", give: Config{Endpoint: "http://"}, wantErr: "is not an absolute http(s) URL"},
		{name: "query", give: Config{Endpoint: "http://host?x=1"}, wantErr: "must not carry a query"},
		{name: "waits", give: Config{Endpoint: "http://h", RetryWaitMin: time.Second, RetryWaitMax: time.Millisecond},
			wantErr: "RetryWaitMax 1ms is shorter than RetryWaitMin 1s"},
		{name: "negative wait", give: Config{Endpoint: "http://h", RetryWaitMin: -1}, wantErr: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.give)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%+v) error = %v, want it to contain %q", tt.give, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%+v) = %v", tt.give, err)
			}
			if c.Endpoint() != tt.want {
				t.Errorf("Endpoint() = %q, want %q", c.Endpoint(), tt.want)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	c, err := New(Config{Endpoint: "http://h"})
	if err != nil {
		t.Fatal(err)
	}
	if c.rc.RetryMax != DefaultRetryMax || c.rc.RetryWaitMin != DefaultMinRetryWait || c.rc.RetryWaitMax != DefaultMaxRetryWait {
		t.Errorf("retries = %d, %s..%s, want the defaults", c.rc.RetryMax, c.rc.RetryWaitMin, c.rc.RetryWaitMax)
	}
	if c.rc.Logger != nil {
		t.Errorf("Logger = %v, want nil (silent) when none is configured", c.rc.Logger)
	}
	c, _ = New(Config{Endpoint: "http://h", RetryMax: -1})
	if c.rc.RetryMax != 0 {
		t.Errorf("RetryMax -1 gives %d retries, want 0", c.rc.RetryMax)
	}
}

func TestRetriesUnavailableThenSucceeds(t *testing.T) {
	var n atomic.Int32
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			writeError(w, CodeUnavailable, "restarting", nil)
			return
		}
		writeJSON(w, http.StatusOK, machine("RUNNING", true))
	})
	c := newTestClient(t, srv.URL)

	obj, err := c.Get(t.Context(), "machines", "abc")
	if err != nil {
		t.Fatalf("Get() = %v", err)
	}
	if obj.State != "RUNNING" {
		t.Errorf("State = %q, want RUNNING", obj.State)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("server saw %d requests, want 3", got)
	}
}

func TestRetriesSpentReturnsLastError(t *testing.T) {
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeRetryAfter(w, 1)
		writeError(w, CodeUnavailable, "down for maintenance", nil)
	})
	c := newTestClient(t, srv.URL, func(c *Config) { c.RetryMax = 2 })

	_, err := c.Get(t.Context(), "machines", "abc")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Get() error = %v (%T), want *Error", err, err)
	}
	if e.Code != CodeUnavailable || e.Message != "down for maintenance" || e.RetryAfter != time.Second {
		t.Errorf("Get() error = %+v, want unavailable, the server's message and RetryAfter 1s", e)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("server saw %d requests, want 3", got)
	}
}

func TestRateLimitedHonoursRetryAfter(t *testing.T) {
	var n atomic.Int32
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			writeRetryAfter(w, 1) // capped by RetryWaitMax (5ms) in tests
			writeError(w, CodeRateLimited, "slow down", nil)
			return
		}
		writeJSON(w, http.StatusOK, ObjectList{Items: []Object{machine("RUNNING", true)}})
	})
	c := newTestClient(t, srv.URL)

	list, err := c.List(t.Context(), "machines", ListOptions{})
	if err != nil {
		t.Fatalf("List() = %v", err)
	}
	if len(list.Items) != 1 {
		t.Errorf("List() = %d items, want 1", len(list.Items))
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("server saw %d requests, want 2", got)
	}
}

func TestBackoff(t *testing.T) {
	withRetryAfter := func(v string) *http.Response {
		return &http.Response{StatusCode: http.StatusConflict, Header: http.Header{"Retry-After": {v}}}
	}
	tests := []struct {
		name     string
		min, max time.Duration
		attempt  int
		resp     *http.Response
		lo, hi   time.Duration // the wait lies in [lo, hi]
	}{
		{"retry-after", time.Millisecond, 10 * time.Second, 0, withRetryAfter("2"), 2 * time.Second, 2 * time.Second},
		{"retry-after capped", time.Millisecond, time.Second, 0, withRetryAfter("30"), time.Second, time.Second},
		{"retry-after zero", time.Millisecond, time.Second, 3, withRetryAfter("0"), 0, 0},
		{"bad retry-after", 100 * time.Millisecond, time.Second, 0, withRetryAfter("soon"), 50 * time.Millisecond, 100 * time.Millisecond},
		{"first", 100 * time.Millisecond, time.Second, 0, nil, 50 * time.Millisecond, 100 * time.Millisecond},
		{"third", 100 * time.Millisecond, time.Second, 2, nil, 200 * time.Millisecond, 400 * time.Millisecond},
		{"capped", 100 * time.Millisecond, time.Second, 10, nil, 500 * time.Millisecond, time.Second},
		{"huge attempt", 100 * time.Millisecond, time.Second, 1000, nil, 500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		for range 20 {
			if got := backoff(tt.min, tt.max, tt.attempt, tt.resp); got < tt.lo || got > tt.hi {
				t.Errorf("%s: backoff(%s, %s, %d) = %s, want within [%s, %s]", tt.name, tt.min, tt.max, tt.attempt, got, tt.lo, tt.hi)
				break
			}
		}
	}
}

func TestInvalidTransitionNeverRetried(t *testing.T) {
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, CodeInvalidTransition, "cannot start a RUNNING machine", nil)
	})
	c := newTestClient(t, srv.URL)

	_, err := c.Act(t.Context(), "machines", "abc", "start", ActionRequest{})
	if !IsInvalidTransition(err) {
		t.Fatalf("Act() error = %v, want invalid_transition", err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("server saw %d requests, want exactly 1", got)
	}
}

func TestOtherClientErrorsNeverRetried(t *testing.T) {
	for _, code := range []Code{CodeNotFound, CodeConflict, CodeInvalid, CodeUnauthorized} {
		srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) { writeError(w, code, "no", nil) })
		c := newTestClient(t, srv.URL)
		if _, err := c.Patch(t.Context(), "machines", "abc", 3, PatchRequest{}); !HasCode(err, code) {
			t.Errorf("Patch() error = %v, want %q", err, code)
		}
		if got := calls.Load(); got != 1 {
			t.Errorf("%s: server saw %d requests, want 1", code, got)
		}
	}
}

func TestBusyRetried(t *testing.T) {
	var n atomic.Int32
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			writeRetryAfter(w, 1)
			writeError(w, CodeBusy, "machine abc is running stop", nil)
			return
		}
		writeJSON(w, http.StatusAccepted, machine("STARTING", false))
	})
	c := newTestClient(t, srv.URL)

	obj, err := c.Act(t.Context(), "machines", "abc", "start", ActionRequest{})
	if err != nil {
		t.Fatalf("Act() = %v", err)
	}
	if obj.State != "STARTING" {
		t.Errorf("State = %q, want STARTING", obj.State)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("server saw %d requests, want 3", got)
	}
}

// TestBusyNotRetriedWhenTheCallerWaits: with WithoutBusyRetry a busy answer comes back at once,
// as a busy error, for a caller that long-polls the object instead.
func TestBusyNotRetriedWhenTheCallerWaits(t *testing.T) {
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeRetryAfter(w, 1)
		writeError(w, CodeBusy, "machine abc is running stop", nil)
	})
	c := newTestClient(t, srv.URL)

	_, err := c.Act(WithoutBusyRetry(t.Context()), "machines", "abc", "start", ActionRequest{})
	if !IsBusy(err) {
		t.Fatalf("Act() = %v, want a busy error", err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

func TestIdempotencyKey(t *testing.T) {
	var (
		mu   sync.Mutex
		keys []string
		n    atomic.Int32
	)
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		if r.Method == http.MethodPost && n.Add(1)%3 != 0 { // each POST fails twice
			writeError(w, CodeUnavailable, "try again", nil)
			return
		}
		writeJSON(w, http.StatusAccepted, machine("DEPLOYING", false))
	})
	c := newTestClient(t, srv.URL)

	for range 2 {
		if _, err := c.Create(t.Context(), "machines", CreateRequest{Name: "vm1"}); err != nil {
			t.Fatalf("Create() = %v", err)
		}
	}
	if _, err := c.Get(t.Context(), "machines", "abc"); err != nil {
		t.Fatalf("Get() = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 7 {
		t.Fatalf("server saw %d requests, want 7: %q", len(keys), keys)
	}
	first, second := keys[:3], keys[3:6]
	for _, call := range [][]string{first, second} {
		if call[0] == "" || call[1] != call[0] || call[2] != call[0] {
			t.Errorf("keys of one Create = %q, want one non-empty key on every retry", call)
		}
	}
	if first[0] == second[0] {
		t.Errorf("two Creates sent the same key %q, want different keys", first[0])
	}
	if keys[6] != "" {
		t.Errorf("GET sent Idempotency-Key %q, want none", keys[6])
	}
}

// countingTransport counts the round trips it makes.
type countingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func TestConnectionRefusedRetriedThenFails(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	endpoint := srv.URL
	srv.Close() // nothing listens there any more

	tr := &countingTransport{next: http.DefaultTransport}
	c := newTestClient(t, endpoint, func(c *Config) {
		c.RetryMax = 2
		c.HTTPClient = &http.Client{Transport: tr}
	})

	_, err := c.Get(t.Context(), "machines", "abc")
	if err == nil {
		t.Fatal("Get() = nil error, want connection refused")
	}
	var e *Error
	if errors.As(err, &e) {
		t.Errorf("Get() error = %v, want a transport error, not *Error", err)
	}
	if !IsTransient(err) {
		t.Errorf("IsTransient(%v) = false, want true", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "GET "+endpoint+"/v1/machines/abc") || !strings.Contains(msg, "gave up after 3 attempts") {
		t.Errorf("Error() = %q, want the method, URL and attempts", msg)
	}
	if got := tr.n.Load(); got != 3 {
		t.Errorf("made %d attempts, want 3", got)
	}
}

func TestContextCancelStopsRetries(t *testing.T) {
	first := make(chan struct{})
	var once sync.Once
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(first) })
		writeError(w, CodeUnavailable, "down", nil)
	})
	c := newTestClient(t, srv.URL, func(c *Config) {
		c.RetryWaitMin, c.RetryWaitMax = time.Hour, time.Hour // only cancellation ends the wait
	})

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-first
		cancel()
	}()
	_, err := c.Get(ctx, "machines", "abc")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Get() error = %v, want context.Canceled", err)
	}
	if IsTransient(err) {
		t.Errorf("IsTransient(%v) = true, want false", err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

func TestHeaders(t *testing.T) {
	var got http.Header
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		writeJSON(w, http.StatusOK, machine("RUNNING", true))
	})

	c := newTestClient(t, srv.URL, func(c *Config) { c.Token = "s3cret"; c.UserAgent = "test-agent/1" })
	if _, err := c.Get(t.Context(), "machines", "abc"); err != nil {
		t.Fatal(err)
	}
	if a := got.Get("Authorization"); a != "Bearer s3cret" {
		t.Errorf("Authorization = %q, want %q", a, "Bearer s3cret")
	}
	if ua := got.Get("User-Agent"); ua != "test-agent/1" {
		t.Errorf("User-Agent = %q, want test-agent/1", ua)
	}
	if a := got.Get("Accept"); a != "application/json" {
		t.Errorf("Accept = %q, want application/json", a)
	}

	c = newTestClient(t, srv.URL)
	if _, err := c.Get(t.Context(), "machines", "abc"); err != nil {
		t.Fatal(err)
	}
	if a, ok := got["Authorization"]; ok {
		t.Errorf("Authorization = %q without a token, want none", a)
	}
	if ua := got.Get("User-Agent"); ua != DefaultUserAgent {
		t.Errorf("User-Agent = %q, want %q", ua, DefaultUserAgent)
	}
}

// apiServer is a fake of the whole API: each route checks what it receives and records it.
type apiServer struct {
	t    *testing.T
	mu   sync.Mutex
	seen []string // "METHOD path?query"
	mux  *http.ServeMux
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	line := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		line += "?" + r.URL.RawQuery
	}
	s.seen = append(s.seen, line)
	s.mu.Unlock()
	s.mux.ServeHTTP(w, r)
}

func decodeBody[T any](t *testing.T, r *http.Request) T {
	t.Helper()
	var v T
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type = %q, want application/json", r.Method, r.URL.Path, ct)
	}
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &v); err != nil {
		t.Errorf("%s %s: body %s: %v", r.Method, r.URL.Path, data, err)
	}
	return v
}

const accountKindJSON = `{
  "name": "account", "family": "openvcloud", "collection": "accounts",
  "states": {"static": ["CONFIRMED", "DISABLED", "DESTROYED"], "transition": ["DISABLING", "ENABLING", "DESTROYING"],
             "final": ["DESTROYED"], "gone": ["DESTROYED"]},
  "failure": {"rollback": true},
  "deletion": {"destroy": ["destroy"]},
  "create": {"to": "CONFIRMED"},
  "actions": [
    {"name": "disable", "from": ["CONFIRMED"], "via": [{"state": "DISABLING"}], "to": "DISABLED"},
    {"name": "enable", "from": ["DISABLED"], "via": [{"state": "ENABLING"}], "to": "CONFIRMED"},
    {"name": "destroy", "from": ["CONFIRMED", "DISABLED"], "via": [{"state": "DESTROYING", "duration": "2s"}], "to": "DESTROYED"}
  ]
}`

func newAPIServer(t *testing.T) (*apiServer, *Client) {
	s := &apiServer{t: t, mux: http.NewServeMux()}
	m := s.mux
	m.HandleFunc("GET /v1/kinds", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"items":[`+accountKindJSON+`]}`)
	})
	m.HandleFunc("GET /v1/kinds/account", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, accountKindJSON)
	})
	m.HandleFunc("GET /v1/kinds/broken", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"name":"broken","collection":"brokens","states":{"static":[]}}`)
	})
	m.HandleFunc("POST /v1/accounts", func(w http.ResponseWriter, r *http.Request) {
		req := decodeBody[CreateRequest](t, r)
		if req.Name != "acme" || req.Spec["email"] != "ops@acme.test" {
			t.Errorf("create body = %+v", req)
		}
		w.Header().Set("Location", "/v1/accounts/a1")
		writeJSON(w, http.StatusCreated, Object{ID: "a1", Kind: "account", Name: req.Name, State: "CONFIRMED", Static: true, Spec: req.Spec})
	})
	m.HandleFunc("GET /v1/accounts/{id}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, Object{ID: r.PathValue("id"), Kind: "account", State: "CONFIRMED", Static: true})
	})
	m.HandleFunc("GET /v1/machines", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("parent_id") != "cs1" || q.Get("state") != "RUNNING" || q.Get("limit") != "2" {
			t.Errorf("list query = %q", r.URL.RawQuery)
		}
		switch q.Get("after") {
		case "":
			writeJSON(w, http.StatusOK, ObjectList{Items: []Object{{ID: "m1"}, {ID: "m2"}}, Next: "c2"})
		case "c2":
			writeJSON(w, http.StatusOK, ObjectList{Items: []Object{{ID: "m3"}}})
		default:
			t.Errorf("unexpected cursor %q", q.Get("after"))
		}
	})
	m.HandleFunc("POST /v1/machines/{id}/actions/{action}", func(w http.ResponseWriter, r *http.Request) {
		req := decodeBody[ActionRequest](t, r)
		if r.PathValue("action") != "attach disk" || !req.Force || req.Params["disk_id"] != "d1" {
			t.Errorf("action %q body = %+v", r.PathValue("action"), req)
		}
		writeJSON(w, http.StatusAccepted, machine("ATTACHING_DISK", false))
	})
	m.HandleFunc("PATCH /v1/machines/{id}", func(w http.ResponseWriter, r *http.Request) {
		req := decodeBody[PatchRequest](t, r)
		want := map[string]any{"memory": float64(2048), "note": nil}
		if !reflect.DeepEqual(req.Spec, want) {
			t.Errorf("patch spec = %#v, want %#v", req.Spec, want)
		}
		if im := r.Header.Get("If-Match"); im != "7" && im != "" {
			t.Errorf("If-Match = %q", im)
		}
		obj := machine("RUNNING", true)
		obj.Version = 8
		writeJSON(w, http.StatusOK, obj)
	})
	m.HandleFunc("DELETE /v1/machines/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("mode") == "delete" {
			writeJSON(w, http.StatusAccepted, machine("DELETING", false))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /v1/machines/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, EventList{Items: []Event{{Seq: 1, To: "DEPLOYING"}, {Seq: 2, From: "DEPLOYING", To: "RUNNING"}}})
	})
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	m.HandleFunc("GET /v1/sim/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, FaultList{Items: []FaultRule{{ID: "f1", Mode: "fail"}}})
	})
	m.HandleFunc("POST /v1/sim/faults", func(w http.ResponseWriter, r *http.Request) {
		rule := decodeBody[FaultRule](t, r)
		rule.ID = "f2"
		writeJSON(w, http.StatusCreated, rule)
	})
	m.HandleFunc("DELETE /v1/sim/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("POST /v1/sim/reset", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	m.HandleFunc("GET /v1/sim/clock", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, ClockState{Now: now, TimeScale: 1})
	})
	m.HandleFunc("POST /v1/sim/clock", func(w http.ResponseWriter, r *http.Request) {
		adv := decodeBody[ClockAdvance](t, r)
		d, err := time.ParseDuration(adv.Advance)
		if err != nil {
			writeError(w, CodeInvalid, err.Error(), nil)
			return
		}
		writeJSON(w, http.StatusOK, ClockState{Now: now.Add(d), TimeScale: 1})
	})
	m.HandleFunc("GET /v1/sim/config", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, SimConfig{TimeScale: 1, HealAfter: "10m0s"})
	})
	m.HandleFunc("PUT /v1/sim/config", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, decodeBody[SimConfig](t, r))
	})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, newTestClient(t, srv.URL, noRetries)
}

func TestMethods(t *testing.T) {
	s, c := newAPIServer(t)
	ctx := t.Context()

	kinds, err := c.Kinds(ctx)
	if err != nil || len(kinds) != 1 {
		t.Fatalf("Kinds() = %v, %v, want one kind", kinds, err)
	}
	if k := kinds[0]; !k.IsStatic("DISABLED") || !k.IsTransition("DESTROYING") || !k.IsGone("DESTROYED") {
		t.Errorf("Kinds()[0] lookups do not work: was it compiled?")
	}
	k, err := c.Kind(ctx, "account")
	if err != nil {
		t.Fatalf("Kind(account) = %v", err)
	}
	if _, ok := k.Action("disable"); !ok {
		t.Errorf("Kind(account).Action(disable) not found")
	}
	if _, err := c.Kind(ctx, "broken"); err == nil || !strings.Contains(err.Error(), `kind "broken" from the server is invalid`) {
		t.Errorf("Kind(broken) error = %v, want an invalid kind error", err)
	}

	obj, err := c.Create(ctx, "accounts", CreateRequest{Name: "acme", Spec: map[string]any{"email": "ops@acme.test"}})
	if err != nil || obj.ID != "a1" || !obj.Static {
		t.Errorf("Create() = %+v, %v", obj, err)
	}
	if obj, err := c.Get(ctx, "accounts", "a/1"); err != nil || obj.ID != "a/1" {
		t.Errorf("Get(a/1) = %+v, %v, want the escaped id to round-trip", obj, err)
	}

	opts := ListOptions{ParentID: "cs1", State: "RUNNING", Limit: 2}
	page, err := c.List(ctx, "machines", opts)
	if err != nil || len(page.Items) != 2 || page.Next != "c2" {
		t.Errorf("List() = %+v, %v", page, err)
	}
	all, err := c.ListAll(ctx, "machines", opts)
	if err != nil || len(all) != 3 || all[2].ID != "m3" {
		t.Errorf("ListAll() = %+v, %v, want m1, m2, m3", all, err)
	}

	obj, err = c.Act(ctx, "machines", "abc", "attach disk", ActionRequest{Force: true, Params: map[string]any{"disk_id": "d1"}})
	if err != nil || obj.State != "ATTACHING_DISK" {
		t.Errorf("Act() = %+v, %v", obj, err)
	}

	spec := map[string]any{"memory": 2048, "note": nil}
	if obj, err := c.Patch(ctx, "machines", "abc", 7, PatchRequest{Spec: spec}); err != nil || obj.Version != 8 {
		t.Errorf("Patch() = %+v, %v", obj, err)
	}
	if _, err := c.Patch(ctx, "machines", "abc", 0, PatchRequest{Spec: spec}); err != nil {
		t.Errorf("Patch(no If-Match) = %v", err)
	}

	if obj, err := c.Delete(ctx, "machines", "abc", "delete"); err != nil || obj == nil || obj.State != "DELETING" {
		t.Errorf("Delete(delete) = %+v, %v, want the object in DELETING", obj, err)
	}
	if obj, err := c.Delete(ctx, "machines", "abc", "destroy"); err != nil || obj != nil {
		t.Errorf("Delete(destroy) = %+v, %v, want nil, nil on 204", obj, err)
	}

	events, err := c.Events(ctx, "machines", "abc")
	if err != nil || len(events) != 2 || events[1].To != "RUNNING" {
		t.Errorf("Events() = %+v, %v", events, err)
	}
	if err := c.Health(ctx); err != nil {
		t.Errorf("Health() = %v", err)
	}

	faults, err := c.Faults(ctx)
	if err != nil || len(faults) != 1 || faults[0].ID != "f1" {
		t.Errorf("Faults() = %+v, %v", faults, err)
	}
	rule, err := c.AddFault(ctx, FaultRule{Kind: "machine", Action: "start", Mode: "fail", Count: 1})
	if err != nil || rule.ID != "f2" || rule.Action != "start" {
		t.Errorf("AddFault() = %+v, %v", rule, err)
	}
	if err := c.DeleteFault(ctx, "f2"); err != nil {
		t.Errorf("DeleteFault() = %v", err)
	}
	if err := c.Reset(ctx); err != nil {
		t.Errorf("Reset() = %v", err)
	}
	clock, err := c.Clock(ctx)
	if err != nil || clock.Now.Hour() != 3 {
		t.Errorf("Clock() = %+v, %v", clock, err)
	}
	clock, err = c.AdvanceClock(ctx, 90*time.Minute)
	if err != nil || !clock.Now.Equal(time.Date(2030, 1, 2, 4, 34, 5, 0, time.UTC)) {
		t.Errorf("AdvanceClock(90m) = %+v, %v", clock, err)
	}
	cfg, err := c.SimConfig(ctx)
	if err != nil || cfg.TimeScale != 1 || cfg.HealAfter != "10m0s" {
		t.Errorf("SimConfig() = %+v, %v", cfg, err)
	}
	cfg, err = c.SetConfig(ctx, SimConfig{TimeScale: 0.01, HealAfter: "5m"})
	if err != nil || cfg.TimeScale != 0.01 || cfg.HealAfter != "5m" {
		t.Errorf("SetConfig() = %+v, %v", cfg, err)
	}

	want := []string{
		"GET /v1/kinds",
		"GET /v1/kinds/account",
		"GET /v1/kinds/broken",
		"POST /v1/accounts",
		"GET /v1/accounts/a%2F1",
		"GET /v1/machines?limit=2&parent_id=cs1&state=RUNNING",
		"GET /v1/machines?limit=2&parent_id=cs1&state=RUNNING",
		"GET /v1/machines?after=c2&limit=2&parent_id=cs1&state=RUNNING",
		"POST /v1/machines/abc/actions/attach disk",
		"PATCH /v1/machines/abc",
		"PATCH /v1/machines/abc",
		"DELETE /v1/machines/abc?mode=delete",
		"DELETE /v1/machines/abc?mode=destroy",
		"GET /v1/machines/abc/events",
		"GET /healthz",
		"GET /v1/sim/faults",
		"POST /v1/sim/faults",
		"DELETE /v1/sim/faults/f2",
		"POST /v1/sim/reset",
		"GET /v1/sim/clock",
		"POST /v1/sim/clock",
		"GET /v1/sim/config",
		"PUT /v1/sim/config",
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// r.URL.Path is unescaped; the escaped id shows in RawPath, so compare it separately.
	for i := range s.seen {
		s.seen[i] = strings.Replace(s.seen[i], "/v1/accounts/a/1", "/v1/accounts/a%2F1", 1)
	}
	if !reflect.DeepEqual(s.seen, want) {
		t.Errorf("requests =\n%s\nwant\n%s", strings.Join(s.seen, "\n"), strings.Join(want, "\n"))
	}
}

func TestMissingNames(t *testing.T) {
	c := newTestClient(t, "http://127.0.0.1:1")
	ctx := t.Context()
	checks := []struct {
		name string
		err  error
	}{
		{"Get no id", func() error { _, err := c.Get(ctx, "machines", ""); return err }()},
		{"Get no collection", func() error { _, err := c.Get(ctx, "", "abc"); return err }()},
		{"Create no collection", func() error { _, err := c.Create(ctx, "", CreateRequest{}); return err }()},
		{"Act no action", func() error { _, err := c.Act(ctx, "machines", "abc", "", ActionRequest{}); return err }()},
		{"Kind no name", func() error { _, err := c.Kind(ctx, ""); return err }()},
		{"DeleteFault no id", c.DeleteFault(ctx, "")},
	}
	for _, tt := range checks {
		if tt.err == nil || !strings.Contains(tt.err.Error(), "missing") {
			t.Errorf("%s: error = %v, want a missing-name error", tt.name, tt.err)
		}
	}
}

func TestListAllRepeatedCursor(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, ObjectList{Items: []Object{{ID: "m1"}}, Next: "same"})
	})
	c := newTestClient(t, srv.URL)
	if _, err := c.ListAll(t.Context(), "machines", ListOptions{}); err == nil || !strings.Contains(err.Error(), `cursor "same" again`) {
		t.Errorf("ListAll() error = %v, want a repeated-cursor error", err)
	}
}

// ListAll without a page size asks for the largest page: a refresh of an MCI of 2,000 VMs
// reads them in two requests.
func TestListAllLargestPages(t *testing.T) {
	var limits []string
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		limits = append(limits, r.URL.Query().Get("limit"))
		next := ""
		if r.URL.Query().Get("after") == "" {
			next = "m1"
		}
		writeJSON(w, http.StatusOK, ObjectList{Items: []Object{{ID: "m" + strconv.Itoa(len(limits))}}, Next: next})
	})
	c := newTestClient(t, srv.URL)
	all, err := c.ListAll(t.Context(), "vms", ListOptions{ParentID: "mci1"})
	if err != nil || len(all) != 2 {
		t.Fatalf("ListAll() = %v, %v", all, err)
	}
	if !slices.Equal(limits, []string{"1000", "1000"}) {
		t.Errorf("ListAll asked for pages of %v, want the largest page (1000) each time", limits)
	}
}

// A caller that lost a create's answer sends it again with WithIdempotencyKey: both attempts
// carry the caller's key, so the server answers the second with the object the first made.
func TestWithIdempotencyKey(t *testing.T) {
	var keys []string
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		writeJSON(w, http.StatusCreated, Object{ID: "m1"})
	})
	c := newTestClient(t, srv.URL)
	key := NewIdempotencyKey()
	for range 2 {
		if _, err := c.Create(WithIdempotencyKey(t.Context(), key), "machines", CreateRequest{Name: "web"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create(t.Context(), "machines", CreateRequest{Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || keys[0] != key || keys[1] != key || keys[2] == key || keys[2] == "" {
		t.Errorf("keys sent %q, want %q twice, then a new one", keys, key)
	}
}

func TestHealthNotOK(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "starting"})
	})
	c := newTestClient(t, srv.URL)
	if err := c.Health(t.Context()); err == nil || !strings.Contains(err.Error(), `status "starting"`) {
		t.Errorf("Health() = %v, want a status error", err)
	}
}

// AddFault leaves the rule's fired count out of its request: the server counts it, and
// openapi.json documents it read-only.
func TestAddFaultSendsNoFiredCount(t *testing.T) {
	var sent map[string]any
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&sent); err != nil {
			t.Errorf("decode the request: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"fault-1","mode":"fail","kind":"machine","fired":0}`))
	})
	got, err := newTestClient(t, srv.URL).AddFault(t.Context(), FaultRule{Kind: "machine", Mode: "fail", Count: 2, Fired: 7})
	if err != nil {
		t.Fatalf("AddFault = %v", err)
	}
	if _, ok := sent["fired"]; ok {
		t.Errorf("the request holds fired: %v", sent)
	}
	if sent["kind"] != "machine" || sent["mode"] != "fail" || sent["count"] != 2.0 {
		t.Errorf("the request = %v, want the rule's kind, mode and count", sent)
	}
	if got.ID != "fault-1" {
		t.Errorf("AddFault = %+v, want the server's rule", got)
	}
}
