// Command benchcompare measures lifecyclesim from outside, over its HTTP API only, and prints
// markdown tables for an issue note. Four modes:
//
//   - compare: lifecyclesim (SQLite file and in-memory store, or -systems pgN: N replicas over
//     one PostgreSQL) against moto_server's EC2 API, each server pinned to one core, the load
//     generator (this program) to another; GET, accepted action and create at several client
//     counts, the systems interleaved round by round.
//   - scale: one lifecyclesim per store and object count, each filled to its count; RSS and the
//     cost of GET, list, filtered list, action and create, the sizes interleaved round by round.
//   - apply: terraform apply of 1, 20, 200 machines against the critical path of their
//     transitions, beside the same graph built from terraform_data (Terraform's own cost).
//   - relations: CB-Tumblebug MCIs of 100, 1,000 and 10,000 VMs (-vms; spread over 3 CSPs and 7
//     regions, or all in one AWS region with -layout single) on each store, taken through
//     create, suspend, resume, a scale out and in by a tenth, and DELETE (terminate, then
//     delete). Each operation's wall time (request → the MCI resting in its target state, by
//     ?wait=static long-polls) is set beside its physical limit, computed from the kind the
//     server serves: the waves its rate limits need (children[].limit for provisioning, none
//     declared: one wave; propagate[].limit for the actions) × one VM action, or the MCI's own
//     phases when longer (they overlap), at the time scale; and the server's CPU time per VM.
//     Also another tenant's cloudspace deploys during a 10,000-VM create (against 1.5 × their
//     duration + 50 ms), and 10,000 Blazar leases whose start timers fire in one clock move (an
//     unrelated GET's p50/p99/max meanwhile, and the time until all are ACTIVE). Every server
//     is fresh, every operation bounded by -op-timeout (one not done is reported with how far
//     it got, and its MCI not run again), no round starts past -budget; -sims
//     old=PATH,new=PATH measures two builds side by side, round by round, with their ratios.
//
// scripts/bench-compare.sh builds the binaries and runs it (make bench-compare, bench-scale,
// bench-apply, bench-relations); it is never part of make test.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type config struct {
	mode      string
	sim       string
	moto      string
	serverCPU string
	simArgs   string
	workdir   string
	raw       string
	pidFile   string
	label     string
	fsyncN    int

	// compare
	systems   string
	ops       string
	clients   string
	rounds    int
	duration  time.Duration
	warmup    time.Duration
	pool      int
	timeScale float64
	pgCPU     string

	// scale
	stores      string
	sizes       string
	scaleDur    time.Duration
	scaleWarm   time.Duration
	scaleActDur time.Duration
	scaleConc   int
	scaleRounds int
	// scaleCreates is how many creates a scale run makes at most.
	scaleCreates int
	fillClients  int
	fillBudget   time.Duration
	// heapProfile reads each server's heap profile after its fill; heapDir, when set, keeps
	// the profiles there.
	heapProfile bool
	heapDir     string

	// apply
	terraform   string
	providerDir string
	timeline    string
	machines    string
	parallelism string
	applyStore  string
	applyScale  float64
	applyRuns   int
	demo        string

	// relations
	vms           string
	layouts       string
	opTimeout     time.Duration
	sims          string
	parts         string
	tenantVMs     int
	tenantDeploys int
	leases        int
	timerClients  int
	budget        time.Duration
}

func main() {
	cfg := &config{}
	flag.StringVar(&cfg.mode, "mode", "compare", "compare, scale, apply or relations")
	flag.StringVar(&cfg.sim, "sim", "bin/lifecyclesim", "lifecyclesim binary (relations: unless -sims names several)")
	flag.StringVar(&cfg.moto, "moto", "moto_server", "moto_server command")
	flag.StringVar(&cfg.serverCPU, "server-cpu", "0", "CPU list the servers are pinned to (taskset -c); empty: no pinning")
	flag.StringVar(&cfg.simArgs, "sim-args", "--log-level warn", "extra lifecyclesim flags (space-separated)")
	flag.StringVar(&cfg.workdir, "workdir", "", "directory for SQLite files, logs and terraform configs (default: a new temp dir, removed at the end)")
	flag.StringVar(&cfg.raw, "raw", "", "file to write the raw numbers to")
	flag.StringVar(&cfg.pidFile, "pidfile", "", "file to append each started server's process group ID to (for a shell trap)")
	flag.StringVar(&cfg.label, "label", "", "what was measured (a commit), printed in the header")
	flag.IntVar(&cfg.fsyncN, "fsync-n", 300, "write+fdatasync samples for the fsync latency")

	flag.StringVar(&cfg.systems, "systems", "sqlite,memory,moto", "compare: systems to run (sqlite, memory, moto; pgN: N replicas over one PostgreSQL; STORE@BINARY or pgN@BINARY also runs another lifecyclesim build, e.g. sqlite@/tmp/old-lifecyclesim)")
	flag.StringVar(&cfg.ops, "ops", "get,act,create", "compare: operations")
	flag.StringVar(&cfg.clients, "clients", "1,16,64", "compare: client counts")
	flag.IntVar(&cfg.rounds, "rounds", 3, "compare and relations: rounds per cell (systems, or binaries, alternate within each)")
	flag.DurationVar(&cfg.duration, "duration", 3*time.Second, "compare: measured time per run")
	flag.DurationVar(&cfg.warmup, "warmup", 500*time.Millisecond, "compare: warm-up before each measured run")
	flag.StringVar(&cfg.pgCPU, "pg-cpu", "", "compare: CPU list PostgreSQL (the pgN systems' database) is pinned to; empty: -server-cpu's")
	flag.IntVar(&cfg.pool, "pool", 32, "compare: objects per client (GET and action targets)")
	flag.Float64Var(&cfg.timeScale, "time-scale", 0.001, "compare, scale and relations: lifecyclesim --time-scale (0.001: a 2 s transition lands in 2 ms)")

	flag.StringVar(&cfg.stores, "stores", "sqlite,memory", "scale and relations: stores to run")
	flag.StringVar(&cfg.sizes, "sizes", "1000,10000,100000", "scale: object counts to fill to")
	flag.DurationVar(&cfg.scaleDur, "scale-duration", time.Second, "scale: measured time per run")
	flag.IntVar(&cfg.scaleRounds, "scale-rounds", 3, "scale: runs per operation and client count (the median is shown)")
	flag.DurationVar(&cfg.scaleActDur, "scale-act-duration", 5*time.Second, "scale: measured time of an action run at -scale-clients (a run must hold several of the SQLite journal's checkpoints, which come in bursts)")
	flag.DurationVar(&cfg.scaleWarm, "scale-warmup", 300*time.Millisecond, "scale: warm-up per measurement")
	flag.IntVar(&cfg.scaleConc, "scale-clients", 16, "scale: client count of the throughput measurement")
	flag.IntVar(&cfg.scaleCreates, "scale-creates", 1000, "scale: creates per run, the same at every size (every store grows by 2 × rounds × this: at 1 client and at -scale-clients)")
	flag.IntVar(&cfg.fillClients, "fill-clients", 32, "scale: concurrent creates while filling")
	flag.BoolVar(&cfg.heapProfile, "heap-profile", true, "scale: read each server's heap profile after its fill (lifecyclesim --pprof-addr) for the live heap per object; false for a build without --pprof-addr")
	flag.StringVar(&cfg.heapDir, "heap-dir", "", "scale: directory to keep the heap profiles in, as heap-STORE-SIZE.pprof (go tool pprof -sample_index=inuse_space BINARY FILE); empty: not kept")
	flag.DurationVar(&cfg.fillBudget, "fill-budget", 8*time.Minute, "scale: longest fill to one size; a slower store stops there (the sizes before are reported)")

	flag.StringVar(&cfg.terraform, "terraform", "terraform", "apply: terraform binary (never downloaded)")
	flag.StringVar(&cfg.providerDir, "provider-dir", "bin", "apply: directory holding terraform-provider-lifecycle (dev_overrides)")
	flag.StringVar(&cfg.timeline, "timeline", "bin/timeline", "apply: internal/timeline binary (request and transition counts)")
	flag.StringVar(&cfg.machines, "machines", "1,20,200", "apply: machine counts")
	flag.StringVar(&cfg.parallelism, "parallelism", "200,default", "apply: -parallelism values (default: terraform's own, 10)")
	flag.StringVar(&cfg.applyStore, "apply-store", "sqlite", "apply: the store (sqlite or memory)")
	flag.Float64Var(&cfg.applyScale, "apply-time-scale", 1, "apply: lifecyclesim --time-scale")
	flag.IntVar(&cfg.applyRuns, "apply-runs", 1, "apply: runs of each configuration")
	flag.StringVar(&cfg.demo, "demo", "examples/demo/main.tf", "apply: also apply this configuration (empty: skip)")

	flag.StringVar(&cfg.vms, "vms", "100,1000,10000", "relations: VMs per MCI")
	flag.StringVar(&cfg.layouts, "layout", "spread", "relations: where the VMs are: spread (3 CSPs, 7 regions), single (one AWS region), or spread,single")
	flag.DurationVar(&cfg.opTimeout, "op-timeout", 180*time.Second, "relations: longest wait for one operation (an MCI's, the leases'); one not done ends its MCI, which is not run again")
	flag.StringVar(&cfg.sims, "sims", "", "relations: binaries measured side by side, round by round, as name=path,... (e.g. old=/tmp/lifecyclesim-old,new=bin/lifecyclesim; default: -sim alone)")
	flag.StringVar(&cfg.parts, "parts", "mci,tenant,timers", "relations: what to measure: mci (operations of MCIs), tenant (another tenant's deploys during a large create), timers (leases starting at once)")
	flag.IntVar(&cfg.tenantVMs, "tenant-vms", 10000, "relations: VMs of the MCI whose create the other tenant's deploys run beside")
	flag.IntVar(&cfg.tenantDeploys, "tenant-deploys", 5, "relations: the other tenant's cloudspace deploys, one after the other")
	flag.IntVar(&cfg.leases, "leases", 10000, "relations: Blazar leases whose start timers fire at once")
	flag.IntVar(&cfg.timerClients, "timer-clients", 4, "relations: clients sending the unrelated GET while the timers fire")
	flag.DurationVar(&cfg.budget, "budget", 25*time.Minute, "relations: no further round starts when it would end past this (going by the last round's time); 0: every round runs")
	flag.Parse()

	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

func run(cfg *config) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.workdir == "" {
		dir, err := os.MkdirTemp("", "benchcompare-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.workdir = dir
	} else if err := os.MkdirAll(cfg.workdir, 0o755); err != nil {
		return err
	}
	if cfg.rounds < 1 || cfg.scaleRounds < 1 || cfg.applyRuns < 1 || cfg.pool < 1 || cfg.fsyncN < 1 || cfg.scaleCreates < 1 {
		return errors.New("-rounds, -scale-rounds, -apply-runs, -pool, -fsync-n and -scale-creates must be at least 1")
	}
	if cfg.scaleConc < 2 {
		return errors.New("-scale-clients must be at least 2 (1 client is always measured)")
	}
	if cfg.serverCPU != "" && cfg.mode != "apply" { // apply never pins
		if _, err := exec.LookPath("taskset"); err != nil {
			return errors.New("taskset is missing (util-linux): install it, or pass -server-cpu= to run unpinned")
		}
	}
	raw := io.Discard
	if cfg.raw != "" {
		f, err := os.Create(cfg.raw)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		raw = f
	}
	switch cfg.mode {
	case "compare":
		return runCompare(ctx, cfg, os.Stdout, raw)
	case "scale":
		return runScale(ctx, cfg, os.Stdout, raw)
	case "apply":
		return runApply(ctx, cfg, os.Stdout, raw)
	case "relations":
		return runRelations(ctx, cfg, os.Stdout, raw)
	default:
		return fmt.Errorf("-mode %q: want compare, scale, apply or relations", cfg.mode)
	}
}

// storeArgs are lifecyclesim's flags for a store name.
func storeArgs(store, dir string) ([]string, string, error) {
	switch store {
	case "sqlite":
		return []string{"--db", dir + "/lifecyclesim-" + strconv.FormatInt(time.Now().UnixNano(), 36) + ".db"}, "lifecyclesim SQLite", nil
	case "memory":
		return []string{"--db", ":memory:"}, "lifecyclesim in-memory", nil
	default:
		return nil, "", fmt.Errorf("store %q: want sqlite or memory", store)
	}
}

// intList parses "1,16,64".
func intList(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list %q", s)
	}
	return out, nil
}

// names splits "a,b" into trimmed, non-empty names.
func names(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// progress prints a progress line on stderr (stdout is the markdown).
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// fmtDur writes a latency with three significant digits in µs or ms.
func fmtDur(d time.Duration) string {
	us := float64(d) / float64(time.Microsecond)
	switch {
	case us < 1000:
		return fmt.Sprintf("%.0f µs", us)
	case us < 10000:
		return fmt.Sprintf("%.2f ms", us/1000)
	default:
		return fmt.Sprintf("%.1f ms", us/1000)
	}
}

// fmtNum writes a number with up to three significant digits and thousands separators.
func fmtNum(x float64) string {
	switch {
	case x != x: // NaN
		return "–"
	case x >= 1000:
		return thousands(int64(x + 0.5))
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// header describes the machine a run happened on.
func header(w io.Writer, cfg *config, fs *fsyncResult) {
	if cfg.label != "" {
		fmt.Fprintf(w, "Measured: %s, %s.\n", cfg.label, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	}
	fmt.Fprintf(w, "Machine: %s, %d CPUs.", cpuModel(), numCPU())
	if cfg.serverCPU != "" {
		fmt.Fprintf(w, " Servers pinned to CPU %s (taskset -c), the load generator to CPU %s.", cfg.serverCPU, allowedCPUs())
	}
	fmt.Fprintln(w)
	if fs != nil {
		fmt.Fprintf(w, "Disk under the SQLite file: %s.\n", fs)
	}
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func numCPU() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	n := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "processor") {
			n++
		}
	}
	return n
}

// allowedCPUs is the CPU list this process may run on (taskset pins it).
func allowedCPUs() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "Cpus_allowed_list" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
