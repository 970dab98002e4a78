package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// applyRun is one terraform apply.
type applyRun struct {
	config      string // "N machines" or "demo"
	machines    int    // 0 for the demo
	parallelism string
	run         int
	wall        time.Duration
	critical    time.Duration
	// bound is the critical path when at most -parallelism machines deploy at once (waves of
	// machine deploys after the cloudspace); the critical path itself when they all fit.
	bound       time.Duration
	tfData      time.Duration // the same graph from terraform_data; 0 when there is none
	otherCPU    float64       // CPUs other processes used during the apply, on average
	requests    int
	transitions int
}

func (r applyRun) overhead() time.Duration { return r.wall - max(r.critical, r.bound) - r.tfData }

func (r applyRun) perTransition() float64 {
	if r.transitions == 0 {
		return 0
	}
	return float64(r.requests) / float64(r.transitions)
}

func runApply(ctx context.Context, cfg *config, out, raw io.Writer) error {
	machines, err := intList(cfg.machines)
	if err != nil {
		return fmt.Errorf("-machines: %w", err)
	}
	if _, err := exec.LookPath(cfg.terraform); err != nil {
		return fmt.Errorf("%s is missing: this benchmark uses the terraform on PATH and never downloads one", cfg.terraform)
	}
	providerDir, err := filepath.Abs(cfg.providerDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(providerDir, "terraform-provider-lifecycle")); err != nil {
		return fmt.Errorf("no provider binary in -provider-dir %s (go build -o bin/terraform-provider-lifecycle .): %w", providerDir, err)
	}
	if _, err := os.Stat(cfg.timeline); err != nil {
		return fmt.Errorf("-timeline (go build -o bin/timeline ./internal/timeline): %w", err)
	}
	rc := filepath.Join(cfg.workdir, "terraformrc")
	rcText := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"lifecyclesim/lifecycle\" = %q\n  }\n  direct {}\n}\n", providerDir)
	if err := os.WriteFile(rc, []byte(rcText), 0o644); err != nil {
		return err
	}
	args, label, err := storeArgs(cfg.applyStore, cfg.workdir)
	if err != nil {
		return fmt.Errorf("-apply-store: %w", err)
	}
	// Terraform, the provider and the simulator share the machine as they do for a user: no
	// pinning here.
	unpinned := *cfg
	unpinned.serverCPU = ""
	srv, api, err := startSim(ctx, &unpinned, label, args, cfg.applyScale, filepath.Join(cfg.workdir, "apply-sim.log"))
	if err != nil {
		return err
	}
	defer srv.stop()

	durs := map[string]map[string]time.Duration{}
	for _, k := range []string{"cloudspace", "image", "machine", "disk"} {
		if durs[k], err = api.kindDurations(ctx, k); err != nil {
			return err
		}
	}
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * cfg.applyScale) }
	// The machines wait for their cloudspace and their image; the account is CONFIRMED at once.
	base := max(durs["cloudspace"]["create"], durs["image"]["create"])
	critMachines := scale(base + durs["machine"]["create"])
	// Terraform's default -parallelism.
	const defaultParallelism = 10
	bound := func(n int, par string) time.Duration {
		p, err := strconv.Atoi(par)
		if err != nil {
			p = defaultParallelism
		}
		waves := (n + p - 1) / p
		return scale(base + time.Duration(waves)*durs["machine"]["create"])
	}
	// The demo also stops the web machine, and creates and attaches a disk to the db machine
	// once that one runs.
	critDemo := scale(base + durs["machine"]["create"] + max(durs["machine"]["stop"], durs["disk"]["create"]+durs["disk"]["attach"]))

	env := append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0",
		"TF_CLI_CONFIG_FILE="+rc, "LIFECYCLE_ENDPOINT="+srv.base)
	pars := names(cfg.parallelism)
	fmt.Fprintf(raw, "# benchcompare -mode apply %s\n# store=%s time_scale=%g critical_machines_s=%.3f critical_demo_s=%.3f\n",
		cfg.label, label, cfg.applyScale, critMachines.Seconds(), critDemo.Seconds())
	fmt.Fprintln(raw, "# config\tparallelism\trun\twall_s\tcritical_s\tparallelism_bound_s\tterraform_data_s\toverhead_s\trequests\ttransitions\trequests_per_transition\tother_processes_cpus")
	var runs []applyRun
	record := func(r applyRun) {
		runs = append(runs, r)
		fmt.Fprintf(raw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%d\t%.2f\t%.2f\n", r.config, r.parallelism, r.run, r.wall.Seconds(),
			r.critical.Seconds(), r.bound.Seconds(), r.tfData.Seconds(), r.overhead().Seconds(), r.requests, r.transitions, r.perTransition(), r.otherCPU)
		progress("%-12s -parallelism=%-7s apply %6.2fs  critical %5.2fs  bound %5.2fs  terraform_data %5.2fs  overhead %5.2fs  %d requests / %d transitions = %.2f  others %.2f CPUs",
			r.config, r.parallelism, r.wall.Seconds(), r.critical.Seconds(), r.bound.Seconds(), r.tfData.Seconds(), r.overhead().Seconds(),
			r.requests, r.transitions, r.perTransition(), r.otherCPU)
	}
	begin := time.Now()
	for run := 1; run <= cfg.applyRuns; run++ {
		for _, n := range machines {
			for _, par := range pars {
				name := fmt.Sprintf("%d machines", n)
				if n == 1 {
					name = "1 machine"
				}
				dir := filepath.Join(cfg.workdir, fmt.Sprintf("m%d-p%s-r%d", n, par, run))
				r := applyRun{config: name, machines: n, parallelism: par, run: run, critical: critMachines, bound: bound(n, par)}
				if r.wall, r.requests, r.transitions, r.otherCPU, err = measureApply(ctx, cfg, env, dir, machinesConfig(n), par, srv.base); err != nil {
					return fmt.Errorf("%s, -parallelism=%s: %w", name, par, err)
				}
				if r.tfData, _, _, _, err = measureApply(ctx, cfg, env, dir+"-tfdata", terraformDataConfig(n), par, ""); err != nil {
					return fmt.Errorf("%s from terraform_data, -parallelism=%s: %w", name, par, err)
				}
				record(r)
			}
		}
		if cfg.demo != "" {
			demo, err := os.ReadFile(cfg.demo)
			if err != nil {
				return err
			}
			for _, par := range pars {
				r := applyRun{config: "demo", parallelism: par, run: run, critical: critDemo}
				dir := filepath.Join(cfg.workdir, fmt.Sprintf("demo-p%s-r%d", par, run))
				if r.wall, r.requests, r.transitions, r.otherCPU, err = measureApply(ctx, cfg, env, dir, string(demo), par, srv.base); err != nil {
					return fmt.Errorf("demo, -parallelism=%s: %w", par, err)
				}
				record(r)
			}
		}
	}
	progress("apply done in %v", time.Since(begin).Round(time.Second))
	writeApplyReport(out, &unpinned, label, runs)
	return nil
}

// measureApply writes config into a new dir, applies it and returns the wall time, when
// endpoint is set the requests and timed transitions the simulator counted meanwhile, and the
// CPUs other processes (not this program's children) used meanwhile.
func measureApply(ctx context.Context, cfg *config, env []string, dir, config, par, endpoint string) (wall time.Duration, requests, transitions int, others float64, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, 0, 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		return 0, 0, 0, 0, err
	}
	var req0, tr0 int
	if endpoint != "" {
		if req0, tr0, err = timelineCounts(ctx, cfg.timeline, endpoint); err != nil {
			return 0, 0, 0, 0, err
		}
	}
	args := []string{"-chdir=" + dir, "apply", "-auto-approve", "-input=false", "-no-color"}
	if par != "default" {
		args = append(args, "-parallelism="+par)
	}
	cmd := exec.CommandContext(ctx, cfg.terraform, args...)
	cmd.Env = env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	// terraform and the provider are children of this program: only the rest counts as other.
	mine := procTree(os.Getpid())
	other0 := sampleOthers(mine)
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	others = sampleOthers(mine).since(other0).Seconds() / wall.Seconds()
	_ = os.WriteFile(filepath.Join(dir, "apply.log"), log.Bytes(), 0o644)
	if err != nil {
		tail := log.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return 0, 0, 0, 0, fmt.Errorf("terraform apply: %w\n%s", err, tail)
	}
	if endpoint == "" {
		return wall, 0, 0, others, nil
	}
	req1, tr1, err := timelineCounts(ctx, cfg.timeline, endpoint)
	return wall, req1 - req0, tr1 - tr0, others, err
}

// timelineCounts runs internal/timeline -counts: the simulator's request and transition totals.
func timelineCounts(ctx context.Context, timeline, endpoint string) (requests, transitions int, err error) {
	out, err := exec.CommandContext(ctx, timeline, "-endpoint", endpoint, "-counts").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("timeline -counts: %w", err)
	}
	return parseCounts(string(out))
}

// parseCounts reads "requests=N transitions=M".
func parseCounts(s string) (requests, transitions int, err error) {
	seen := 0
	for f := range strings.FieldsSeq(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, fmt.Errorf("timeline -counts: %q: %w", f, err)
		}
		switch k {
		case "requests":
			requests, seen = n, seen+1
		case "transitions":
			transitions, seen = n, seen+1
		}
	}
	if seen != 2 {
		return 0, 0, errors.New("timeline -counts: want requests=N transitions=M, got " + strings.TrimSpace(s))
	}
	return requests, transitions, nil
}

// machinesConfig is an account, a cloudspace, an image and n machines.
func machinesConfig(n int) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    lifecycle = {
      source = "lifecyclesim/lifecycle"
    }
  }
}

resource "lifecycle_account" "a" { name = "bench" }
resource "lifecycle_cloudspace" "cs" {
  name       = "bench"
  account_id = lifecycle_account.a.id
}
resource "lifecycle_image" "img" { name = "bench" }
resource "lifecycle_machine" "m" {
  count         = %d
  name          = "m${count.index}"
  cloudspace_id = lifecycle_cloudspace.cs.id
  image_id      = lifecycle_image.img.id
}
`, n)
}

// terraformDataConfig is the same graph from terraform_data (built into Terraform: no
// provider, no init), so its apply time is Terraform's own cost for the graph.
func terraformDataConfig(n int) string {
	return fmt.Sprintf(`resource "terraform_data" "a" { input = "bench" }
resource "terraform_data" "cs" { input = terraform_data.a.id }
resource "terraform_data" "img" { input = "bench" }
resource "terraform_data" "m" {
  count = %d
  input = {
    name          = "m${count.index}"
    cloudspace_id = terraform_data.cs.id
    image_id      = terraform_data.img.id
  }
}
`, n)
}

func writeApplyReport(w io.Writer, cfg *config, label string, runs []applyRun) {
	fmt.Fprintln(w, "### terraform apply against the critical path")
	fmt.Fprintln(w)
	header(w, cfg, nil)
	fmt.Fprintf(w, "%s, --time-scale %g, %q; terraform, the provider (dev_overrides, no init) and the simulator share CPUs %s. "+
		"Critical path: the spec durations of the transitions in a row (cloudspace deploy, then machine deploy; the demo adds its "+
		"longest step after the machines). With fewer slots than machines (-parallelism) the machines deploy in waves: the "+
		"parallelism bound is the cloudspace deploy plus one machine deploy per wave. terraform_data: the same graph of resources built "+
		"into Terraform, applied at the same -parallelism, i.e. Terraform's own cost. Overhead = apply − the larger of critical path "+
		"and parallelism bound − terraform_data. Requests and timed transitions are the simulator's counts (internal/timeline -counts) "+
		"over the apply; other CPUs is what processes outside the benchmark used meanwhile.\n\n", label, cfg.applyScale, cfg.simArgs, allowedCPUs())
	fmt.Fprintln(w, "| configuration | -parallelism | apply | critical path | parallelism bound | terraform_data graph | overhead | requests | timed transitions | requests / transition | other CPUs |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	secs := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	var verdicts []string
	for _, r := range runs {
		tf, over, bnd := "–", "–", "–"
		if r.machines > 0 {
			tf, over, bnd = secs(r.tfData), secs(r.overhead()), secs(r.bound)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %d | %d | %.2f | %.2f |\n", r.config, r.parallelism, secs(r.wall), secs(r.critical),
			bnd, tf, over, r.requests, r.transitions, r.perTransition(), r.otherCPU)
		if r.machines == 200 && r.parallelism == "200" {
			verdicts = append(verdicts, fmt.Sprintf("200 machines at -parallelism=200 (run %d): overhead %s (target ≤ 0.50 s %s), %.2f requests per transition (target ≤ 2.0 %s)",
				r.run, secs(r.overhead()), mark(r.overhead() <= 500*time.Millisecond), r.perTransition(), mark(r.perTransition() <= 2.0)))
		}
	}
	fmt.Fprintln(w)
	for _, v := range verdicts {
		fmt.Fprintf(w, "%s.\n", v)
	}
	if len(verdicts) > 0 {
		fmt.Fprintln(w)
	}
}

// mark is ✓ or ✗.
func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}
