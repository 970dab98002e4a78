package main

import (
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// outcome classifies one request.
type outcome int

const (
	// ok is a 2xx: the request did what was asked (an accepted action is a 202).
	ok outcome = iota
	// busy is a 409 busy to an action: the object's previous transition had not landed.
	// Counted apart, never as throughput.
	busy
	// failed is any other status.
	failed
	// broken is a transport error (no status at all).
	broken
)

// requestFunc sends one request for client c (0-based); seq counts that client's requests.
type requestFunc func(ctx context.Context, c, seq int) outcome

// loadSpec is one measurement: clients running do back to back for warmup, then measured for
// duration or until maxOK requests succeeded (0: no cap), whichever comes first.
type loadSpec struct {
	clients  int
	warmup   time.Duration
	duration time.Duration
	maxOK    int
	pid      int    // the server's process (group leader), for its CPU time
	more     []int  // more processes of the server (replicas, their database), with their children
	cores    string // the CPUs the server is pinned to, for how busy they were; "" for none
	// mine are the processes of the benchmark (this program, every server with its
	// children): the CPU time of all others is reported as other load.
	mine []int
}

// loadResult is what one measurement saw. Only requests that started and ended inside the
// measured window count.
type loadResult struct {
	OK, Busy, Failed, Broken int
	Elapsed                  time.Duration
	// Latencies of the OK requests, sorted.
	Latencies []time.Duration
	// ServerCPU and LoadCPU are the CPU time the server (with its children) and this program
	// used during the window.
	ServerCPU, LoadCPU time.Duration
	// CoreBusy is how busy the server's CPUs were, whoever used them (0 when not pinned).
	CoreBusy float64
	// OtherCPU is the CPU time processes outside the benchmark used meanwhile.
	OtherCPU time.Duration
}

// OtherShare is the other processes' CPU time in cores (0.5: half a CPU was taken from the
// benchmark on average).
func (r loadResult) OtherShare() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return r.OtherCPU.Seconds() / r.Elapsed.Seconds()
}

// Rate is OK requests per second.
func (r loadResult) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// CPUPerOK is the server's CPU time per OK request, in µs.
func (r loadResult) CPUPerOK() float64 {
	if r.OK == 0 {
		return 0
	}
	return float64(r.ServerCPU.Microseconds()) / float64(r.OK)
}

// LoadShare is the fraction of one core the load generator used: near 1, it may be the
// bottleneck rather than the server.
func (r loadResult) LoadShare() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return r.LoadCPU.Seconds() / r.Elapsed.Seconds()
}

const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// runLoad runs one measurement.
func runLoad(ctx context.Context, spec loadSpec, do requestFunc) loadResult {
	var phase atomic.Int32
	var okCount atomic.Int64
	capped := make(chan struct{})
	var capOnce sync.Once
	type clientResult struct {
		lat                      []time.Duration
		ok, busy, failed, broken int
	}
	results := make([]clientResult, spec.clients)
	var wg sync.WaitGroup
	for c := range spec.clients {
		wg.Go(func() {
			r := &results[c]
			r.lat = make([]time.Duration, 0, 4096)
			for seq := 0; ctx.Err() == nil; seq++ {
				p := phase.Load()
				if p == phaseStop {
					return
				}
				t := time.Now()
				o := do(ctx, c, seq)
				d := time.Since(t)
				if p != phaseMeasure || phase.Load() != phaseMeasure {
					continue
				}
				switch o {
				case ok:
					r.ok++
					r.lat = append(r.lat, d)
					if n := okCount.Add(1); spec.maxOK > 0 && n >= int64(spec.maxOK) {
						capOnce.Do(func() { close(capped) })
					}
				case busy:
					r.busy++
				case failed:
					r.failed++
				default:
					r.broken++
				}
			}
		})
	}
	sleepCtx(ctx, spec.warmup)
	// The server's process tree is read once: a server spawns nothing per request.
	tree, self := procTree(spec.pid), []int{os.Getpid()}
	for _, p := range spec.more {
		tree = append(tree, procTree(p)...)
	}
	mine := append(slices.Clone(spec.mine), os.Getpid())
	cpu0, self0, core0, other0 := sampleCPU(tree), sampleCPU(self), readCoreTimes(spec.cores), sampleOthers(mine)
	t0 := time.Now()
	phase.Store(phaseMeasure)
	timer := time.NewTimer(spec.duration)
	select {
	case <-timer.C:
	case <-capped:
	case <-ctx.Done():
	}
	timer.Stop()
	phase.Store(phaseStop)
	elapsed := time.Since(t0)
	cpu1, self1, core1, other1 := sampleCPU(tree), sampleCPU(self), readCoreTimes(spec.cores), sampleOthers(mine)
	wg.Wait()

	res := loadResult{Elapsed: elapsed, ServerCPU: cpuBetween(cpu0, cpu1), LoadCPU: cpuBetween(self0, self1),
		CoreBusy: core0.share(core1), OtherCPU: other1.since(other0)}
	for _, r := range results {
		res.OK += r.ok
		res.Busy += r.busy
		res.Failed += r.failed
		res.Broken += r.broken
		res.Latencies = append(res.Latencies, r.lat...)
	}
	slices.Sort(res.Latencies)
	return res
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// parallel runs f(i) for i in [0, n) on workers goroutines and returns the first error.
func parallel(parent context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = parent.Err()
	}
	return firstErr
}

// waitIdle waits until none of the processes (trees) uses more than 3% of a CPU over 100 ms,
// so that one system's leftovers (transitions still landing, a checkpoint) do not run during
// the next one's measurement on the same core. It returns how long it waited and whether the
// servers went idle before maxWait.
func waitIdle(ctx context.Context, pids []int, maxWait time.Duration) (time.Duration, bool) {
	start := time.Now()
	trees := make([][]int, len(pids))
	for i, p := range pids {
		trees[i] = procTree(p)
	}
	for time.Since(start) < maxWait && ctx.Err() == nil {
		before := make([]cpuSample, len(trees))
		for i, t := range trees {
			before[i] = sampleCPU(t)
		}
		sleepCtx(ctx, 100*time.Millisecond)
		idle := true
		for i, t := range trees {
			if cpuBetween(before[i], sampleCPU(t)) > 3*time.Millisecond {
				idle = false
			}
		}
		if idle {
			return time.Since(start), true
		}
	}
	return time.Since(start), false
}
