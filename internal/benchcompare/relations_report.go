package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// opOrder is the order of the operations' rows (a run may scale in before it scales out).
var opOrder = []string{"create", "suspend", "resume", "scale out", "scale in", "terminate+delete"}

// opStats are one operation of one series over its rounds.
type opStats struct {
	first  opRun // the first round that ran it (its VMs and limit)
	walls  []float64
	cpus   []float64 // µs per VM
	others float64   // the most CPUs other processes used during one
	runs   int       // rounds that ran it
}

func (s opStats) done() int { return len(s.walls) }

// seriesStats gathers an MCI series' rounds per operation.
func seriesStats(runs []mciRun) map[string]*opStats {
	out := map[string]*opStats{}
	for _, run := range runs {
		for _, o := range run.ops {
			s := out[o.op]
			if s == nil {
				s = &opStats{first: o}
				out[o.op] = s
			}
			s.runs++
			s.others = max(s.others, o.others)
			if o.done {
				s.walls = append(s.walls, o.wall.Seconds())
				s.cpus = append(s.cpus, o.cpuPerVM())
			}
		}
	}
	return out
}

func secs(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmtWall(time.Duration(x * float64(time.Second)))
}

// fmtWall writes a duration as fmtDur below a second, in seconds above.
func fmtWall(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmtDur(d)
	case d < 10*time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}

// storeTitle names a store in the relations tables.
func storeTitle(store string) string {
	switch store {
	case "sqlite":
		return "SQLite file"
	case "memory":
		return "in-memory"
	}
	return store
}

func writeRelationsReport(w io.Writer, cfg *config, fs *fsyncResult, parts []string, res *relResults) {
	fmt.Fprintln(w, "### lifecyclesim: relations at scale (MCIs of many VMs, another tenant, timers)")
	fmt.Fprintln(w)
	header(w, cfg, fs)
	fmt.Fprintf(w, "Over HTTP only, every request with a tenant's bearer token (the servers run with two tenants and an admin token). "+
		"--time-scale %g, %q; a fresh server for every MCI, tenant run and timer run. Binaries:", cfg.timeScale, cfg.simArgs)
	for _, s := range res.sims {
		fmt.Fprintf(w, " **%s** `%s` (%s);", s.name, s.path, s.version)
	}
	fmt.Fprintf(w, " %d round(s), the binaries and stores one after the other within a round.", res.rounds)
	if res.cut != "" {
		fmt.Fprintf(w, " **%s**", res.cut)
	}
	fmt.Fprint(w, "\n\n")
	if slices.Contains(parts, "mci") {
		writeMCIReport(w, cfg, res)
	}
	if slices.Contains(parts, "tenant") {
		writeTenantReport(w, cfg, res)
	}
	if slices.Contains(parts, "timers") {
		writeTimerReport(w, cfg, res)
	}
}

func writeMCIReport(w io.Writer, cfg *config, res *relResults) {
	fmt.Fprintf(w, "#### MCI operations\n\n"+
		"Each MCI runs create → Running, suspend → Suspended, resume → Running, scale out by a tenth and back in (or, when its "+
		"subgroups cannot grow, in by a tenth and back out) → Running, then DELETE (terminate, then delete) → gone. Wall: from the "+
		"request until the MCI rests in the target state with every VM there (GET ?wait=static long-polls), or is gone. "+
		"Physical limit = max(waves × one VM action, the MCI's own phases) + the phases of what the MCI runs after (a deletion's delete), read from the kind the server serves (GET /v1/kinds/mci and "+
		"/v1/kinds/vm): the waves come from `children[].limit` for the create and a scale-out (no limit declared: one wave) and from "+
		"`propagate[].limit` for suspend, resume and terminate; a scale-in ends its VMs at once (one wave). Per CSP, each region needs "+
		"⌈its VMs ÷ per_inner⌉ waves, the regions run on `inner` lanes (longest first, on the lane free first), and the CSPs run side "+
		"by side: the largest CSP's makespan counts. The VMs' actions start with the MCI's and the MCI waits in its last phase for "+
		"them, so its phases overlap the waves (adding them instead gives a bound a measured scale-out beat). "+
		"Phase durations are the served ones × the time scale. Server CPU per VM: the server's CPU time over the operation ÷ the VMs "+
		"it makes, moves or ends. min and median over the rounds that finished; an operation not done within -op-timeout %v ends its "+
		"MCI, which is not run again in later rounds (nor at larger sizes when its create was not done).\n\n", cfg.opTimeout)
	var mostOthers float64
	for _, sim := range res.sims {
		for _, store := range res.stores {
			for _, layout := range res.layouts {
				fmt.Fprintf(w, "**%s, %s store, layout %s**", sim.name, storeTitle(store), layout)
				for _, size := range res.sizes {
					for _, run := range res.mcis[relKey{sim.name, store, layout, size}] {
						if run.layout != "" {
							fmt.Fprintf(w, "; %s VMs: %s", thousands(int64(size)), run.layout)
							break
						}
					}
				}
				fmt.Fprint(w, "\n\n| VMs | operation | VMs moved | limit = max(waves × VM action, MCI phases) | physical limit | wall min | wall median | median ÷ limit | server CPU per VM (median) | rounds done | others (CPUs, most) |\n")
				fmt.Fprintln(w, "|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
				var notes []string
				for _, size := range res.sizes {
					runs := res.mcis[relKey{sim.name, store, layout, size}]
					stats := seriesStats(runs)
					for _, op := range opOrder {
						s, ok := stats[op]
						if !ok {
							continue
						}
						mostOthers = max(mostOthers, s.others)
						lim := s.first.limit.total()
						med := median(s.walls)
						wallMin, wallMed := secs(minimum(s.walls)), secs(med)
						if s.done() == 0 {
							wallMin, wallMed = "not done", "> "+fmtWall(s.first.wall)
						}
						fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d | %.2f |\n", thousands(int64(size)), op, thousands(int64(s.first.moved)),
							s.first.limit.inputs(), fmtWall(lim), wallMin, wallMed, ratioCell(lim.Seconds(), med), usCell(median(s.cpus)), s.done(), s.runs, s.others)
					}
					for _, run := range runs {
						for _, o := range run.ops {
							if !o.done {
								notes = append(notes, fmt.Sprintf("%s VMs, round %d, %s: %s", thousands(int64(size)), run.round, o.op, o.note))
							}
						}
						if len(run.ops) == 0 && run.note != "" {
							notes = append(notes, fmt.Sprintf("%s VMs, round %d: %s", thousands(int64(size)), run.round, run.note))
						}
					}
				}
				fmt.Fprintln(w)
				writeNotes(w, notes)
			}
		}
	}
	if mostOthers > 0.1 {
		fmt.Fprintf(w, "**Other processes on the machine used up to %.2f CPUs during an operation** (the others column): the walls and CPU "+
			"times above are noisy by that much.\n\n", mostOthers)
	}
	if len(res.sims) < 2 {
		return
	}
	first, last := res.sims[0], res.sims[len(res.sims)-1]
	fmt.Fprintf(w, "**%s beside %s** (median wall and server CPU per VM; the ratio is %s ÷ %s, below 1 is faster)\n\n", last.name, first.name, last.name, first.name)
	fmt.Fprint(w, "| store | layout | VMs | operation |")
	for _, s := range res.sims {
		fmt.Fprintf(w, " wall %s |", s.name)
	}
	fmt.Fprint(w, " wall ratio |")
	for _, s := range res.sims {
		fmt.Fprintf(w, " CPU/VM %s |", s.name)
	}
	fmt.Fprintln(w, " CPU ratio |")
	fmt.Fprint(w, "|---|---|---:|---|")
	fmt.Fprint(w, strings.Repeat("---:|", 2*len(res.sims)+2))
	fmt.Fprintln(w)
	for _, store := range res.stores {
		for _, layout := range res.layouts {
			for _, size := range res.sizes {
				stats := make([]map[string]*opStats, len(res.sims))
				for i, s := range res.sims {
					stats[i] = seriesStats(res.mcis[relKey{s.name, store, layout, size}])
				}
				for _, op := range opOrder {
					var walls, cpus []float64
					var wallCells, cpuCells []string
					seen := false
					for i := range res.sims {
						// The medians are NaN where no round finished (walls and cpus hold done rounds).
						wall, cpu, wallCell := math.NaN(), math.NaN(), "–"
						if s, ok := stats[i][op]; ok {
							seen = true
							wall, cpu = median(s.walls), median(s.cpus)
							wallCell = secs(wall)
							if s.done() == 0 {
								wallCell = "not done"
							}
						}
						walls, cpus = append(walls, wall), append(cpus, cpu)
						wallCells, cpuCells = append(wallCells, wallCell), append(cpuCells, usCell(cpu))
					}
					if !seen {
						continue
					}
					fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", store, layout, thousands(int64(size)), op,
						strings.Join(wallCells, " | "), ratioCell(walls[0], walls[len(walls)-1]),
						strings.Join(cpuCells, " | "), ratioCell(cpus[0], cpus[len(cpus)-1]))
				}
			}
		}
	}
	fmt.Fprintln(w)
}

// writeNotes lists notes under a table, followed by a blank line when there are any.
func writeNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
}

// ratioCell is b ÷ a, "–" when either is missing or a is not positive.
func ratioCell(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || a <= 0 {
		return "–"
	}
	return fmtNum(b/a) + "×"
}

// usCell writes x µs as a latency, "–" when missing.
func usCell(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmtDur(time.Duration(x * float64(time.Microsecond)))
}

func writeTenantReport(w io.Writer, cfg *config, res *relResults) {
	fmt.Fprintf(w, "#### Another tenant during a %s-VM create\n\n"+
		"Tenant \"bench\" creates an MCI of %s VMs (spread layout); right after its 202, tenant \"other\" deploys %d cloudspaces "+
		"(openvcloud, in an account made beforehand) one after the other, each one POST ?wait=static timed from the request to "+
		"its answer's DEPLOYED line. A long-poll of the MCI beside them tells when it came to rest: the deploys asked for and landed "+
		"before then count as during the create. "+
		"The target is 1.5 × the deploy's own duration (spec × time scale) + 50 ms. Deploys of all rounds together.\n\n",
		thousands(int64(cfg.tenantVMs)), thousands(int64(cfg.tenantVMs)), cfg.tenantDeploys)
	fmt.Fprintln(w, "| binary | store | deploys landed | asked / landed during the create | min | median | max | deploy per spec | target | max within target |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
	var notes []string
	for _, sim := range res.sims {
		for _, store := range res.stores {
			runs := res.tenants[[2]string{sim.name, store}]
			var lat []time.Duration
			askedDuring, during, asked := 0, 0, 0
			var failed time.Duration
			var spec time.Duration
			for _, r := range runs {
				lat = append(lat, r.lat...)
				for _, d := range r.during {
					if d {
						during++
					}
				}
				for _, d := range r.askedDuring {
					if d {
						askedDuring++
					}
				}
				if r.spec > 0 {
					spec = r.spec
				}
				asked += r.asked
				failed = max(failed, r.failed)
				if r.note != "" {
					notes = append(notes, fmt.Sprintf("%s %s round %d: %s", sim.name, store, r.round, r.note))
				}
				if r.mciAt != "" {
					notes = append(notes, fmt.Sprintf("%s %s round %d: after the deploys, %s", sim.name, store, r.round, r.mciAt))
				}
			}
			slices.Sort(lat)
			target := spec*3/2 + 50*time.Millisecond
			cells := []string{"–", "–", "–", "–"}
			if len(lat) > 0 {
				cells = []string{fmtDur(lat[0]), fmtDur(percentile(lat, 50)), fmtDur(lat[len(lat)-1]), mark(lat[len(lat)-1] <= target)}
			}
			if failed > 0 { // a deploy that did not land is the longest
				cells[2], cells[3] = "not landed after "+fmtWall(failed), mark(false)
			}
			fmt.Fprintf(w, "| %s | %s | %d/%d | %d / %d | %s | %s | %s | %s | %s | %s |\n", sim.name, store, len(lat), asked, askedDuring, during,
				cells[0], cells[1], cells[2], fmtDur(spec), fmtDur(target), cells[3])
		}
	}
	fmt.Fprintln(w)
	writeNotes(w, notes)
}

func writeTimerReport(w io.Writer, cfg *config, res *relResults) {
	fmt.Fprintf(w, "#### %s Blazar leases starting at once\n\n"+
		"%s leases (no reservations: each makes its start and end events) start at the same instant an hour ahead; once all are "+
		"PENDING, %d clients GET an unrelated object (an account) back to back for 1 s (idle), then the simulated clock moves past "+
		"the start in one POST /v1/sim/clock and the same GETs run until no lease is PENDING or STARTING (two lists ?limit=1 every "+
		"20 ms tell). All started: from the clock's move until then. GET latencies of all rounds together; times: min / median of the rounds.\n\n",
		thousands(int64(cfg.leases)), thousands(int64(cfg.leases)), cfg.timerClients)
	fmt.Fprintln(w, "| binary | store | creates/s (the leases) | GET idle p50 / p99 / max | GET while firing p50 / p99 / max (GETs) | all started after | lease start per spec | ACTIVE |")
	fmt.Fprintln(w, "|---|---|---:|---|---|---:|---:|---:|")
	var notes []string
	for _, sim := range res.sims {
		for _, store := range res.stores {
			runs := res.timers[[2]string{sim.name, store}]
			var idle, firing []time.Duration
			var rates, all []float64
			var spec time.Duration
			active := []string{}
			for _, r := range runs {
				idle, firing = append(idle, r.idle...), append(firing, r.firing...)
				if r.create > 0 {
					rates = append(rates, float64(r.leases)/r.create.Seconds())
				}
				if r.note == "" {
					all = append(all, r.allActive.Seconds())
				} else {
					notes = append(notes, fmt.Sprintf("%s %s round %d: %s", sim.name, store, r.round, r.note))
				}
				spec = max(spec, r.spec)
				active = append(active, thousands(int64(r.active)))
			}
			slices.Sort(idle)
			slices.Sort(firing)
			pct := func(l []time.Duration) string {
				if len(l) == 0 {
					return "–"
				}
				return fmt.Sprintf("%s / %s / %s", fmtDur(percentile(l, 50)), fmtDur(percentile(l, 99)), fmtDur(l[len(l)-1]))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s (%s) | %s / %s | %s | %s |\n", sim.name, store, fmtNum(median(rates)), pct(idle), pct(firing),
				thousands(int64(len(firing))), secs(minimum(all)), secs(median(all)), fmtDur(spec), strings.Join(active, ", "))
		}
	}
	fmt.Fprintln(w)
	writeNotes(w, notes)
}
