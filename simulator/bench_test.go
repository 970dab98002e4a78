package simulator

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
)

// The benchmarks measure the HTTP path: an httptest.Server and a net/http client with
// keep-alive, JSON both ways. req/s is HTTP requests per second of the benchmark's time.

func reportReqs(b *testing.B, perOp int) {
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "req/s")
}

func benchStores(b *testing.B, fn func(b *testing.B, store store.Store)) {
	b.Run("mem", func(b *testing.B) { fn(b, memstore.New()) })
	b.Run("sqlite", func(b *testing.B) {
		s, _ := openTestSQLite(b)
		fn(b, s)
	})
}

func BenchmarkGet(b *testing.B) {
	benchStores(b, func(b *testing.B, store store.Store) {
		h := newTestServer(b, harnessOptions{store: store})
		_, cs := h.openvcloud()
		m := h.runningMachine(cs.ID, "web")
		path := objPath("machines", m.ID)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			r, err := h.request(http.MethodGet, path, nil)
			if err != nil || r.Status != http.StatusOK {
				b.Fatalf("GET = %v, %v", r, err)
			}
		}
		reportReqs(b, 1)
	})
}

func BenchmarkGetParallel(b *testing.B) {
	h := newTestServer(b, harnessOptions{})
	h.srv.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	path := objPath("machines", m.ID)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := h.request(http.MethodGet, path, nil)
			if err != nil || r.Status != http.StatusOK {
				b.Errorf("GET = %v, %v", r, err)
				return
			}
		}
	})
	reportReqs(b, 1)
}

// BenchmarkActionAccept measures accepting an action (POST reboot → 202, one compare-and-set
// and one event in the store). Completing the reboot (the clock moved, the engine ticked) is
// needed before the next one and is left out of the measure.
func BenchmarkActionAccept(b *testing.B) {
	benchStores(b, func(b *testing.B, store store.Store) {
		h := newTestServer(b, harnessOptions{store: store})
		_, cs := h.openvcloud()
		m := h.runningMachine(cs.ID, "web")
		path := objPath("machines", m.ID) + "/actions/reboot"
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r, err := h.request(http.MethodPost, path, nil)
			if err != nil || r.Status != http.StatusAccepted {
				b.Fatalf("POST reboot = %v, %v", r, err)
			}
			b.StopTimer()
			h.advance(2 * time.Second)
			b.StartTimer()
		}
		reportReqs(b, 1)
	})
}

// BenchmarkActionRoundTrip is an action and the long-poll that sees it finish, with the
// worker on the wall clock and a tiny time scale (a 2s phase takes 20µs): what a waiter
// costs end to end.
func BenchmarkActionRoundTrip(b *testing.B) {
	benchStores(b, func(b *testing.B, store store.Store) {
		h := newTestServer(b, harnessOptions{store: store, worker: true, timeScale: 0.00001})
		a := h.create("accounts", client.CreateRequest{Name: "acme"})
		cs := h.create("cloudspaces", client.CreateRequest{Name: "net", ParentID: a.ID})
		waitState(b, h, "cloudspaces", cs.ID, "DEPLOYED")
		m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID})
		waitState(b, h, "machines", m.ID, "RUNNING")
		act := objPath("machines", m.ID) + "/actions/reboot"
		wait := objPath("machines", m.ID) + "?wait=static&timeout=10s"
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			r, err := h.request(http.MethodPost, act, nil)
			if err != nil || r.Status != http.StatusAccepted {
				b.Fatalf("POST reboot = %v, %v", r, err)
			}
			r, err = h.request(http.MethodGet, wait, nil)
			if err != nil || r.Status != http.StatusOK {
				b.Fatalf("long-poll = %v, %v", r, err)
			}
			var o client.Object
			if err := json.Unmarshal(r.Body, &o); err != nil || !o.Static || o.State != "RUNNING" {
				b.Fatalf("long-poll answered %s (static %v), want RUNNING", o.State, o.Static)
			}
		}
		reportReqs(b, 2)
	})
}
