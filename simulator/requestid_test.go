package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// The internal texts the failing store below answers with: a file path, a database user,
// host and port. None may reach an answer; each must reach the log.
const (
	secretPath = "/var/lib/secret-dir/lifecyclesim.db"
	secretDSN  = "user=admin host=10.9.8.7:5432"
)

// faultyStore is a memory store whose reads, commits and pings fail as told.
type faultyStore struct {
	*memstore.Store
	mu                sync.Mutex
	getErr, commitErr error
	pingErr           error
}

func (s *faultyStore) fail(get, commit, ping error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.getErr, s.commitErr, s.pingErr = get, commit, ping
}

func (s *faultyStore) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	s.mu.Lock()
	err := s.getErr
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.Store.Get(ctx, tenant, id)
}

func (s *faultyStore) Commit(ctx context.Context, b store.Batch) error {
	s.mu.Lock()
	err := s.commitErr
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.Store.Commit(ctx, b)
}

func (s *faultyStore) Ping(ctx context.Context) error {
	s.mu.Lock()
	err := s.pingErr
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.Store.Ping(ctx)
}

// syncBuffer is a log destination the server's goroutines write to while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// lines returns the JSON log lines written so far.
func (w *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(w.b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// startFailing serves an engine over a faultyStore, logging JSON into the returned buffer.
func startFailing(t *testing.T) (*faultyStore, string, *syncBuffer) {
	t.Helper()
	st := &faultyStore{Store: memstore.New()}
	logs := &syncBuffer{}
	eng := engine.New(st, lifecycle.Builtin(), engine.NewManualClock(harnessT0), engine.Options{})
	srv := httptest.NewServer(httpapi.NewServer(eng, httpapi.ServerOptions{
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}))
	t.Cleanup(srv.Close)
	return st, srv.URL, logs
}

// call sends a request with an optional X-Request-Id and returns the answer's status,
// headers and body.
func call(t *testing.T, method, url, body, requestID string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if requestID != "" {
		req.Header.Set(wire.HeaderRequestID, requestID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// logLineOf returns the request log line with the request ID id.
func logLineOf(t *testing.T, logs *syncBuffer, id string) map[string]any {
	t.Helper()
	for _, l := range logs.lines(t) {
		if l["msg"] == "request" && l["request_id"] == id {
			return l
		}
	}
	t.Fatalf("no request log line has request_id %q:\n%v", id, logs.lines(t))
	return nil
}

// TestServerErrorsNameTheRequestNotTheCause: a 500 (a store failure that is no outage), a
// store outage (503 with Retry-After) and a /readyz failure answer a generic message with the
// request's ID (also in X-Request-Id) and none of the internal text (a file path, a database
// user and host), which goes to the request's log line instead.
func TestServerErrorsNameTheRequestNotTheCause(t *testing.T) {
	st, url, logs := startFailing(t)
	status, _, body := call(t, http.MethodPost, url+"/v1/accounts", `{"name":"acme"}`, "")
	if status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	var acct wire.Object
	if err := json.Unmarshal([]byte(body), &acct); err != nil {
		t.Fatal(err)
	}

	internal := errors.New("open " + secretPath + ": corrupt page (" + secretDSN + ")")
	outage := store.Unavailable(errors.New("write " + secretPath + "-log: no space left on device (" + secretDSN + ")"))
	tests := []struct {
		name               string
		get, commit, ping  error
		method, path, body string
		wantStatus         int
		wantCode           wire.Code
		wantRetryAfter     string
	}{
		{"internal read", internal, nil, nil, http.MethodGet, "/v1/accounts/" + acct.ID, "", http.StatusInternalServerError, wire.CodeInternal, ""},
		{"outage on write", nil, outage, nil, http.MethodPost, "/v1/accounts", `{"name":"other"}`, http.StatusServiceUnavailable, wire.CodeUnavailable, "1"},
		{"outage on read", outage, nil, nil, http.MethodGet, "/v1/accounts/" + acct.ID, "", http.StatusServiceUnavailable, wire.CodeUnavailable, "1"},
		{"readyz", nil, nil, internal, http.MethodGet, "/readyz", "", http.StatusServiceUnavailable, wire.CodeUnavailable, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st.fail(tt.get, tt.commit, tt.ping)
			defer st.fail(nil, nil, nil)
			status, h, body := call(t, tt.method, url+tt.path, tt.body, "")
			id := h.Get(wire.HeaderRequestID)
			if status != tt.wantStatus || id == "" || h.Get("Retry-After") != tt.wantRetryAfter {
				t.Fatalf("%s %s = %d, X-Request-Id %q, Retry-After %q; want %d, an ID, Retry-After %q (%s)",
					tt.method, tt.path, status, id, h.Get("Retry-After"), tt.wantStatus, tt.wantRetryAfter, body)
			}
			for _, secret := range []string{secretPath, "secret-dir", "admin", "10.9.8.7", "5432", "no space", "corrupt"} {
				if strings.Contains(body, secret) {
					t.Errorf("%s %s answered internal text %q: %s", tt.method, tt.path, secret, body)
				}
			}
			var env wire.ErrorBody
			if err := json.Unmarshal([]byte(body), &env); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			if env.Error.Code != string(tt.wantCode) || env.Error.RequestID != id || !strings.Contains(env.Error.Message, id) {
				t.Errorf("body = %+v, want code %s naming request ID %s", env.Error, tt.wantCode, id)
			}
			line := logLineOf(t, logs, id)
			if cause, _ := line["cause"].(string); !strings.Contains(cause, secretPath) && !strings.Contains(cause, secretDSN) {
				t.Errorf("log line of %s has cause %q, want the internal text", id, cause)
			}
		})
	}
}

// TestRequestIDs: every answer carries X-Request-Id (a 2xx, a 4xx, an unknown route): the
// client's own when it is valid, a new one otherwise, and the request's log line has it.
func TestRequestIDs(t *testing.T) {
	_, url, logs := startFailing(t)
	tests := []struct {
		name, path, sent string
		keep             bool
	}{
		{"healthz, none sent", "/healthz", "", false},
		{"kinds, valid", "/v1/kinds", "trace-42.a_b:c", true},
		{"not found, valid", "/v1/machines/machine-0000000000000000", "abc-123", true},
		{"unknown route, valid", "/nowhere", "x", true},
		{"too long", "/healthz", strings.Repeat("a", 129), false},
		{"bad bytes", "/healthz", "a b\"c", false},
		{"longest", "/healthz", strings.Repeat("b", 128), true},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, h, _ := call(t, http.MethodGet, url+tt.path, "", tt.sent)
			id := h.Get(wire.HeaderRequestID)
			switch {
			case tt.keep && id != tt.sent:
				t.Errorf("X-Request-Id = %q, want the client's %q", id, tt.sent)
			case !tt.keep && (id == tt.sent || len(id) != 32 || seen[id]):
				t.Errorf("X-Request-Id = %q, want a new 32-hex-digit ID (sent %q)", id, tt.sent)
			}
			seen[id] = true
			logLineOf(t, logs, id)
		})
	}
}
