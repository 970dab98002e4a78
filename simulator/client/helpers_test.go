package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serve starts a test server running h and counts the requests it receives.
func serve(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// newTestClient returns a client for endpoint with retry waits short enough for tests.
func newTestClient(t *testing.T, endpoint string, mods ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: endpoint, RetryMax: 3, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v) = %v", cfg, err)
	}
	return c
}

func noRetries(c *Config) { c.RetryMax = -1 }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code Code, msg string, details any) {
	body := ErrorBody{Error: ErrorDetail{Code: string(code), Message: msg}}
	if details != nil {
		body.Error.Details, _ = json.Marshal(details)
	}
	writeJSON(w, StatusOf(code), body)
}

func writeRetryAfter(w http.ResponseWriter, seconds int) {
	w.Header().Set("Retry-After", strconv.Itoa(seconds))
}

func machine(state string, static bool) Object {
	return Object{ID: "abc", Kind: "machine", Name: "vm1", State: state, Static: static, Version: 1}
}

// testClock is a Clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// deadlineCtx is a context whose deadline passes when the test calls expire, not when a real
// clock reaches it; its Err is then context.DeadlineExceeded, as a deadline's is. Tests of
// what a wait does at its deadline take no real time with it.
type deadlineCtx struct {
	context.Context // for values
	deadline        time.Time
	done            chan struct{}
	once            sync.Once
}

func newDeadlineCtx(parent context.Context, deadline time.Time) *deadlineCtx {
	return &deadlineCtx{Context: parent, deadline: deadline, done: make(chan struct{})}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *deadlineCtx) Done() <-chan struct{}       { return c.done }

func (c *deadlineCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *deadlineCtx) expire() { c.once.Do(func() { close(c.done) }) }
