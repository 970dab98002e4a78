package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// actDuration is how long an action run at cfg.scaleConc clients lasts: never shorter than
// the other runs.
func (cfg *config) actDuration() time.Duration { return max(cfg.scaleDur, cfg.scaleActDur) }

// scaleOps are measured at each size, in this order (create last: it adds objects).
var scaleOps = []string{"get", "list", "list_state", "list_parent", "act", "create"}

var scaleOpTitles = map[string]string{
	"get":         "GET one cloudspace (random)",
	"list":        "list ?limit=100",
	"list_state":  "list ?state=DISABLED (10 match)",
	"list_parent": "list ?parent_id= (50 match)",
	"act":         "accepted action (reset)",
	"create":      "create (cloudspace)",
}

// rssLimitAt100k is the most RSS a server may hold at 100,000 objects and more.
const rssLimitAt100k = 150 << 20

// minScaleSize is the smallest size: the probe account and its 50 cloudspaces, and some to fill.
const minScaleSize = 100

// fillPerAccount is how many fill cloudspaces share one account.
const fillPerAccount = 1000

// probeObjects are the probe account and its cloudspaces, made before the fill.
const probeObjects = 51

// sizeResult is one store at one size.
type sizeResult struct {
	target  int
	objects int // objects in the tenant when the size was measured (before its creates)
	after   int // and after them
	mem     memory
	heap    heapFigure // zero when not read (-heap-profile=false)
	fill    time.Duration
	// rounds are every round of an operation, at 1 client [0] and at cfg.scaleConc [1], in
	// the order they ran: round i of every size ran one after the other.
	rounds map[string][2][]loadResult
}

// median is the round of an operation with the median rate, at 1 client (pass 0) or at
// cfg.scaleConc clients (pass 1).
func (s sizeResult) median(op string, pass int) loadResult {
	return medianRound(s.rounds[op][pass])
}

func runScale(ctx context.Context, cfg *config, out, raw io.Writer) error {
	sizes, err := intList(cfg.sizes)
	if err != nil {
		return fmt.Errorf("-sizes: %w", err)
	}
	if !slices.IsSorted(sizes) {
		return fmt.Errorf("-sizes %q must grow", cfg.sizes)
	}
	if sizes[0] < minScaleSize {
		return fmt.Errorf("-sizes %q: each size must be at least %d (the probe account holds 51 objects)", cfg.sizes, minScaleSize)
	}
	stores := names(cfg.stores)
	var fs *fsyncResult
	if slices.Contains(stores, "sqlite") {
		r, err := measureFsync(cfg.workdir, cfg.fsyncN)
		if err != nil {
			return fmt.Errorf("fsync measurement: %w", err)
		}
		progress("%s", r)
		fs = &r
	}
	fmt.Fprintf(raw, "# benchcompare -mode scale %s\n", cfg.label)
	if fs != nil {
		fmt.Fprintf(raw, "# %s\n", fs)
	}
	fmt.Fprintf(raw, "# time_scale=%g duration=%v act_duration=%v warmup=%v rounds=%d creates=%d clients=1,%d fill_clients=%d sim_args=%q\n",
		cfg.timeScale, cfg.scaleDur, cfg.actDuration(), cfg.scaleWarm, cfg.scaleRounds, cfg.scaleCreates, cfg.scaleConc, cfg.fillClients, cfg.simArgs)
	fmt.Fprintln(raw, "# store\tsize\tobjects\top\tclients\tround\tok\tbusy409\tnon2xx\ttransport_err\telapsed_s\treq_per_s\tp50_us\tp99_us\tserver_cpu_us_per_req\trss_bytes\thwm_bytes\tfill_s\tother_processes_cpus\theap_inuse_bytes")
	begin := time.Now()
	all := map[string][]sizeResult{}
	labels, notes := map[string]string{}, map[string]string{}
	for _, store := range stores {
		_, label, err := storeArgs(store, cfg.workdir)
		if err != nil {
			return fmt.Errorf("-stores: %w", err)
		}
		labels[store] = label
		res, note, err := scaleStore(ctx, cfg, store, label, sizes, raw)
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		all[store], notes[store] = res, note
	}
	progress("scale done in %v", time.Since(begin).Round(time.Second))
	writeScaleReport(out, cfg, fs, stores, labels, notes, all)
	return nil
}

// scaleTarget is one server of a store filled to one size.
type scaleTarget struct {
	srv      *server
	api      *simAPI
	probe    string
	objects  int
	accounts []string
	filled   []string
	created  atomic.Int64
	res      sizeResult
	// heapURL is where the server serves its heap profile ("" when not asked).
	heapURL string
}

// scaleStore runs one server of the store per size, fills each, and then measures them side
// by side: every round of an operation goes through the sizes in turn, so a machine that
// slows down for a while slows all sizes alike and their ratios hold. A fill slower than
// cfg.fillBudget ends the filling early: the sizes filled so far are measured, with a note.
func scaleStore(ctx context.Context, cfg *config, store, label string, sizes []int, raw io.Writer) ([]sizeResult, string, error) {
	var targets []*scaleTarget
	defer func() {
		for _, t := range targets {
			t.srv.stop()
		}
	}()
	var note string
	for _, size := range sizes {
		args, _, err := storeArgs(store, cfg.workdir) // a new SQLite file each
		if err != nil {
			return nil, "", err
		}
		var heapURL string
		if cfg.heapProfile {
			var more []string
			if more, heapURL, err = pprofArgs(); err != nil {
				return nil, "", err
			}
			args = append(args, more...)
		}
		srv, api, err := startSim(ctx, cfg, label, args, cfg.timeScale,
			filepath.Join(cfg.workdir, fmt.Sprintf("scale-%s-%d.log", store, size)))
		if err != nil {
			return nil, "", err
		}
		t := &scaleTarget{srv: srv, api: api, heapURL: heapURL}
		targets = append(targets, t)
		if note, err = t.fill(ctx, cfg, store, label, size); err != nil {
			return nil, "", err
		}
		if note != "" {
			fmt.Fprintf(raw, "# %s: %s\n", store, note)
			targets = targets[:len(targets)-1]
			srv.stop()
			break
		}
	}
	// Every server is the benchmark's own: none counts as another process, and each waits
	// until all are idle (the last size's landings and checkpoints done).
	var pids, mine []int
	for _, t := range targets {
		pids = append(pids, t.srv.pid())
		mine = append(mine, procTree(t.srv.pid())...)
	}
	for _, op := range scaleOps {
		for pass, n := range []int{1, cfg.scaleConc} {
			rounds := make([][]loadResult, len(targets))
			for r := range cfg.scaleRounds {
				for i, t := range targets {
					size := t.res.target
					for _, o := range targets {
						if err := o.api.checkpointed(ctx, 60*time.Second); err != nil {
							return nil, "", err
						}
					}
					if waited, idle := waitIdle(ctx, pids, 60*time.Second); !idle {
						progress("the servers still use CPU after %v; measuring anyway", waited.Round(time.Second))
						fmt.Fprintf(raw, "# not idle after %v before %s %d %s %d round %d\n", waited.Round(time.Second), store, size, op, n, r+1)
					}
					spec := loadSpec{clients: n, warmup: cfg.scaleWarm, duration: cfg.scaleDur, pid: t.srv.pid(), cores: cfg.serverCPU, mine: mine}
					if op == "act" && n > 1 {
						// The SQLite store checkpoints its journal every few thousand changes and
						// copies its WAL into the file every few dozen checkpoints: bursts a
						// one-second run holds or misses by chance.
						spec.duration = cfg.actDuration()
					}
					if op == "create" {
						// Creates grow the store: no warm-up, and the same number at every size
						// (the count ends the run, not the time), so that every size pays for
						// the same journal checkpoints.
						spec.warmup, spec.maxOK, spec.duration = 0, cfg.scaleCreates, max(cfg.scaleDur, 5*time.Minute)
					}
					res := runLoad(ctx, spec, scaleRequest(t.api, op, n, t.probe, t.filled, t.accounts, &t.created))
					if err := ctx.Err(); err != nil {
						return nil, "", err
					}
					rounds[i] = append(rounds[i], res)
					mem := t.res.mem
					fmt.Fprintf(raw, "%s\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.1f\t%d\t%d\t%.1f\t%d\t%d\t%.1f\t%.2f\t%d\n",
						store, size, t.res.objects, op, n, r+1, res.OK, res.Busy, res.Failed, res.Broken, res.Elapsed.Seconds(), res.Rate(),
						percentile(res.Latencies, 50).Microseconds(), percentile(res.Latencies, 99).Microseconds(), res.CPUPerOK(),
						mem.RSS, mem.HWM, t.res.fill.Seconds(), res.OtherShare(), t.res.heap.InUse)
					progress("%s %7d objects  %-12s %2d clients round %d  %9.0f req/s  p50 %-8s cpu %7.1f µs/req  others %.2f CPUs  busy %d  errors %d",
						store, t.res.objects, op, n, r+1, res.Rate(), fmtDur(percentile(res.Latencies, 50)), res.CPUPerOK(), res.OtherShare(), res.Busy, res.Failed+res.Broken)
				}
			}
			for i, t := range targets {
				all := t.res.rounds[op]
				all[pass] = rounds[i]
				t.res.rounds[op] = all
			}
		}
	}
	out := make([]sizeResult, len(targets))
	for i, t := range targets {
		t.res.after = t.res.objects + int(t.created.Load())
		out[i] = t.res
	}
	return out, note, nil
}

// fill makes the probe account (50 cloudspaces, 10 of them DISABLED: the filtered lists
// answer the same objects at every size, so their cost shows only how the store finds them)
// and fills the server to size objects, waits until their transitions landed and reads its
// memory. A fill that takes longer than cfg.fillBudget stops with a note.
func (t *scaleTarget) fill(ctx context.Context, cfg *config, store, label string, size int) (string, error) {
	api := t.api
	probe, err := api.createStatic(ctx, "accounts", "probe", "", nil, "CONFIRMED")
	if err != nil {
		return "", err
	}
	probeCS := make([]string, probeObjects-1)
	err = parallel(ctx, len(probeCS), 8, func(ctx context.Context, i int) error {
		id, err := api.createStatic(ctx, "cloudspaces", "probe-"+strconv.Itoa(i), probe, nil, "DEPLOYED")
		if err == nil && i < 10 {
			err = api.actStatic(ctx, "cloudspaces", id, "disable", "DISABLED")
		}
		probeCS[i] = id
		return err
	})
	if err != nil {
		return "", err
	}
	t.probe, t.objects = probe, probeObjects
	progress("%s: filling to %d objects", label, size)
	start, lastNote := time.Now(), time.Now()
	for t.objects < size {
		if time.Since(start) > cfg.fillBudget {
			rate := float64(t.objects-probeObjects) / time.Since(start).Seconds()
			rss := "?"
			if mem, err := treeMemory(t.srv.pid()); err == nil {
				rss = fmt.Sprintf("%.1f MiB", float64(mem.RSS)/(1<<20))
			}
			note := fmt.Sprintf("filling to %s objects stopped after %v at %s objects (%.0f creates/s over that fill; RSS then %s, transitions may still have been landing); it and larger sizes not measured (-fill-budget)",
				thousands(int64(size)), cfg.fillBudget, thousands(int64(t.objects)), rate, rss)
			progress("%s: %s", label, note)
			return note, nil
		}
		if time.Since(lastNote) > 15*time.Second {
			progress("%s: %d objects, %.0f creates/s", label, t.objects, float64(t.objects)/time.Since(start).Seconds())
			lastNote = time.Now()
		}
		if len(t.filled) >= fillPerAccount*len(t.accounts) {
			id, err := api.createStatic(ctx, "accounts", "fill-"+strconv.Itoa(len(t.accounts)), "", nil, "CONFIRMED")
			if err != nil {
				return "", err
			}
			t.accounts = append(t.accounts, id)
			t.objects++
			continue
		}
		// At most a few seconds' worth per batch, so the budget is checked often.
		k := min(size-t.objects, fillPerAccount*len(t.accounts)-len(t.filled), 200)
		batch := make([]string, k)
		parent, base := t.accounts[len(t.accounts)-1], len(t.filled)
		err := parallel(ctx, k, cfg.fillClients, func(ctx context.Context, i int) error {
			id, err := api.create(ctx, "cloudspaces", "fill-"+strconv.Itoa(base+i), parent, nil)
			batch[i] = id
			return err
		})
		if err != nil {
			return "", err
		}
		t.filled = append(t.filled, batch...)
		t.objects += k
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	err = settle(sctx, api.c, "cloudspaces", "DEPLOYING")
	cancel()
	if err != nil {
		return "", err
	}
	fill := time.Since(start)
	progress("%s: %d objects; filled in %v", label, t.objects, fill.Round(time.Millisecond))
	mem, err := treeMemory(t.srv.pid())
	if err != nil {
		return "", err
	}
	var heap heapFigure
	if t.heapURL != "" {
		save := ""
		if cfg.heapDir != "" {
			save = filepath.Join(cfg.heapDir, fmt.Sprintf("heap-%s-%d.pprof", store, size))
		}
		if heap, err = readHeap(ctx, t.api.hc, t.heapURL, save); err != nil {
			return "", err
		}
		progress("%s: live heap %.1f MiB (%.0f B/object), RSS %.1f MiB", label, float64(heap.InUse)/(1<<20),
			float64(heap.InUse)/float64(t.objects), float64(mem.RSS)/(1<<20))
	}
	t.res = sizeResult{target: size, objects: t.objects, mem: mem, heap: heap, fill: fill,
		rounds: map[string][2][]loadResult{}}
	return "", nil
}

// medianRound is the round with the median rate (the lower middle one for an even count), so
// one disturbed round does not move the figures; its busy and error counts are the sums over
// all rounds.
func medianRound(rounds []loadResult) loadResult {
	sorted := slices.Clone(rounds)
	slices.SortFunc(sorted, func(a, b loadResult) int { return cmp.Compare(a.Rate(), b.Rate()) })
	m := sorted[(len(sorted)-1)/2]
	m.Busy, m.Failed, m.Broken = 0, 0, 0
	for _, r := range rounds {
		m.Busy, m.Failed, m.Broken = m.Busy+r.Busy, m.Failed+r.Failed, m.Broken+r.Broken
	}
	return m
}

// scaleRequest is the request function of a scale operation for n clients.
func scaleRequest(api *simAPI, op string, n int, probe string, filled, accounts []string, created *atomic.Int64) requestFunc {
	base, hc := api.base, api.hc
	rngs := make([]*rand.Rand, n)
	for c := range rngs {
		rngs[c] = rand.New(rand.NewPCG(uint64(c), uint64(len(filled))))
	}
	get := func(path string) requestFunc {
		return func(ctx context.Context, _, _ int) outcome {
			status, _, err := send(ctx, hc, http.MethodGet, base+path, nil, nil, false)
			return classify(status, err, false)
		}
	}
	switch op {
	case "get":
		return func(ctx context.Context, c, _ int) outcome {
			id := filled[rngs[c].IntN(len(filled))]
			status, _, err := send(ctx, hc, http.MethodGet, base+"/v1/cloudspaces/"+id, nil, nil, false)
			return classify(status, err, false)
		}
	case "list":
		return get("/v1/cloudspaces?limit=100")
	case "list_state":
		return get("/v1/cloudspaces?state=DISABLED&limit=100")
	case "list_parent":
		return get("/v1/cloudspaces?parent_id=" + probe + "&limit=100")
	case "act":
		// Each client resets its own 32 cloudspaces, drawn at random from the filled ones;
		// reset returns to DEPLOYED, so the store's states stay as they were.
		const pool = 32
		perm := rand.New(rand.NewPCG(7, uint64(len(filled)))).Perm(len(filled))
		body := []byte("{}")
		return func(ctx context.Context, c, seq int) outcome {
			id := filled[perm[(c*pool+seq%pool)%len(perm)]]
			status, _, err := send(ctx, hc, http.MethodPost, base+"/v1/cloudspaces/"+id+"/actions/reset", jsonHeader, body, false)
			return classify(status, err, true)
		}
	case "create":
		return func(ctx context.Context, c, _ int) outcome {
			k := created.Add(1)
			parent := accounts[rngs[c].IntN(len(accounts))]
			body := fmt.Appendf(nil, `{"name":"scale-%d","parent_id":%q}`, k, parent)
			status, _, err := send(ctx, hc, http.MethodPost, base+"/v1/cloudspaces", jsonHeader, body, false)
			if status < 200 || status >= 300 {
				created.Add(-1)
			}
			return classify(status, err, false)
		}
	}
	panic("unknown op " + op)
}

// scaleRow is one line of the scale table: a cost at each size.
type scaleRow struct {
	name   string
	isRate bool                       // a rate: lower is worse
	target float64                    // largest/smallest cost ratio allowed; 0 for none
	value  func(s sizeResult) float64 // NaN when not measured
	format func(float64) string
	// cell, when set, writes the cells instead of format, and the row has no ratio.
	cell func(s sizeResult) string
	// limitAt100k, when set, is the most the value may be at 100,000 objects or more.
	limitAt100k float64
	// op, pass and of make the row an operation's: of reads its value from a round, at 1
	// client (pass 0) or at cfg.scaleConc (pass 1), and the ratio pairs the rounds.
	op   string
	pass int
	of   func(l loadResult) float64
}

// ratio is the row's cost at the largest size over the cost at the smallest. For an
// operation it is the median over the rounds of that ratio within each round, whose sizes ran
// one after the other: a machine that speeds up or slows down between rounds (shared hosts
// do, by a third and more) moves both sides of a round's ratio alike, where the ratio of
// each size's own median would compare rounds measured at different speeds.
func (r scaleRow) ratio(first, last sizeResult) float64 {
	if r.of == nil {
		return costRatio(r.value(first), r.value(last), r.isRate)
	}
	small, large := values(first.rounds[r.op][r.pass], r.of), values(last.rounds[r.op][r.pass], r.of)
	if r.isRate { // above 1 is worse: the small size's rate over the large's
		small, large = large, small
	}
	return median(ratios(large, small))
}

func writeScaleReport(w io.Writer, cfg *config, fs *fsyncResult, stores []string, labels, fillNotes map[string]string, all map[string][]sizeResult) {
	fmt.Fprintln(w, "### lifecyclesim at growing object counts")
	fmt.Fprintln(w)
	header(w, cfg, fs)
	fmt.Fprintf(w, "Objects are cloudspaces (%d per account; each create makes its events and a deploy transition, landed before "+
		"measuring) plus a probe account with 50 cloudspaces, 10 of them DISABLED. --time-scale %g, %q. Each cost is measured %d times for %v "+
		"after a %v warm-up, at 1 client (latency) and at %d clients (throughput, server CPU per request), and the run with the median "+
		"rate is shown; actions at %d clients run for %v (a run holds several of the SQLite journal's checkpoints, which come in bursts); creates run without warm-up and stop after %d per run at every size. The last column is the cost at the largest size over the cost at the smallest (for a rate: "+
		"the smallest's rate over the largest's), so above 1 is worse; for an operation it is the median over the rounds of that ratio within each "+
		"round (a round measures the sizes one after the other, so a machine whose speed changes between rounds moves both sides of a ratio alike). "+
		"The target is ≤ 1.2 (RSS: ≤ %d MiB at 100,000 objects and more). The live heap is what the server's heap profile holds in use (inuse_space) "+
		"right after a collection, once the fill has landed.\n\n",
		fillPerAccount, cfg.timeScale, cfg.simArgs, cfg.scaleRounds, cfg.scaleDur, cfg.scaleWarm, cfg.scaleConc, cfg.scaleConc, cfg.actDuration(), cfg.scaleCreates, rssLimitAt100k>>20)

	var measured []loadResult
	for _, res := range all {
		for _, s := range res {
			for _, op := range scaleOps {
				measured = append(measured, s.median(op, 0), s.median(op, 1))
			}
		}
	}
	writeOtherLoad(w, measured)

	mib := func(x float64) string { return fmt.Sprintf("%.1f MiB", x/(1<<20)) }
	us := func(x float64) string { return fmtDur(time.Duration(x * float64(time.Microsecond))) }
	rows := []scaleRow{
		{name: "objects measured at (after its creates)",
			cell: func(s sizeResult) string { return thousands(int64(s.objects)) + " (" + thousands(int64(s.after)) + ")" }},
		{name: fmt.Sprintf("fill: creates/s at %d clients", cfg.fillClients), isRate: true,
			value: func(s sizeResult) float64 { return float64(s.objects-probeObjects) / s.fill.Seconds() }, format: fmtNum},
		{name: "RSS (VmRSS)", value: func(s sizeResult) float64 { return float64(s.mem.RSS) }, format: mib, limitAt100k: rssLimitAt100k},
		{name: "peak RSS (VmHWM)", value: func(s sizeResult) float64 { return float64(s.mem.HWM) }, format: mib},
	}
	if cfg.heapProfile {
		rows = append(rows,
			scaleRow{name: "live heap (heap profile, inuse_space)", value: func(s sizeResult) float64 { return float64(s.heap.InUse) }, format: mib},
			scaleRow{name: "live heap per object", value: func(s sizeResult) float64 { return float64(s.heap.InUse) / float64(s.objects) },
				format: func(x float64) string { return fmtNum(x) + " B" }})
	}
	p50 := func(l loadResult) float64 { return float64(percentile(l.Latencies, 50).Microseconds()) }
	for _, op := range scaleOps {
		rows = append(rows,
			scaleRow{name: scaleOpTitles[op] + ": p50 at 1 client", target: 1.2, format: us, op: op, pass: 0, of: p50,
				value: func(s sizeResult) float64 { return p50(s.median(op, 0)) }},
			scaleRow{name: scaleOpTitles[op] + fmt.Sprintf(": req/s at %d clients", cfg.scaleConc), isRate: true, target: 1.2, format: fmtNum,
				op: op, pass: 1, of: loadResult.Rate, value: func(s sizeResult) float64 { return s.median(op, 1).Rate() }},
			scaleRow{name: scaleOpTitles[op] + fmt.Sprintf(": server CPU µs/req at %d clients", cfg.scaleConc), target: 1.2, format: fmtNum,
				op: op, pass: 1, of: loadResult.CPUPerOK, value: func(s sizeResult) float64 { return s.median(op, 1).CPUPerOK() }},
		)
	}
	for _, store := range stores {
		res := all[store]
		if len(res) == 0 {
			fmt.Fprintf(w, "**%s**: nothing measured: %s.\n\n", labels[store], fillNotes[store])
			continue
		}
		fmt.Fprintf(w, "**%s**\n\n| cost |", labels[store])
		for _, s := range res {
			fmt.Fprintf(w, " %s |", thousands(int64(s.target)))
		}
		last, first := res[len(res)-1], res[0]
		fmt.Fprintf(w, " %s / %s |\n|---|", shortSize(last.target), shortSize(first.target))
		for range res {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprintln(w, "---:|")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |", r.name)
			for _, s := range res {
				if r.cell != nil {
					fmt.Fprintf(w, " %s |", r.cell(s))
				} else {
					fmt.Fprintf(w, " %s |", r.format(r.value(s)))
				}
			}
			ratio := ""
			if r.cell == nil && len(res) > 1 {
				x := r.ratio(first, last)
				ratio = fmtNum(x) + "×"
				switch {
				case r.limitAt100k > 0 && last.target >= 100_000:
					ratio += " " + mark(r.value(last) <= r.limitAt100k)
				case r.target > 0 && !math.IsNaN(x):
					ratio += " " + mark(x <= r.target)
				}
			}
			fmt.Fprintf(w, " %s |\n", ratio)
		}
		var notes []string
		for _, s := range res {
			for _, op := range scaleOps {
				for i, r := range []loadResult{s.median(op, 0), s.median(op, 1)} {
					if r.Failed+r.Broken > 0 || r.Busy > 0 {
						notes = append(notes, fmt.Sprintf("%s at %s objects, %d clients: %d busy (409), %d non-2xx, %d transport errors",
							op, thousands(int64(s.target)), []int{1, cfg.scaleConc}[i], r.Busy, r.Failed, r.Broken))
					}
				}
			}
		}
		fmt.Fprintln(w)
		if fillNotes[store] != "" {
			fmt.Fprintf(w, "**%s: %s.**\n\n", labels[store], fillNotes[store])
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, "Not counted as throughput: %s.\n\n", strings.Join(notes, "; "))
		}
	}
}

func shortSize(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	default:
		return strconv.Itoa(n)
	}
}
