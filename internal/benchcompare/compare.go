package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// benchSystem is one server under comparison.
type benchSystem interface {
	Name() string
	PID() int
	Stop()
	// Ops says in a few words what each operation sends.
	Ops() map[string]string
	// Prepare makes what the operations need for up to clients clients, pool objects each.
	Prepare(ctx context.Context, clients, pool int) error
	// Request is the request function of an operation: get, act or create.
	Request(op string) requestFunc
	// Objects is how many machines or instances the benchmark made there so far (the pools
	// and every create, warm-ups included).
	Objects() int
}

// opTitles name the operations in the tables.
var opTitles = map[string]string{"get": "read (GET one object)", "act": "accepted action", "create": "create"}

type cellKey struct {
	op      string
	clients int
}

func runCompare(ctx context.Context, cfg *config, out, raw io.Writer) error {
	clients, err := intList(cfg.clients)
	if err != nil {
		return fmt.Errorf("-clients: %w", err)
	}
	ops := names(cfg.ops)
	for _, op := range ops {
		if _, known := opTitles[op]; !known {
			return fmt.Errorf("-ops: %q is not get, act or create", op)
		}
	}
	sysNames := names(cfg.systems)
	if slices.Contains(sysNames, "moto") {
		if _, err := exec.LookPath(cfg.moto); err != nil {
			return fmt.Errorf("%s is missing: install moto 5.2.1 (pip install 'moto[server]==5.2.1'), or leave moto out of -systems", cfg.moto)
		}
	}
	maxClients := slices.Max(clients)

	progress("fsync latency in %s", cfg.workdir)
	fs, err := measureFsync(cfg.workdir, cfg.fsyncN)
	if err != nil {
		return fmt.Errorf("fsync measurement: %w", err)
	}
	progress("%s", fs)

	var pg postgres
	defer pg.stop() // after the replicas (deferred calls run last first)
	var systems []benchSystem
	defer func() {
		for _, s := range systems {
			s.Stop()
		}
	}()
	for _, name := range sysNames {
		var sys benchSystem
		logPath := filepath.Join(cfg.workdir, name+".log")
		switch {
		case name == "moto":
			m, err := startMoto(ctx, cfg, logPath)
			if err != nil {
				return err
			}
			sys = m
		case strings.HasPrefix(name, "pg"):
			// pgN@BINARY runs another build's replicas, to compare two builds in one run.
			pgName, bin, other := strings.Cut(name, "@")
			n, ok := replicaCount(pgName)
			if !ok {
				return fmt.Errorf("-systems: %q: want pgN or pgN@BINARY, N replicas over one PostgreSQL (pg1, pg2, pg3)", name)
			}
			if !other {
				bin = cfg.sim
			}
			r, err := startReplicas(ctx, cfg, &pg, name, bin, n)
			if err != nil {
				return err
			}
			sys = r
		default:
			// STORE@BINARY runs another lifecyclesim build beside -sim's, to compare two builds
			// in one run.
			store, bin, other := strings.Cut(name, "@")
			args, label, err := storeArgs(store, cfg.workdir)
			if err != nil {
				return fmt.Errorf("-systems: %w", err)
			}
			if other {
				label += " (" + bin + ")"
				logPath = filepath.Join(cfg.workdir, store+"-"+filepath.Base(bin)+".log")
			} else {
				bin = cfg.sim
			}
			srv, api, err := launchSim(ctx, cfg, bin, label, args, cfg.timeScale, logPath)
			if err != nil {
				return err
			}
			sys = &simSystem{label: label, pooled: pooled{srv: srv}, api: api}
		}
		systems = append(systems, sys)
		start := time.Now()
		if err := sys.Prepare(ctx, maxClients, cfg.pool); err != nil {
			return fmt.Errorf("prepare %s: %w", sys.Name(), err)
		}
		progress("%s ready (pid %d): %d clients × %d objects in %v", sys.Name(), sys.PID(), maxClients, cfg.pool, time.Since(start).Round(time.Millisecond))
	}

	fmt.Fprintf(raw, "# benchcompare -mode compare %s\n# %s\n", cfg.label, fs)
	fmt.Fprintf(raw, "# time_scale=%g duration=%v warmup=%v pool=%d sim_args=%q\n", cfg.timeScale, cfg.duration, cfg.warmup, cfg.pool, cfg.simArgs)
	fmt.Fprintln(raw, "# system\top\tclients\tround\tok\tbusy409\tnon2xx\ttransport_err\telapsed_s\treq_per_s\tp50_us\tp99_us\tserver_cpu_us_per_req\tloadgen_cpu_share\tserver_core_busy\tother_processes_cpus")
	results := map[cellKey]map[string][]loadResult{}
	var pids, mine []int
	for _, s := range systems {
		pids = append(pids, s.PID())
		pids = append(pids, morePIDs(s)...)
	}
	for _, p := range pids {
		mine = append(mine, procTree(p)...)
	}
	begin := time.Now()
	for _, op := range ops {
		for _, n := range clients {
			key := cellKey{op, n}
			results[key] = map[string][]loadResult{}
			for r := range cfg.rounds {
				// Rotate the order each round, so no system always runs first (or right after
				// another system's warm-up has heated the caches of the machine).
				for i := range systems {
					sys := systems[(i+r)%len(systems)]
					if waited, idle := waitIdle(ctx, pids, 60*time.Second); !idle {
						progress("the servers still use CPU after %v; measuring anyway", waited.Round(time.Second))
						fmt.Fprintf(raw, "# not idle after %v before %s %s %d round %d\n", waited.Round(time.Second), sys.Name(), op, n, r+1)
					}
					spec := loadSpec{clients: n, warmup: cfg.warmup, duration: cfg.duration, pid: sys.PID(), more: morePIDs(sys), cores: cfg.serverCPU, mine: mine}
					res := runLoad(ctx, spec, sys.Request(op))
					if err := ctx.Err(); err != nil {
						return err
					}
					results[key][sys.Name()] = append(results[key][sys.Name()], res)
					fmt.Fprintf(raw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.1f\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.2f\n",
						sys.Name(), op, n, r+1, res.OK, res.Busy, res.Failed, res.Broken, res.Elapsed.Seconds(), res.Rate(),
						percentile(res.Latencies, 50).Microseconds(), percentile(res.Latencies, 99).Microseconds(), res.CPUPerOK(), res.LoadShare(), res.CoreBusy, res.OtherShare())
					progress("%-6s %2d clients round %d  %-24s %9.0f req/s  p50 %-8s p99 %-8s cpu %7.1f µs/req  core %3.0f%%  load %3.0f%%  others %.2f CPUs  busy %d  errors %d",
						op, n, r+1, sys.Name(), res.Rate(), fmtDur(percentile(res.Latencies, 50)), fmtDur(percentile(res.Latencies, 99)),
						res.CPUPerOK(), 100*res.CoreBusy, 100*res.LoadShare(), res.OtherShare(), res.Busy, res.Failed+res.Broken)
				}
			}
		}
	}
	progress("compare done in %v", time.Since(begin).Round(time.Second))
	writeCompareReport(out, cfg, &fs, systems, ops, clients, results)
	return nil
}

// multiProcess is a system of several processes (replicas and their database).
type multiProcess interface {
	// PIDs are its processes besides PID's.
	PIDs() []int
}

// morePIDs are a system's processes besides PID's.
func morePIDs(s benchSystem) []int {
	if m, ok := s.(multiProcess); ok {
		return m.PIDs()
	}
	return nil
}

// values are f of each round.
func values(rs []loadResult, f func(loadResult) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// rates are the req/s of each round.
func rates(rs []loadResult) []float64 { return values(rs, loadResult.Rate) }

// medianOf is the median over rounds of f.
func medianOf(rs []loadResult, f func(loadResult) float64) float64 { return median(values(rs, f)) }

func writeCompareReport(w io.Writer, cfg *config, fs *fsyncResult, systems []benchSystem, ops []string, clients []int, results map[cellKey]map[string][]loadResult) {
	// Without moto there is nothing to set lifecyclesim beside: no × moto columns, no targets.
	hasMoto := slices.ContainsFunc(systems, func(s benchSystem) bool { return s.Name() == "moto" })
	title := "### lifecyclesim against moto_server"
	if !hasMoto {
		title = "### lifecyclesim's stores"
	}
	fmt.Fprintln(w, title)
	fmt.Fprintln(w)
	header(w, cfg, fs)
	writeReplicasNote(w, cfg, systems)
	fmt.Fprintf(w, "%d round(s) per cell; in each round every system runs back to back (the order rotates) for %v after a %v warm-up, "+
		"N keep-alive clients each sending one request after another. lifecyclesim runs with --time-scale %g (a 2 s machine stop lands in %v), %q; "+
		"each client owns %d objects. Latencies count requests that succeeded (2xx); server CPU is the CPU time of the server process "+
		"(and its children) over the window (its threads' nanosecond counts, or utime+stime when a thread ended), per successful request; server core is how busy the server's CPU was (whoever used it); "+
		"load gen CPU is the share of a core this program used. Before each run the benchmark waits until every server is idle.",
		cfg.rounds, cfg.duration, cfg.warmup, cfg.timeScale, time.Duration(2*cfg.timeScale*float64(time.Second)), cfg.simArgs, cfg.pool)
	if hasMoto {
		fmt.Fprint(w, " × moto pairs each round with moto's run of the same round: the median and the smallest of those ratios.")
	}
	fmt.Fprint(w, "\n\n")

	var all []loadResult
	for _, cell := range results {
		for _, rs := range cell {
			all = append(all, rs...)
		}
	}
	writeOtherLoad(w, all)
	fmt.Fprintln(w, "| operation | what each system sends |")
	fmt.Fprintln(w, "|---|---|")
	for _, op := range ops {
		// Both lifecyclesim stores send the same requests: describe them once.
		var parts []string
		seen := map[string]bool{}
		for _, s := range systems {
			who := "lifecyclesim"
			if s.Name() == "moto" {
				who = "moto"
			}
			if !seen[who] {
				seen[who] = true
				parts = append(parts, who+": "+s.Ops()[op])
			}
		}
		fmt.Fprintf(w, "| %s | %s |\n", opTitles[op], strings.Join(parts, "<br>"))
	}
	fmt.Fprintln(w)

	motoHead, motoRule := "", ""
	if hasMoto {
		motoHead, motoRule = " × moto median | × moto min |", "---:|---:|"
	}
	fmt.Fprintln(w, "| operation | clients | system | req/s median | req/s min | p50 | p99 | server CPU µs/req | server core | load gen CPU | 409 busy | non-2xx / transport |"+motoHead)
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"+motoRule)
	for _, op := range ops {
		for _, n := range clients {
			cell := results[cellKey{op, n}]
			moto := cell["moto"]
			for _, s := range systems {
				rs := cell[s.Name()]
				if len(rs) == 0 {
					continue
				}
				var busy, failed, brk int
				for _, r := range rs {
					busy, failed, brk = busy+r.Busy, failed+r.Failed, brk+r.Broken
				}
				fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %.0f%% | %.0f%% | %d | %d / %d |",
					op, n, s.Name(), fmtNum(median(rates(rs))), fmtNum(minimum(rates(rs))),
					fmtDur(time.Duration(medianOf(rs, func(r loadResult) float64 { return float64(percentile(r.Latencies, 50)) }))),
					fmtDur(time.Duration(medianOf(rs, func(r loadResult) float64 { return float64(percentile(r.Latencies, 99)) }))),
					fmtNum(medianOf(rs, loadResult.CPUPerOK)), 100*medianOf(rs, func(r loadResult) float64 { return r.CoreBusy }),
					100*medianOf(rs, loadResult.LoadShare),
					busy, failed, brk)
				if hasMoto {
					ratioMed, ratioMin := "", ""
					if s.Name() != "moto" && len(moto) > 0 {
						rr := ratios(rates(rs), rates(moto))
						ratioMed, ratioMin = fmtNum(median(rr))+"×", fmtNum(minimum(rr))+"×"
					}
					fmt.Fprintf(w, " %s | %s |", ratioMed, ratioMin)
				}
				fmt.Fprintln(w)
			}
		}
	}
	fmt.Fprintln(w)
	if slices.Contains(ops, "create") {
		var held []string
		for _, s := range systems {
			held = append(held, fmt.Sprintf("%s %s", s.Name(), thousands(int64(s.Objects()))))
		}
		fmt.Fprintf(w, "Creates accumulate over the create cells (the one with the most clients runs last, on the fullest store); at the end "+
			"the systems held these machines / instances: %s.\n\n", strings.Join(held, ", "))
	}
	if hasMoto {
		writeTargets(w, fs, systems, ops, clients, results)
	}
}

// targets are the acceptance figures: lifecyclesim's throughput over moto's.
var targets = map[string]float64{"act": 10, "create": 30, "get": 100}

// writeTargets sets each lifecyclesim store's ratios to moto (which systems holds) beside the
// issue's targets. Actions at one client are bounded by the disk's fsync latency on a durable
// store, so that row shows it.
func writeTargets(w io.Writer, fs *fsyncResult, systems []benchSystem, ops []string, clients []int, results map[cellKey]map[string][]loadResult) {
	var sims []benchSystem
	for _, s := range systems {
		if s.Name() != "moto" {
			sims = append(sims, s)
		}
	}
	if len(sims) == 0 {
		return
	}
	fmt.Fprintln(w, "Against the targets (× moto, median of rounds / smallest round):")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| operation | clients | target |")
	for _, s := range sims {
		fmt.Fprintf(w, " %s |", s.Name())
	}
	fmt.Fprint(w, "\n|---|---:|---|")
	for range sims {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, op := range ops {
		for _, n := range clients {
			cell := results[cellKey{op, n}]
			target := fmt.Sprintf("≥ %g×", targets[op])
			if op == "act" && n == 1 {
				target = fmt.Sprintf("(fsync %s median, %s min: %s syncs/s)", fmtDur(fs.P50), fmtDur(fs.Min), fmtNum(1/fs.P50.Seconds()))
			}
			fmt.Fprintf(w, "| %s | %d | %s |", opTitles[op], n, target)
			for _, s := range sims {
				rr := ratios(rates(cell[s.Name()]), rates(cell["moto"]))
				if len(rr) == 0 {
					fmt.Fprint(w, " – |")
					continue
				}
				mark := ""
				if !(op == "act" && n == 1) {
					mark = " ✗"
					if median(rr) >= targets[op] {
						mark = " ✓"
					}
				}
				fmt.Fprintf(w, " %s× / %s×%s |", fmtNum(median(rr)), fmtNum(minimum(rr)), mark)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
}

// writeOtherLoad warns when processes outside the benchmark took CPU during the runs.
func writeOtherLoad(w io.Writer, rs []loadResult) {
	var most, sum float64
	for _, r := range rs {
		most = max(most, r.OtherShare())
		sum += r.OtherShare()
	}
	if len(rs) > 0 && most > 0.1 {
		fmt.Fprintf(w, "**Other processes on the machine used %.2f CPUs on average during the measurements (up to %.2f)**: they share the "+
			"cores with the servers and the load generator, so the absolute figures are low and noisy; the interleaved ratios suffer "+
			"less. Rerun on a quiet machine for clean figures (other_processes_cpus in the raw file, per run).\n\n", sum/float64(len(rs)), most)
	}
}
