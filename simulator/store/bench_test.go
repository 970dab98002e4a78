package store_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore/sqlitetest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// BenchmarkDurableAccept measures the commit of an accepted action, as the engine writes it:
// one object from a static state to a transition state (version + 1, an operation, a due time),
// one event and an idempotency key, durable (the commit returns once it is synced). It runs on
// SQLite and on PostgreSQL (a cluster of its own with fsync on, in the same temporary
// directory's file system) in the same run, with 1 client and with 16 clients committing at
// once (each on its own objects: no compare-and-set fails), and reports commits/s. It compares
// two backends, so it is no backend's test.
//
//	go test -run '^$' -bench DurableAccept -benchtime 5s ./simulator/store
func BenchmarkDurableAccept(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", func(b *testing.B) store.Store {
			return sqlitetest.Open(b, filepath.Join(b.TempDir(), "bench.db"))
		}},
		{"postgres", func(b *testing.B) store.Store {
			c, err := pgtest.Start(b.Context(), pgtest.Options{Durable: true})
			if err != nil {
				pgtest.Unavailable(b, err)
			}
			b.Cleanup(func() { _ = c.Stop() })
			name, err := c.CreateDatabase(b.Context(), true)
			if err != nil {
				b.Fatal(err)
			}
			s, err := pgstore.Open(b.Context(), c.URL(name))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
	for _, st := range stores {
		for _, clients := range []int{1, 16} {
			b.Run(fmt.Sprintf("store=%s/clients=%d", st.name, clients), func(b *testing.B) {
				benchmarkAccept(b, st.open(b), clients)
			})
		}
	}
}

// benchmarkAccept runs accepted actions from clients goroutines, each on objects of its own.
func benchmarkAccept(b *testing.B, s store.Store, clients int) {
	const perClient = 64
	ctx := b.Context()
	objs := make([][]*store.Object, clients)
	for c := range objs {
		var batch store.Batch
		for i := range perClient {
			o := storetest.NewObject(fmt.Sprintf("machine-%04d%012d", c, i), "acme", "machine")
			o.State = "RUNNING"
			o.Spec = map[string]any{"memory": 2048.0, "image": "ubuntu-24.04", "cloudspace_id": "cloudspace-0001"}
			batch.Writes = append(batch.Writes, store.Write{Object: o})
			objs[c] = append(objs[c], o)
		}
		if err := s.Commit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	var next, keys atomic.Int64
	b.ResetTimer()
	start := time.Now()
	runClients(b, clients, func(c int) error {
		for {
			n := next.Add(1)
			if n > int64(b.N) {
				return nil
			}
			o := objs[c][n%perClient]
			expect := o.Version
			o.Version++
			if o.State == "RUNNING" {
				o.State = "STOPPING"
				o.Op = &store.Operation{ID: "op-" + strconv.FormatInt(n, 10), Action: "stop", From: "RUNNING",
					StartedAt: storetest.T0, PhaseStarted: storetest.T0}
				o.Due = storetest.T0.Add(30 * time.Second)
			} else {
				o.State, o.Op, o.Due = "RUNNING", nil, time.Time{}
			}
			ev := storetest.NewEvent(o, o.State)
			err := s.Commit(ctx, store.Batch{Key: "key-" + strconv.FormatInt(keys.Add(1), 10), KeyAt: storetest.T0,
				Writes: []store.Write{{Object: o, Expect: expect, Events: []store.Event{ev}}}})
			if err != nil {
				return err
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
}

// runClients runs fn in clients goroutines and fails the benchmark with the first error.
func runClients(b *testing.B, clients int, fn func(c int) error) {
	errs := make(chan error, clients)
	for c := range clients {
		go func() { errs <- fn(c) }()
	}
	for range clients {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}
