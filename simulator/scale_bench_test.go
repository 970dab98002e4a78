package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore/sqlitetest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// BenchmarkStoreScale measures each store operation the API and the worker use at 1k, 10k and
// 100k objects (each with three events): a cost that grows with the number of objects shows
// as a larger ns/op at a larger size. heap-B/object is the live heap per object after the
// fill. Run: go test -run '^$' -bench StoreScale -benchtime 2000x ./simulator/
func BenchmarkStoreScale(b *testing.B) {
	sizes := []int{1_000, 10_000, 100_000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, st := range scaleStores {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", st.name, n), func(b *testing.B) {
				held := heldBy()
				s := st.open(b)
				ids := fillScale(b, s, n)
				_, bytes := held(n)
				benchScaleOps(b, s, ids, bytes)
			})
		}
	}
}

// scaleStores are the stores the scale benchmarks fill.
var scaleStores = []struct {
	name string
	open func(b *testing.B) store.Store
}{
	{"mem", func(*testing.B) store.Store { return memstore.New() }},
	{"sqlite", func(b *testing.B) store.Store { return sqlitetest.Open(b, filepath.Join(b.TempDir(), "scale.db")) }},
}

// heldBy starts measuring the live heap; the function it returns says how many heap objects
// and bytes per object what was made since holds (n objects), after a collection.
func heldBy() func(n int) (objects, bytes float64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	return func(n int) (float64, float64) {
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		return float64(after.HeapObjects-min(before.HeapObjects, after.HeapObjects)) / float64(n),
			float64(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc)) / float64(n)
	}
}

// fillScale stores n machines under n/100 cloudspaces: 1% HALTED, a tenth of them due.
func fillScale(b *testing.B, s store.Store, n int) []string {
	b.Helper()
	ctx := b.Context()
	ids := make([]string, n)
	var batch store.Batch
	for i := range n {
		o := storetest.NewObject(fmt.Sprintf("machine-%016x", i*7919%n), "acme", "machine")
		o.ParentID = fmt.Sprintf("cloudspace-%08d", i%max(n/100, 1))
		o.State = "RUNNING"
		if i%100 == 0 {
			o.State = "HALTED"
		}
		if i%10 == 0 {
			o.Due = storetest.T0.Add(time.Duration(i) * time.Second)
		}
		o.Spec = map[string]any{"image_id": "image-0001", "vcpus": 2.0, "memory_mb": 2048.0, "disk_gb": 20.0}
		o.Status = map[string]any{"ip": "10.0.0.1"}
		ids[i] = o.ID
		batch.Writes = append(batch.Writes, store.Write{Object: o, Events: []store.Event{
			storetest.NewEvent(o, "DEPLOYING"), storetest.NewEvent(o, "RUNNING"), storetest.NewEvent(o, "RUNNING")}})
		if len(batch.Writes) == 1000 || i == n-1 {
			if err := s.Commit(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = store.Batch{}
		}
	}
	return ids
}

func benchScaleOps(b *testing.B, s store.Store, ids []string, perObject float64) {
	ctx := b.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return ids[rng.IntN(len(ids))] }
	run := func(name string, op func() error) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(perObject, "heap-B/object")
		})
	}
	run("get", func() error { _, err := s.Get(ctx, "acme", pick()); return err })
	run("list", func() error {
		_, err := s.List(ctx, "acme", store.Filter{Kind: "machine", After: pick(), Limit: 100})
		return err
	})
	run("list-state", func() error {
		_, err := s.List(ctx, "acme", store.Filter{Kind: "machine", State: "HALTED", Limit: 100})
		return err
	})
	run("list-parent", func() error {
		o, err := s.Get(ctx, "acme", pick())
		if err != nil {
			return err
		}
		_, err = s.List(ctx, "acme", store.Filter{ParentID: o.ParentID, Limit: 100})
		return err
	})
	run("next-due", func() error { _, _, err := s.NextDue(ctx); return err })
	run("update", func() error {
		o, err := s.Get(ctx, "acme", pick())
		if err != nil {
			return err
		}
		if o.State == "HALTED" { // move it between the state indexes, as an action does
			o.State = "RUNNING"
		} else {
			o.State = "HALTED"
		}
		return storetest.Update(ctx, s, o, storetest.NewEvent(o, o.State))
	})
}

// BenchmarkSQLiteGroupCommit updates 512 objects drawn at random from a store of 1k or 100k
// objects, from 16 goroutines at once, each update with an event and waited for, as accepted
// actions are: group commit shares the fsyncs, and cpu-µs/op (the process's CPU, checkpoints
// included) should not grow with the store. Run:
// go test -run '^$' -bench SQLiteGroupCommit -benchtime 20000x ./simulator/
func BenchmarkSQLiteGroupCommit(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := sqlitetest.Open(b, filepath.Join(b.TempDir(), "group.db"))
			all := fillScale(b, s, n)
			hot := make([]string, 512)
			for i, k := range rand.New(rand.NewPCG(3, 4)).Perm(n)[:len(hot)] {
				hot[i] = all[k]
			}
			benchGroupCommit(b, s, hot)
		})
	}
}

func benchGroupCommit(b *testing.B, s *sqlitestore.Store, ids []string) {
	ctx := b.Context()
	b.SetParallelism(8) // 16 committers on 2 cores
	var next atomic.Int64
	storetest.Checkpointed(b, s) // the fill's checkpoints are not the benchmark's
	j0 := s.JournalStats()
	b.ResetTimer()
	cpu0 := processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := ids[next.Add(1)%int64(len(ids))]
			for {
				o, err := s.Get(ctx, "acme", id)
				if err != nil {
					b.Error(err)
					return
				}
				o.Status["n"] = float64(next.Load())
				err = storetest.Update(ctx, s, o, storetest.NewEvent(o, o.State))
				if err == nil {
					break
				}
				if !errors.Is(err, store.ErrVersion) {
					b.Error(err)
					return
				}
			}
		}
	})
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	j := s.JournalStats()
	b.ReportMetric(float64(j.Commits-j0.Commits)/float64(max(j.Transactions-j0.Transactions, 1)), "commits/txn")
}

// processCPU is the user and system CPU time the test process used so far: on a shared
// machine it varies less than wall time.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStoreMark measures what a store's objects cost the garbage collector: a full
// collection (ns/op, mostly marking) with 100k objects in the store, each created and then
// changed once through Get and Commit as the server does (so its strings are the decoded
// ones), the heap objects the store holds per object, and the bytes of them the collector must
// scan (scan-B/object: unlike ns/op, the machine's load does not move it). Every collection of a busy server
// pays this mark, so a request's share of it grows with the store unless the store keeps it
// small. Run: go test -run '^$' -bench StoreMark ./simulator/
func BenchmarkStoreMark(b *testing.B) {
	for _, st := range scaleStores {
		b.Run(st.name, func(b *testing.B) {
			const n = 100_000
			held := heldBy()
			scan0 := scannableHeap()
			s := st.open(b)
			ids := fillScale(b, s, n)
			var wg sync.WaitGroup
			for w := range 16 { // the SQLite store's updates share their syncs
				wg.Go(func() {
					for i := w; i < n; i += 16 {
						o, err := s.Get(b.Context(), "acme", ids[i])
						if err == nil {
							o.Status["ip"] = "10.0.0.2"
							err = storetest.Update(b.Context(), s, o, storetest.NewEvent(o, o.State))
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			objects, bytes := held(n)
			scan1 := scannableHeap()
			scan := float64(scan1-min(scan0, scan1)) / n
			for b.Loop() {
				runtime.GC()
			}
			runtime.KeepAlive(s)
			b.ReportMetric(objects, "heap-objects/object")
			b.ReportMetric(bytes, "heap-B/object")
			b.ReportMetric(scan, "scan-B/object")
		})
	}
}

// scannableHeap is the heap the garbage collector had to scan (the part of live objects that
// may hold pointers) at the end of the last collection: unlike a collection's time, it does
// not vary with the machine's load.
func scannableHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkCreateScale creates cloudspaces over HTTP, from 16 clients, in a server holding 1k
// or 100k of them (1000 per account), with the worker landing each create's deploy on a tiny
// time scale: what bench-scale's create measures, in one process. cpu-µs/op is the process's
// CPU per create, its landing included; it should not grow with the store. Run:
// go test -run '^$' -bench CreateScale -benchtime 20000x ./simulator/ (with BENCH_CPUPROFILE=cpu,
// a CPU profile of the creates at each store and size goes to cpu.mem.1000 and so on).
func BenchmarkCreateScale(b *testing.B) {
	sizes := []int{1_000, 100_000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, st := range scaleStores {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", st.name, n), func(b *testing.B) {
				s := st.open(b)
				h := newTestServer(b, harnessOptions{store: s, worker: true, timeScale: 0.001, maxObjects: 1 << 22, noInvariants: true})
				h.srv.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = 64
				var seq atomic.Int64
				post := func(coll, parent string) string {
					r, err := h.request(http.MethodPost, "/v1/"+coll, client.CreateRequest{Name: fmt.Sprint("c-", seq.Add(1)), ParentID: parent})
					var o client.Object
					if err == nil && r.Status < 300 {
						err = json.Unmarshal(r.Body, &o)
					}
					if err != nil || r.Status >= 300 {
						b.Errorf("POST %s = %v, %v", coll, r, err) // from the clients' goroutines: no Fatal
					}
					return o.ID
				}
				settled := func() {
					for {
						if _, ok, err := s.NextDue(b.Context()); err != nil || !ok {
							return
						}
						time.Sleep(10 * time.Millisecond)
					}
				}
				accounts := make([]string, (n+999)/1000)
				for i := range accounts {
					accounts[i] = post("accounts", "")
				}
				settled()
				var wg sync.WaitGroup
				var left atomic.Int64
				left.Store(int64(n))
				for range 16 {
					wg.Go(func() {
						for i := left.Add(-1); i >= 0; i = left.Add(-1) {
							post("cloudspaces", accounts[int(i)%len(accounts)])
						}
					})
				}
				wg.Wait()
				settled()
				b.Run("create", func(b *testing.B) { // the fill above runs once, this twice (b.N 1, then N)
					runtime.GC()
					b.SetParallelism(8)                              // 16 clients on 2 cores
					if p := os.Getenv("BENCH_CPUPROFILE"); p != "" { // the creates only, not the fill
						f, err := os.Create(fmt.Sprintf("%s.%s.%d", p, st.name, n))
						if err != nil {
							b.Fatal(err)
						}
						defer f.Close()
						if err := pprof.StartCPUProfile(f); err != nil {
							b.Fatal(err)
						}
						defer pprof.StopCPUProfile()
					}
					b.ResetTimer()
					cpu0 := processCPU(b)
					var k atomic.Int64
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							post("cloudspaces", accounts[int(k.Add(1))%len(accounts)])
						}
					})
					settled()
					b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
				})
			})
		}
	}
}
