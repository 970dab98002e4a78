package dialecttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
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

// Interleave runs the same work through two doors taking turns (which goes first alternates),
// timing each call: on a loaded machine both see the same load, so the ratio of their medians
// (and of their fastest) holds where two benchmarks run one after the other drift. It reports
// each door's median and the ratios of the dialect's to /v1's. Each door gets the loop's
// iteration number (for unique names).
func Interleave(b *testing.B, dialect string, door, v1 func(i int)) {
	b.Helper()
	var took [2][]time.Duration
	doors := [2]func(int){door, v1}
	i := 0
	for b.Loop() {
		i++
		for _, d := range []int{i % 2, 1 - i%2} {
			t := time.Now()
			doors[d](i)
			took[d] = append(took[d], time.Since(t))
		}
	}
	for d := range took {
		slices.Sort(took[d])
	}
	median := func(d int) time.Duration { return took[d][len(took[d])/2] }
	b.ReportMetric(float64(median(0).Microseconds()), dialect+"-µs-median")
	b.ReportMetric(float64(median(1).Microseconds()), "v1-µs-median")
	b.ReportMetric(float64(median(0))/float64(median(1)), "ratio-median")
	b.ReportMetric(float64(took[0][0])/float64(took[1][0]), "ratio-min")
}
