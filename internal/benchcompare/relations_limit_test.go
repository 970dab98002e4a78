package main

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// tumblebugLimit is the rate limit of lifecycle/specs/tumblebug.yaml.
var tumblebugLimit = &rateLimit{
	Outer: "csp", Inner: "region",
	Groups: map[string]groupLimit{
		"aws": {Inner: 10, PerInner: 30}, "azure": {Inner: 8, PerInner: 25}, "gcp": {Inner: 12, PerInner: 35},
		"ncp": {Inner: 3, PerInner: 15}, "alibaba": {Inner: 6, PerInner: 20},
	},
	Default: groupLimit{Inner: 5, PerInner: 20},
}

func mustLayout(t *testing.T, layout string, n int) []subgroup {
	t.Helper()
	sgs, err := layoutSubgroups(layout, n, 100, 100)
	if err != nil {
		t.Fatal(err)
	}
	return sgs
}

func TestWaves(t *testing.T) {
	tests := []struct {
		name      string
		limit     *rateLimit
		give      map[place]int
		want      int
		wantOuter string
	}{
		{name: "no VMs", limit: tumblebugLimit, give: map[place]int{}, want: 0},
		{name: "no limit: one wave", give: perPlace(mustLayout(t, "spread", 10000)), want: 1},
		// 100 subgroups of 100 round robin over 7 regions: 1,500 VMs in the first two regions
		// (aws), 1,400 in the others. aws ⌈1500/30⌉ = 50, azure ⌈1400/25⌉ = 56, gcp ⌈1400/35⌉ = 40;
		// every CSP has fewer regions than lanes.
		{name: "spread 10,000", limit: tumblebugLimit, give: perPlace(mustLayout(t, "spread", 10000)), want: 56, wantOuter: "azure"},
		// 100 VMs: 7 subgroups of 14 or 15; one wave everywhere.
		{name: "spread 100", limit: tumblebugLimit, give: perPlace(mustLayout(t, "spread", 100)), want: 1, wantOuter: "aws"},
		// ⌈10000/30⌉ = 334 waves in one region.
		{name: "single 10,000", limit: tumblebugLimit, give: perPlace(mustLayout(t, "single", 10000)), want: 334, wantOuter: "aws"},
		// ncp: 3 regions at once, 15 VMs each. Jobs 3,2,2,2,2,2 waves on 3 lanes, longest first:
		// lanes 3+2, 2+2, 2+2 → 5 (also the lower bound ⌈13/3⌉).
		{name: "more regions than lanes", limit: tumblebugLimit, give: map[place]int{
			{"ncp", "a"}: 45, {"ncp", "b"}: 30, {"ncp", "c"}: 30, {"ncp", "d"}: 30, {"ncp", "e"}: 30, {"ncp", "f"}: 16,
		}, want: 5, wantOuter: "ncp"},
		// A CSP without its own group takes the default (5 regions, 20 VMs): ⌈41/20⌉ = 3.
		{name: "default group", limit: tumblebugLimit, give: map[place]int{{"oracle", "x"}: 41, {"aws", "y"}: 60}, want: 3, wantOuter: "oracle"},
		// A limit of 0 bounds nothing on that level.
		{name: "zero is unbounded", limit: &rateLimit{Default: groupLimit{Inner: 0, PerInner: 0}},
			give: map[place]int{{"x", "a"}: 500, {"x", "b"}: 7}, want: 1, wantOuter: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, outer := waves(tt.limit, tt.give)
			if got != tt.want || outer != tt.wantOuter {
				t.Errorf("waves(%v) = %d, %q, want %d, %q", tt.give, got, outer, tt.want, tt.wantOuter)
			}
		})
	}
}

func TestMakespan(t *testing.T) {
	tests := []struct {
		name  string
		jobs  []int
		lanes int
		want  int
	}{
		{name: "none", jobs: nil, lanes: 3, want: 0},
		{name: "lanes to spare", jobs: []int{4, 1, 2}, lanes: 10, want: 4},
		{name: "one lane", jobs: []int{4, 1, 2}, lanes: 1, want: 7},
		{name: "longest first", jobs: []int{1, 1, 1, 1, 4}, lanes: 2, want: 4},
		{name: "no bound", jobs: []int{3, 5}, lanes: 0, want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := makespan(tt.jobs, tt.lanes); got != tt.want {
				t.Errorf("makespan(%v, %d) = %d, want %d", tt.jobs, tt.lanes, got, tt.want)
			}
		})
	}
}

// TestComputeLimit reads kinds as the server serves them: a children limit where the kind has
// one (provisioning in waves), none where it has not (all at once), phase durations from the
// phases or default_duration; the MCI's phases overlap its VMs' waves, and a deletion's later
// actions add theirs.
func TestComputeLimit(t *testing.T) {
	const mciWith = `{"name":"mci","default_duration":"2s",
		"create":{"name":"create","via":[{"state":"Preparing"},{"state":"Prepared"},{"state":"Creating","duration":"4s"}],"to":"Running"},
		"actions":[{"name":"suspend","via":[{"state":"Suspending"}]},{"name":"terminate","via":[{"state":"Terminating"}]},{"name":"delete","via":[{"state":"Deleting","duration":"5s"}]},{"name":"scale","via":[{"state":"Scaling"}]}],
		"children":[{"kind":"vm","scale_in":"terminate","limit":{"outer":"csp","inner":"region","groups":{"aws":{"inner":10,"per_inner":30}},"default":{"inner":5,"per_inner":20}}}],
		"propagate":[{"start":["suspend","terminate"],"to":{"children":"vm"},"limit":{"outer":"csp","inner":"region","default":{"inner":1,"per_inner":10}}},
			{"start":"refine","to":{"children":"vm"}}],
		"deletion":{"destroy":["terminate","delete"]},"update":"scale",
		"fields":[{"name":"subgroups","type":"list","max_items":100,"items":{"fields":[{"name":"count","max":100}]}}]}`
	const vmJSON = `{"name":"vm","default_duration":"2s","create":{"name":"create","via":[{"state":"Creating","duration":"3s"}]},
		"actions":[{"name":"suspend","via":[{"state":"Suspending"}]},{"name":"terminate","via":[{"state":"Terminating"}]}]}`
	var mci, mciNoChildLimit, vm kindJSON
	for _, k := range []struct {
		into *kindJSON
		js   string
	}{{&mci, mciWith}, {&vm, vmJSON}, {&mciNoChildLimit, mciWith}} {
		if err := json.Unmarshal([]byte(k.js), k.into); err != nil {
			t.Fatal(err)
		}
	}
	mciNoChildLimit.Children[0].Limit = nil
	if items, count, ok := mci.listBounds("subgroups", "count"); !ok || items != 100 || count != 100 {
		t.Errorf("listBounds = %d, %d, %v, want 100, 100, true", items, count, ok)
	}
	ms := time.Millisecond
	vms := map[place]int{{"aws", "r1"}: 61, {"gcp", "r2"}: 45}
	tests := []struct {
		name      string
		mci       *kindJSON
		op        string
		want      time.Duration
		wantWaves int
	}{
		// aws ⌈61/30⌉ = 3, gcp (default) ⌈45/20⌉ = 3: 3 × 3 ms against the MCI's (2+2+4) ms.
		{name: "create with a children limit", mci: &mci, op: "create", want: 9 * ms, wantWaves: 3},
		// One wave (3 ms) within the MCI's own 8 ms.
		{name: "create without", mci: &mciNoChildLimit, op: "create", want: 8 * ms, wantWaves: 1},
		// Default: 1 region at once, 10 per region: ⌈61/10⌉ = 7 for aws.
		{name: "suspend", mci: &mci, op: "suspend", want: 7 * 2 * ms, wantWaves: 7},
		// terminate's 7 waves (its own phase overlaps them), then delete's phases (one, 5 ms).
		{name: "terminate and delete", mci: &mci, op: "terminate+delete", want: 7*2*ms + 5*ms, wantWaves: 7},
		{name: "scale out", mci: &mci, op: "scale out", want: 3 * 3 * ms, wantWaves: 3},
		{name: "scale in: one wave", mci: &mci, op: "scale in", want: 2 * ms, wantWaves: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := slices.IndexFunc(mciOps(tt.mci), func(op mciOp) bool { return op.name == tt.op })
			if i < 0 {
				t.Fatalf("no operation %q", tt.op)
			}
			op := mciOps(tt.mci)[i]
			got, err := computeLimit(tt.mci, &vm, op, vms, 0.001)
			if err != nil {
				t.Fatal(err)
			}
			if got.total() != tt.want || got.waves != tt.wantWaves {
				t.Errorf("computeLimit(%s) = %v in %d waves (%s), want %v in %d", tt.op, got.total(), got.waves, got.inputs(), tt.want, tt.wantWaves)
			}
		})
	}
}

func TestLayoutSubgroups(t *testing.T) {
	tests := []struct {
		layout      string
		give        int
		wantGroups  int
		wantRegions int
	}{
		{"spread", 100, 7, 7},
		{"spread", 1000, 14, 7},
		{"spread", 10000, 100, 7},
		{"spread", 3, 3, 3},
		{"single", 10000, 100, 1},
		{"single", 150, 2, 1},
	}
	for _, tt := range tests {
		sgs := mustLayout(t, tt.layout, tt.give)
		if len(sgs) != tt.wantGroups || len(perPlace(sgs)) != tt.wantRegions || vmCount(sgs) != tt.give {
			t.Errorf("layoutSubgroups(%q, %d) = %d subgroups in %d regions with %d VMs, want %d in %d with %d",
				tt.layout, tt.give, len(sgs), len(perPlace(sgs)), vmCount(sgs), tt.wantGroups, tt.wantRegions, tt.give)
		}
		for _, s := range sgs {
			if s.Count > 100 || s.Count < 1 {
				t.Errorf("layoutSubgroups(%q, %d): subgroup %s has %d VMs", tt.layout, tt.give, s.Name, s.Count)
			}
		}
	}
	if _, err := layoutSubgroups("spread", 10001, 100, 100); err == nil {
		t.Error("layoutSubgroups(10001) fitted more VMs than 100 subgroups of 100 hold")
	}
}

func TestResized(t *testing.T) {
	full := mustLayout(t, "spread", 10000)
	if _, ok := resized(full, 1000, 100); ok {
		t.Error("resized(10,000 full, +1000) = ok, want no room")
	}
	less, ok := resized(full, -1000, 100)
	if !ok || vmCount(less) != 9000 {
		t.Fatalf("resized(10,000, -1000) = %d VMs, %v, want 9,000", vmCount(less), ok)
	}
	diff := diffPlaces(full, less)
	n := 0
	for _, d := range diff {
		n += d
	}
	if n != 1000 {
		t.Errorf("diffPlaces(10,000 → 9,000) = %v (%d VMs), want 1,000", diff, n)
	}
	more, ok := resized(mustLayout(t, "spread", 1000), 100, 100)
	if !ok || vmCount(more) != 1100 {
		t.Errorf("resized(1,000, +100) = %d VMs, %v, want 1,100", vmCount(more), ok)
	}
}
