package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
)

// downStore is a store whose Ping fails.
type downStore struct{ store.Store }

func (downStore) Ping(context.Context) error { return errors.New("disk on fire") }

func TestReadyz(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	r := h.do(http.MethodGet, "/readyz", nil)
	wantStatus(t, r, "/readyz", http.StatusOK)
	if got := decodeAs[struct{ Status string }](t, r); got.Status != "ready" {
		t.Errorf("/readyz = %+v, want ready", got)
	}

	down := newTestServer(t, harnessOptions{store: downStore{memstore.New()}})
	r = down.do(http.MethodGet, "/readyz", nil)
	e := wantAPIError(t, r, http.StatusServiceUnavailable, client.CodeUnavailable)
	if strings.Contains(e.Message, "disk on fire") || e.RequestID == "" || r.Header.Get("Retry-After") == "" {
		t.Errorf("/readyz with a failing store = %s (Retry-After %q), want a Retry-After and the request's ID, not the cause (it is logged)", r, r.Header.Get("Retry-After"))
	}
	// Liveness does not depend on the store.
	wantStatus(t, down.do(http.MethodGet, "/healthz", nil), "/healthz", http.StatusOK)
}

func TestSQLiteStorePing(t *testing.T) {
	s, _ := openTestSQLite(t)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping = %v", err)
	}
	_ = s.Close()
	if err := s.Ping(context.Background()); err == nil {
		t.Error("Ping of a closed store = nil, want an error")
	}
}

func TestRequestLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e := engine.New(memstore.New(), lifecycle.Builtin(), engine.NewManualClock(harnessT0), engine.Options{})
	srv := httptest.NewServer(httpapi.NewServer(e, httpapi.ServerOptions{Logger: log, Version: "1.2.3", Tokens: map[string]string{"s3cret": "acme"}}))
	for _, p := range []string{"/healthz", "/v1/kinds", "/v1/machines/machine-1"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+p, nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	// A request is logged after its answer is sent: Close waits for the handlers to finish.
	srv.Close()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		lines = append(lines, m)
	}
	// /healthz is a probe: debug only, so not logged at info.
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want 2 (probes at debug only):\n%s", len(lines), buf.String())
	}
	// Lines come in the order requests finish, not the order they were sent.
	slices.SortFunc(lines, func(a, b map[string]any) int { return strings.Compare(fmt.Sprint(a["path"]), fmt.Sprint(b["path"])) })
	if l := lines[0]; l["msg"] != "request" || l["path"] != "/v1/kinds" || l["status"] != float64(200) || l["tenant"] != "acme" {
		t.Errorf("kinds line = %v, want GET /v1/kinds 200 for tenant acme", l)
	}
	if l := lines[1]; l["status"] != float64(404) || l["error"] != "not_found" || l["route"] != "/v1/:collection/:id" {
		t.Errorf("object line = %v, want a 404 not_found on the object route", l)
	}
}
