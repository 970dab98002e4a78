package main

import (
	"strings"
	"testing"
	"time"
)

// TestRelationsReport renders the relations tables from made-up rounds: the MCI rows set the
// median wall beside the limit (an operation no round finished shows how long it was waited
// for), two binaries get a side-by-side table with their ratios, a deploy that did not land
// fails the tenant target, and the notes say what did not finish.
func TestRelationsReport(t *testing.T) {
	cfg := &config{timeScale: 0.001, opTimeout: time.Minute, tenantVMs: 100, tenantDeploys: 2, leases: 10, timerClients: 2}
	lim := physLimit{waves: 3, outer: "aws", limited: true, vmAction: 3 * time.Millisecond, mciOwn: 8 * time.Millisecond}
	ops := func(wall time.Duration, suspended bool) []opRun {
		suspend := opRun{op: "suspend", moved: 100, limit: lim, wall: 2 * wall, cpu: 10 * time.Millisecond, done: suspended}
		if !suspended {
			suspend.note = "not done after 1m"
		}
		return []opRun{{op: "create", moved: 100, limit: lim, wall: wall, cpu: 50 * time.Millisecond, others: 0.2, done: true}, suspend}
	}
	res := &relResults{rounds: 2, sims: []simBin{{"old", "/a", "v1"}, {"new", "/b", "v2"}}, stores: []string{"sqlite"},
		layouts: []string{"spread"}, sizes: []int{100, 1000},
		mcis: map[relKey][]mciRun{
			{"old", "sqlite", "spread", 100}: {{round: 1, layout: "7 subgroups", ops: ops(20*time.Millisecond, true)},
				{round: 2, ops: ops(30*time.Millisecond, false), note: "stopped at suspend"}},
			{"new", "sqlite", "spread", 100}:  {{round: 1, ops: ops(10*time.Millisecond, true)}, {round: 2, ops: ops(12*time.Millisecond, true)}},
			{"old", "sqlite", "spread", 1000}: {{round: 1, note: "not run: the 100-VM create was not done"}},
			{"new", "sqlite", "spread", 1000}: {{round: 1, ops: ops(5*time.Second, false)[1:], note: "stopped at suspend"}},
		},
		tenants: map[[2]string][]tenantRun{
			{"old", "sqlite"}: {{round: 1, vms: 100, asked: 2, lat: []time.Duration{5 * time.Millisecond, 9 * time.Millisecond},
				askedDuring: []bool{true, false}, during: []bool{true, false}, spec: 4 * time.Millisecond}},
			{"new", "sqlite"}: {{round: 1, vms: 100, asked: 2, lat: []time.Duration{5 * time.Millisecond}, askedDuring: []bool{true, true},
				during: []bool{true}, spec: 4 * time.Millisecond, failed: time.Second, note: "deploy 2: not landed"}},
		},
		timers: map[[2]string][]timerRun{
			{"old", "sqlite"}: {{round: 1, leases: 10, create: time.Second, idle: []time.Duration{time.Millisecond, 2 * time.Millisecond},
				firing: []time.Duration{3 * time.Millisecond}, allActive: 2 * time.Second, active: 10, spec: time.Millisecond}},
			{"new", "sqlite"}: {{round: 1, leases: 10, create: time.Second, allActive: 2 * time.Second, active: 9, note: "9 of 10 leases ACTIVE"}},
		},
	}
	var b strings.Builder
	writeRelationsReport(&b, cfg, nil, []string{"mci", "tenant", "timers"}, res)
	got := b.String()
	for _, want := range []string{
		// old: create done in both rounds (20, 30 ms: median 25 ms ÷ 9 ms), suspend in one of two.
		"| 100 | create | 100 | max(3 × 3.00 ms, 8.00 ms) (largest: aws) | 9.00 ms | 20.0 ms | 25.0 ms | 2.78× | 500 µs | 2/2 | 0.20 |",
		"| 100 | suspend | 100 | max(3 × 3.00 ms, 8.00 ms) (largest: aws) | 9.00 ms | 40.0 ms | 40.0 ms | 4.44× | 100 µs | 1/2 | 0.00 |",
		"- 100 VMs, round 2, suspend: not done after 1m",
		"- 1,000 VMs, round 1: not run: the 100-VM create was not done",
		// new at 1,000 VMs: never done, waited 10 s.
		"| 1,000 | suspend | 100 | max(3 × 3.00 ms, 8.00 ms) (largest: aws) | 9.00 ms | not done | > 10.0 s | – | – | 0/1 | 0.00 |",
		"| sqlite | spread | 100 | create | 25.0 ms | 11.0 ms | 0.44× | 500 µs | 500 µs | 1.00× |",
		"| sqlite | spread | 1,000 | suspend | – | not done | – | – | – | – |",
		"| old | sqlite | 2/2 | 1 / 1 | 5.00 ms | 5.00 ms | 9.00 ms | 4.00 ms | 56.0 ms | ✓ |",
		"| new | sqlite | 1/2 | 2 / 1 | 5.00 ms | 5.00 ms | not landed after 1.00 s | 4.00 ms | 56.0 ms | ✗ |",
		"- new sqlite round 1: deploy 2: not landed",
		"| old | sqlite | 10.0 | 1.00 ms / 2.00 ms / 2.00 ms | 3.00 ms / 3.00 ms / 3.00 ms (1) | 2.00 s / 2.00 s | 1.00 ms | 10 |",
		"| new | sqlite | 10.0 | – | – (0) | – / – | 0 µs | 9 |",
		"- new sqlite round 1: 9 of 10 leases ACTIVE",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("writeRelationsReport() lacks the line\n%s\nin\n%s", want, got)
		}
	}
}
