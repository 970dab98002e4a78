package client

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
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
