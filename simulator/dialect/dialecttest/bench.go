package dialecttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// BenchSim starts the simulator a dialect's benchmark runs on: in-memory, no worker (objects
// stay where a request left them), the clock stopped at now, and no bound on the objects a
// tenant holds (a benchmark makes b.N of them).
func BenchSim(b testing.TB, now time.Time) *simtest.Sim {
	return simtest.Start(b, simtest.WithClock(engine.NewManualClock(now)), simtest.WithoutWorker(),
		simtest.WithEngineOptions(func(o *engine.Options) { o.MaxObjects = 10_000_000 }))
}

// Send sends a request with body (JSON; none if nil) and reads its answer, failing unless it
// has the status want.
func Send(b testing.TB, hc *http.Client, method, url string, body any, want int) {
	b.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			b.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("%s %s = %d %s, want %d", method, url, resp.StatusCode, raw, want)
	}
}
