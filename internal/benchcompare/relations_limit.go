package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The relations mode's physical limit: how fast an MCI operation could possibly go under the
// rate limits the served kind declares, if the server cost nothing. It is computed from the
// kind's JSON as GET /v1/kinds/{name} serves it, read into the few shapes below (and not into
// lifecycle.Kind), so that a lifecyclesim built from another commit, whose kinds carry fields
// this checkout does not know (children[].limit), is read as it is served.

// kindJSON is the part of a served kind the limit needs.
type kindJSON struct {
	Name            string       `json:"name"`
	DefaultDuration string       `json:"default_duration"`
	Create          actionJSON   `json:"create"`
	Actions         []actionJSON `json:"actions"`
	Children        []childJSON  `json:"children"`
	Propagate       []propJSON   `json:"propagate"`
	Deletion        struct {
		Destroy nameList `json:"destroy"`
		Delete  nameList `json:"delete"`
	} `json:"deletion"`
	Update string      `json:"update"`
	Fields []fieldJSON `json:"fields"`
}

type actionJSON struct {
	Name string      `json:"name"`
	Via  []phaseJSON `json:"via"`
}

type phaseJSON struct {
	State    string `json:"state"`
	Duration string `json:"duration"`
}

type childJSON struct {
	Kind    string     `json:"kind"`
	ScaleIn string     `json:"scale_in"`
	Limit   *rateLimit `json:"limit"`
}

type propJSON struct {
	Start nameList `json:"start"`
	To    struct {
		Children string `json:"children"`
	} `json:"to"`
	Limit *rateLimit `json:"limit"`
}

type fieldJSON struct {
	Name     string `json:"name"`
	MaxItems int    `json:"max_items"`
	Max      *int   `json:"max"`
	Items    *struct {
		Fields []fieldJSON `json:"fields"`
	} `json:"items"`
}

// nameList is a list of names that may also be written as one string.
type nameList []string

func (n *nameList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*n = nameList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*n = many
	return nil
}

// rateLimit is a two-level limit (lifecycle.Limit as served): per value of the Outer spec field
// (the CSP), Inner groups (regions) at once and PerInner objects (VMs) per group at once.
type rateLimit struct {
	Outer   string                `json:"outer"`
	Inner   string                `json:"inner"`
	Groups  map[string]groupLimit `json:"groups"`
	Default groupLimit            `json:"default"`
}

type groupLimit struct {
	Inner    int `json:"inner"`
	PerInner int `json:"per_inner"`
}

func (l *rateLimit) forOuter(outer string) groupLimit {
	if g, ok := l.Groups[outer]; ok {
		return g
	}
	return l.Default
}

// action returns the named action ("create" is the create).
func (k *kindJSON) action(name string) (actionJSON, bool) {
	if name == "create" {
		return k.Create, true
	}
	for _, a := range k.Actions {
		if a.Name == name {
			return a, true
		}
	}
	return actionJSON{}, false
}

// phasesTime is how long an action's phases take at time scale 1 (a phase without a duration
// takes the kind's default_duration, or 1 s without one: lifecycle.Kind.PhaseDuration).
func (k *kindJSON) phasesTime(a actionJSON) (time.Duration, error) {
	def := time.Second
	if k.DefaultDuration != "" {
		d, err := time.ParseDuration(k.DefaultDuration)
		if err != nil {
			return 0, fmt.Errorf("kind %s: default_duration %q: %w", k.Name, k.DefaultDuration, err)
		}
		if d > 0 {
			def = d
		}
	}
	var sum time.Duration
	for _, p := range a.Via {
		d := def
		if p.Duration != "" {
			pd, err := time.ParseDuration(p.Duration)
			if err != nil {
				return 0, fmt.Errorf("kind %s: phase %s: duration %q: %w", k.Name, p.State, p.Duration, err)
			}
			if pd > 0 {
				d = pd
			}
		}
		sum += d
	}
	return sum, nil
}

// actionTime is phasesTime of the named action.
func (k *kindJSON) actionTime(name string) (time.Duration, error) {
	a, ok := k.action(name)
	if !ok {
		return 0, fmt.Errorf("kind %s has no action %q", k.Name, name)
	}
	return k.phasesTime(a)
}

// childLimit is the limit on creating children of kind (nil: none declared, all at once).
func (k *kindJSON) childLimit(kind string) *rateLimit {
	for _, c := range k.Children {
		if c.Kind == kind {
			return c.Limit
		}
	}
	return nil
}

// scaleIn is the action a surplus child of kind runs when its group shrinks.
func (k *kindJSON) scaleIn(kind string) string {
	for _, c := range k.Children {
		if c.Kind == kind && c.ScaleIn != "" {
			return c.ScaleIn
		}
	}
	return "terminate"
}

// propagationLimit is the limit on the action propagated to children of kind when action
// starts (nil: no limit declared).
func (k *kindJSON) propagationLimit(action, kind string) *rateLimit {
	for _, p := range k.Propagate {
		if p.To.Children == kind && slices.Contains(p.Start, action) {
			return p.Limit
		}
	}
	return nil
}

// listBounds are the most items of a list field and the highest value of an integer field of
// its items (an MCI's subgroups and their count); ok is false when the kind declares neither.
func (k *kindJSON) listBounds(list, field string) (maxItems, maxValue int, ok bool) {
	for _, f := range k.Fields {
		if f.Name != list || f.Items == nil {
			continue
		}
		for _, g := range f.Items.Fields {
			if g.Name == field && g.Max != nil && f.MaxItems > 0 {
				return f.MaxItems, *g.Max, true
			}
		}
	}
	return 0, 0, false
}

// place is where VMs run: one value of the limit's outer field (a CSP) and of its inner one
// (a region).
type place struct{ outer, inner string }

func (p place) String() string { return p.outer + "/" + p.inner }

// waves is how many rounds of one VM action the limit needs for the VMs counted per place:
// per outer value (CSP), each inner group (region) takes ⌈VMs ÷ per_inner⌉ rounds and runs on
// one of `inner` lanes from its start to its end (the engine keeps a region's slot until its
// last VM landed); the groups are scheduled greedily, longest first, on the lane that frees
// first, and the CSP takes its lanes' makespan. The CSPs run side by side: the answer is the
// largest CSP's makespan, with that CSP. A nil limit runs everything at once (one round; none
// for no VMs). A limit value below 1 means no bound on that level.
func waves(l *rateLimit, vms map[place]int) (int, string) {
	if vmTotal(vms) == 0 {
		return 0, ""
	}
	if l == nil {
		return 1, ""
	}
	perOuter := map[string][]int{}
	for p, n := range vms {
		if n <= 0 {
			continue
		}
		g := l.forOuter(p.outer)
		w := 1
		if g.PerInner > 0 {
			w = (n + g.PerInner - 1) / g.PerInner
		}
		perOuter[p.outer] = append(perOuter[p.outer], w)
	}
	best, bestOuter := 0, ""
	for _, outer := range slices.Sorted(maps.Keys(perOuter)) {
		regions := perOuter[outer]
		m := makespan(regions, l.forOuter(outer).Inner)
		if m > best {
			best, bestOuter = m, outer
		}
	}
	return best, bestOuter
}

// makespan schedules jobs (each a number of rounds, run without a break) on lanes parallel
// lanes, longest first onto the least loaded lane, and returns when the last ends. lanes below
// 1 means one lane per job.
func makespan(jobs []int, lanes int) int {
	if len(jobs) == 0 {
		return 0
	}
	if lanes < 1 || lanes > len(jobs) {
		lanes = len(jobs)
	}
	sorted := slices.SortedFunc(slices.Values(jobs), func(a, b int) int { return cmp.Compare(b, a) })
	load := make([]int, lanes)
	for _, j := range sorted {
		i := slices.Index(load, slices.Min(load))
		load[i] += j
	}
	return slices.Max(load)
}

// physLimit is one operation's physical limit and what it is computed from. The VMs' actions
// start with the MCI's (an MCI's create makes its VMs and starts their creates at once, a
// propagation starts with the action, a scale reconciles at once) and the MCI waits in its
// last phase until they have landed: its own phases overlap the VMs' waves, so the bound is
// the longer of the two. Actions the MCI runs afterwards (a deletion's delete) add theirs.
type physLimit struct {
	waves    int           // rounds of the VM action the rate limit needs (largest CSP)
	outer    string        // the CSP that needs them ("" with no limit)
	limited  bool          // whether the kind declares a limit for this operation
	vmAction time.Duration // one VM action's phases, time-scaled
	mciOwn   time.Duration // the phases of the MCI's action its VMs move under, time-scaled
	mciAfter time.Duration // the phases of the MCI's actions after that one, time-scaled
}

// total is max(waves × the VM action, the MCI's phases) + the MCI's later phases.
func (p physLimit) total() time.Duration {
	return max(time.Duration(p.waves)*p.vmAction, p.mciOwn) + p.mciAfter
}

// inputs describes the limit's inputs for the table.
func (p physLimit) inputs() string {
	lim := "no limit declared: one wave"
	if p.limited {
		lim = "largest: " + p.outer
	}
	after := ""
	if p.mciAfter > 0 {
		after = " + " + fmtDur(p.mciAfter)
	}
	return fmt.Sprintf("max(%d × %s, %s)%s (%s)", p.waves, fmtDur(p.vmAction), fmtDur(p.mciOwn), after, lim)
}

// mciOp is one measured MCI operation: what the MCI runs, what its VMs run and under which
// rate limit.
type mciOp struct {
	name      string   // the row's name
	mciAction []string // the MCI's actions, in order (a deletion runs terminate, then delete)
	vmAction  string   // the action each moving VM runs
	limit     *rateLimit
}

// mciOps are the measured operations, read from the MCI's kind: the create and a scale-out
// provision VMs under the children's limit (none declared: all at once); suspend, resume and
// the deletion's terminate reach the VMs under the propagation's limit; a scale-in ends the
// newest VMs all at once (the engine starts a scale-in without a limit).
func mciOps(mci *kindJSON) []mciOp {
	update := cmp.Or(mci.Update, "scale")
	destroy := []string(mci.Deletion.Destroy)
	if len(destroy) == 0 {
		destroy = []string{"terminate", "delete"}
	}
	return []mciOp{
		{name: "create", mciAction: []string{"create"}, vmAction: "create", limit: mci.childLimit("vm")},
		{name: "suspend", mciAction: []string{"suspend"}, vmAction: "suspend", limit: mci.propagationLimit("suspend", "vm")},
		{name: "resume", mciAction: []string{"resume"}, vmAction: "resume", limit: mci.propagationLimit("resume", "vm")},
		{name: "scale out", mciAction: []string{update}, vmAction: "create", limit: mci.childLimit("vm")},
		{name: "scale in", mciAction: []string{update}, vmAction: mci.scaleIn("vm")},
		{name: "terminate+delete", mciAction: destroy, vmAction: "terminate", limit: mci.propagationLimit(destroy[0], "vm")},
	}
}

// computeLimit is the physical limit of op moving the VMs counted per place, at timeScale.
func computeLimit(mci, vm *kindJSON, op mciOp, vms map[place]int, timeScale float64) (physLimit, error) {
	var p physLimit
	p.limited = op.limit != nil
	p.waves, p.outer = waves(op.limit, vms)
	d, err := vm.actionTime(op.vmAction)
	if err != nil {
		return p, err
	}
	p.vmAction = scaled(d, timeScale)
	for i, a := range op.mciAction {
		d, err := mci.actionTime(a)
		if err != nil {
			return p, err
		}
		if i == 0 {
			p.mciOwn = scaled(d, timeScale)
		} else {
			p.mciAfter += scaled(d, timeScale)
		}
	}
	return p, nil
}

func scaled(d time.Duration, timeScale float64) time.Duration {
	return time.Duration(float64(d) * timeScale)
}

// subgroup is one item of an MCI's subgroups.
type subgroup struct {
	Name   string `json:"name"`
	Count  int    `json:"count"`
	CSP    string `json:"csp"`
	Region string `json:"region"`
}

// spreadRegions are the places of the spread layout: 3 CSPs, 7 regions.
var spreadRegions = []place{
	{"aws", "us-east-1"}, {"aws", "eu-west-1"}, {"aws", "ap-northeast-2"},
	{"azure", "eastus"}, {"azure", "westeurope"},
	{"gcp", "us-central1"}, {"gcp", "asia-northeast3"},
}

// layoutSubgroups spreads n VMs over subgroups of at most maxCount VMs (and at most maxItems
// subgroups), as even as they go. spread: over the 7 regions of spreadRegions, at least one
// subgroup per region and a multiple of 7 subgroups where the maximum allows; single: all in
// AWS us-east-1.
func layoutSubgroups(layout string, n, maxItems, maxCount int) ([]subgroup, error) {
	if n < 1 {
		return nil, fmt.Errorf("an MCI needs at least 1 VM, got %d", n)
	}
	if n > maxItems*maxCount {
		return nil, fmt.Errorf("%d VMs do not fit the MCI's %d subgroups of at most %d", n, maxItems, maxCount)
	}
	g := (n + maxCount - 1) / maxCount
	var at func(i int) place
	switch layout {
	case "spread":
		k := len(spreadRegions)
		g = min((max(g, k)+k-1)/k*k, maxItems, n)
		at = func(i int) place { return spreadRegions[i%k] }
	case "single":
		at = func(int) place { return spreadRegions[0] }
	default:
		return nil, fmt.Errorf("layout %q: want spread or single", layout)
	}
	out := make([]subgroup, g)
	for i := range out {
		p := at(i)
		out[i] = subgroup{Name: fmt.Sprintf("sg%03d", i+1), Count: n / g, CSP: p.outer, Region: p.inner}
		if i < n%g {
			out[i].Count++
		}
	}
	return out, nil
}

// mciLayout lays n VMs out as layoutSubgroups does, within the subgroups the MCI kind allows
// (100 of at most 100 VMs when it declares no bounds); maxCount is the most VMs of one.
func mciLayout(mci *kindJSON, layout string, n int) (sgs []subgroup, maxCount int, err error) {
	maxItems, maxCount, ok := mci.listBounds("subgroups", "count")
	if !ok {
		maxItems, maxCount = 100, 100
	}
	sgs, err = layoutSubgroups(layout, n, maxItems, maxCount)
	return sgs, maxCount, err
}

// resized spreads a change of delta VMs (negative: fewer) over the subgroups round robin,
// none going below 0 or above maxCount; ok is false when they cannot take delta.
func resized(sgs []subgroup, delta, maxCount int) ([]subgroup, bool) {
	out := slices.Clone(sgs)
	step := 1
	if delta < 0 {
		step, delta = -1, -delta
	}
	for delta > 0 {
		moved := false
		for j := range out {
			if c := out[j].Count + step; delta > 0 && c >= 0 && c <= maxCount {
				out[j].Count = c
				delta--
				moved = true
			}
		}
		if !moved {
			return nil, false
		}
	}
	return out, true
}

// perPlace counts the VMs of subgroups per place.
func perPlace(sgs []subgroup) map[place]int {
	m := map[place]int{}
	for _, s := range sgs {
		m[place{s.CSP, s.Region}] += s.Count
	}
	return m
}

// diffPlaces is |b − a| per place: the VMs a change from a to b adds or removes there.
func diffPlaces(a, b []subgroup) map[place]int {
	pa, pb := perPlace(a), perPlace(b)
	out := map[place]int{}
	for p, n := range pb {
		if d := n - pa[p]; d != 0 {
			out[p] = abs(d)
		}
	}
	for p, n := range pa {
		if _, ok := pb[p]; !ok && n != 0 {
			out[p] = n
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// vmTotal is how many VMs are counted per place.
func vmTotal(vms map[place]int) int {
	n := 0
	for _, c := range vms {
		n += c
	}
	return n
}

// vmCount is how many VMs the subgroups hold.
func vmCount(sgs []subgroup) int {
	n := 0
	for _, s := range sgs {
		n += s.Count
	}
	return n
}

// describeLayout says where the VMs are, e.g. "aws/us-east-1 1,429, ...".
func describeLayout(sgs []subgroup) string {
	m := perPlace(sgs)
	var parts []string
	for _, p := range spreadRegions {
		if n, ok := m[p]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", p, thousands(int64(n))))
		}
	}
	noun := "subgroups"
	if len(sgs) == 1 {
		noun = "subgroup"
	}
	return fmt.Sprintf("%d %s: %s", len(sgs), noun, strings.Join(parts, ", "))
}
