package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Also: a panic is a 500 in the envelope, counted, never a dropped connection.
func TestHardenRecover(t *testing.T) {
	m := NewMetrics(store.NewMemStore())
	e := engine.New(store.NewMemStore(), lifecycle.Builtin(), engine.NewManualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)), engine.Options{})
	s := NewServer(e, ServerOptions{Metrics: m})
	s.echo.GET("/test-panic", func(echo.Context) error { panic("boom") })
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/test-panic")
	if err != nil {
		t.Fatal(err)
	}
	var body wire.ErrorBody
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusInternalServerError || body.Error.Code != string(wire.CodeInternal) {
		t.Fatalf("GET /test-panic = %d %+v (%v), want 500 internal", resp.StatusCode, body, err)
	}
	if strings.Contains(body.Error.Message, "boom") {
		t.Errorf("the panic value leaked into the answer: %q", body.Error.Message)
	}
	resp, err = http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "lifecyclesim_http_panics_total 1") {
		t.Errorf("panic not counted")
	}
}

// TestSQLiteJournalMetrics: /metrics shows the journal's counters under the names
// `make bench-scale` reads to wait until a server's journal is checkpointed.
func TestSQLiteJournalMetrics(t *testing.T) {
	s := storetest.OpenSQLite(t, filepath.Join(t.TempDir(), "metrics.db"))
	for i := range 3 {
		if err := s.Commit(t.Context(), store.Batch{Writes: []store.Write{{Object: storetest.NewObject(fmt.Sprint("m", i), "acme", "machine")}}}); err != nil {
			t.Fatal(err)
		}
	}
	storetest.Checkpointed(t, s)
	mfs, err := NewMetrics(s).Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "lifecyclesim_store_") {
			got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	for name, want := range map[string]float64{
		"lifecyclesim_store_journal_commits_total":      3,
		"lifecyclesim_store_checkpointed_commits_total": 3,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v (all: %v)", name, got[name], want, got)
		}
	}
	if got["lifecyclesim_store_checkpoints_total"] < 1 || got["lifecyclesim_store_checkpoint_seconds_total"] <= 0 {
		t.Errorf("checkpoints and their time = %v, %v; want at least one, taking some time (all: %v)",
			got["lifecyclesim_store_checkpoints_total"], got["lifecyclesim_store_checkpoint_seconds_total"], got)
	}
}
