package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Also: a panic is a 500 in the envelope, counted, never a dropped connection.
func TestHardenRecover(t *testing.T) {
	m := NewMetrics(MetricsSources{Counts: memstore.New().Counts})
	e := engine.New(memstore.New(), lifecycle.Builtin(), engine.NewManualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)), engine.Options{})
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
