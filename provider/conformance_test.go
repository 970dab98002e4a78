package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle/kindgen"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// The conformance suite: for each kind file kindgen draws, the subject kind's typed resource
// (lifecycle_<kind>) and lifecycle_object go through their whole life through the real
// terraform binary, against an in-process simulator serving the file and the provider
// configured with it: create (with values known only after apply); a change of each mutable
// field, one apply each (the children's copied fields following it); plans refused for a fraction in an integer field and an item without
// its required field; a guard's refusal while the object it looks at is shut; a replacement's
// create refused while the object its link must find in some state is shut; a walk to every
// reachable status; a status no route reaches (planned as a replacement, with its warning) and
// one no new object reaches (refused at plan); an immutable field's replacement; import by ID
// (odd seeds first write lifecycle_object's item defaults out: recorded, no value changes);
// identity import and list at the protocol level (and end to end, import blocks with an
// identity and terraform query, when TF_ACC_TERRAFORM_PATH names a Terraform 1.14 or newer);
// `moved` from lifecycle_object to the typed resource; destroy (nothing left, or the object
// left with the warning that says so). Every apply is followed by a plan that must be empty.
//
// make test runs kindgen.FixedSeeds (together they use every construct of the format);
// make conformance SEEDS=N runs seeds 0 to N-1; SEED=a,b replays some. A failure prints the seed
// and its kind file.

// knownDefects are known provider defects the suite keeps away from. While one is true, the
// suite avoids the construct it breaks (and logs `known defect "name" (knownDefects): what it
// avoids`, which make conformance counts); flip it to false when the fix lands, and the suite
// covers the construct again. KNOWN_DEFECTS_OFF=name,name turns some off for one run, to check
// a fix before flipping it. None is known now.
var knownDefects = map[string]bool{}

// conformanceSeeds are the seeds to run: SEED=a,b (a replay), SEEDS=N (0 to N-1), or the
// fixed seeds.
func conformanceSeeds(t *testing.T) []uint64 {
	t.Helper()
	seeds, err := parseSeeds(os.Getenv("SEED"), os.Getenv("SEEDS"))
	if err != nil {
		t.Fatal(err)
	}
	return seeds
}

// parseSeeds reads SEED (a list of seeds) and SEEDS (how many, from 0); neither set gives the
// fixed seeds.
func parseSeeds(seed, seeds string) ([]uint64, error) {
	if seed != "" {
		var out []uint64
		for _, s := range strings.Split(seed, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("SEED=%s: %q is not a seed (a whole number); SEED=12 or SEED=12,40 replays seeds", seed, s)
			}
			out = append(out, n)
		}
		return out, nil
	}
	if seeds != "" {
		n, err := strconv.ParseUint(seeds, 10, 64)
		if err != nil || n == 0 || n > 100000 {
			return nil, fmt.Errorf("SEEDS=%s: want how many seeds to run, from 1 to 100000 (seeds 0 to SEEDS-1)", seeds)
		}
		out := make([]uint64, n)
		for i := range out {
			out[i] = uint64(i)
		}
		return out, nil
	}
	return kindgen.FixedSeeds, nil
}

// TestParseSeeds: SEED replays a list, SEEDS counts from 0, neither runs the fixed seeds, and
// a bad value says what to write.
func TestParseSeeds(t *testing.T) {
	tests := []struct {
		name, seed, seeds string
		want              []uint64
		err               string
	}{
		{"fixed", "", "", kindgen.FixedSeeds, ""},
		{"one", "12", "", []uint64{12}, ""},
		{"list", "12, 40", "300", []uint64{12, 40}, ""},
		{"count", "", "3", []uint64{0, 1, 2}, ""},
		{"bad seed", "x", "", nil, `SEED=x: "x" is not a seed`},
		{"no seeds", "", "0", nil, `SEEDS=0: want how many seeds to run`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSeeds(tt.seed, tt.seeds)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseSeeds(%q, %q) error = %v, want %q", tt.seed, tt.seeds, err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("parseSeeds(%q, %q) = %v, %v, want %v", tt.seed, tt.seeds, got, err, tt.want)
			}
		})
	}
}

// smallestSeed is the seed whose subject kind has the fewest states and fields (the quickest
// to replay).
func smallestSeed(seeds []uint64) uint64 {
	size := func(seed uint64) int {
		s := kindgen.ForSeed(seed)
		k, _ := s.Kind(s.Subject)
		return len(s.Kinds) + len(k.States.Static) + len(k.Fields)
	}
	best := seeds[0]
	for _, seed := range seeds[1:] {
		if size(seed) < size(best) {
			best = seed
		}
	}
	return best
}

// TestConformanceReplay runs the replay a failure prints: make conformance SEED=n passes the
// seed to the suite, and the suite with SEED=n runs that seed alone (the test binary again).
func TestConformanceReplay(t *testing.T) {
	seed := strconv.FormatUint(smallestSeed(kindgen.FixedSeeds), 10)
	if _, err := exec.LookPath("make"); err == nil {
		out, err := exec.Command("make", "-C", "..", "-n", "conformance", "SEED="+seed).CombinedOutput()
		if err != nil {
			t.Fatalf("make -n conformance SEED=%s: %v\n%s", seed, err, out)
		}
		for _, want := range []string{"SEED='" + seed + "'", "-run '^TestAccConformance$'", "TF_ACC=1"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("make conformance SEED=%s runs\n%s\nwhich does not say %s", seed, out, want)
			}
		}
	}
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run the replay through terraform")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAccConformance$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "SEED="+seed, "SEEDS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the replay of seed %s failed: %v\n%s", seed, err, out)
	}
	for _, want := range []string{"--- PASS: TestAccConformance/seed-" + seed + " ", "CONFORMANCE 1 seeds"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the replay of seed %s does not say %q:\n%s", seed, want, out)
		}
	}
}

// TestAccConformance runs the conformance suite on each seed's kinds.
func TestAccConformance(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run acceptance tests")
	}
	seeds := conformanceSeeds(t)
	// KNOWN_DEFECTS_OFF=a,b runs the constructs of those defects, to check a fix.
	if v := os.Getenv("KNOWN_DEFECTS_OFF"); v != "" {
		for _, name := range strings.Split(v, ",") {
			if _, ok := knownDefects[name]; !ok {
				t.Fatalf("KNOWN_DEFECTS_OFF=%s: %q is not one of knownDefects: %s", v, name, strings.Join(slices.Sorted(maps.Keys(knownDefects)), ", "))
			}
			knownDefects[name] = false
		}
	}
	start := time.Now()
	var stats conformanceStats
	t.Cleanup(func() {
		t.Logf("CONFORMANCE %d seeds, %d kinds, %d terraform commands, %d steps, %s", len(seeds), stats.kinds.Load(),
			stats.commands.Load(), stats.steps.Load(), time.Since(start).Round(time.Second))
	})
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			t.Parallel()
			newConformance(t, seed, &stats).run()
		})
	}
}

// conformanceStats counts what a run covers.
type conformanceStats struct {
	kinds, commands, steps atomic.Int64
}

// conformance is one seed's run.
type conformance struct {
	t     *testing.T
	seed  uint64
	set   *kindgen.Set
	file  string
	kind  *lifecycle.Kind
	sim   *testSim
	tf    *confCLI
	prov  func() *lifecycleProvider
	stats *conformanceStats
	// typ is the typed resource's type.
	typ string
	// The configuration applied last.
	cur desired
	// copied holds what expectCopied saw last: each subject object's spec and each child's
	// spec and count of its `moved` action's runs, by ID.
	copied map[string]copiedSeen
}

// copiedSeen is one object as expectCopied saw it last.
type copiedSeen struct {
	spec  map[string]any
	moved int
}

// desired is a configuration of the subject's resources.
type desired struct {
	status string
	// vals holds the variant (0 or 1) of each field the configuration sets.
	vals map[string]int
	// typedStatus and objectStatus, when set, replace status for one of the resources.
	typedStatus, objectStatus string
	// typed and object say which of the two resources the configuration declares; moved
	// declares the typed one with the object's name and a moved block from lifecycle_object.
	typed, object, moved bool
	// objectFull spells every defaulted field of lifecycle_object's list items out (the first
	// item leaves them out otherwise).
	objectFull bool
	// targetFirst gives the link's target `create_before_destroy`.
	targetFirst bool
}

func (d desired) clone() desired {
	d.vals = cloneVals(d.vals)
	return d
}

func cloneVals(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func newConformance(t *testing.T, seed uint64, stats *conformanceStats) *conformance {
	t.Helper()
	set := kindgen.ForSeed(seed)
	b, err := set.YAML(fmt.Sprintf("kindgen seed %d (replay: make conformance SEED=%d)", seed, seed))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "kinds.yaml")
	writeFile(t, file, string(b))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("conformance seed %d failed; replay it with make conformance SEED=%d (or TF_ACC=1 SEED=%d go test ./provider -run '^TestAccConformance$' -count=1 -v). Its kind file:\n%s",
				seed, seed, seed, b)
		}
	})
	u := loadUserKindFiles(userKindsEnv, file)
	if u.err != nil {
		t.Fatalf("seed %d: the provider does not load the file: %v", seed, u.err)
	}
	k, err := u.reg.Kind(set.Subject)
	if err != nil {
		t.Fatal(err)
	}
	c := &conformance{t: t, seed: seed, set: set, file: file, kind: k, stats: stats,
		typ:  "lifecycle_" + set.Subject,
		prov: func() *lifecycleProvider { return &lifecycleProvider{version: "test", user: u} }}
	stats.kinds.Add(int64(len(set.Kinds)))
	c.sim = newTestSim(t, simtest.WithKinds(u.kinds...))
	c.tf = newConfCLI(t, c.prov, stats)
	return c
}

// step counts one step of the suite and logs it.
func (c *conformance) step(format string, args ...any) {
	c.stats.steps.Add(1)
	c.t.Logf("STEP %s", fmt.Sprintf(format, args...))
}

func (c *conformance) run() {
	k := c.kind
	first := k.Create.To
	// 1. Create, with the name and the link known only after apply, and the optional fields
	// that have defaults left out.
	c.cur = desired{status: first, vals: map[string]int{}, typed: true, object: true}
	for _, f := range k.Fields {
		if f.Default == nil || f.Required {
			c.cur.vals[f.Name] = 0
		}
	}
	verb := "create"
	if k.Hold != "" {
		// 0. A held create: made in the hold state without its create or its children; the
		// apply below continues it.
		held := c.cur.clone()
		held.status = k.Hold
		c.step("create held in %s", k.Hold)
		expectOutput(c.t, c.apply(held), `Apply complete!`)
		c.expectStates(k.Hold)
		c.expectNoChildren()
		c.cur.status = first
		verb = "continue the held create to"
	}
	c.step("%s %s", verb, first)
	out := c.apply(c.cur)
	expectOutput(c.t, out, `Apply complete!`)
	c.expectStates(first)
	c.expectChildren()
	c.expectDerived()
	c.expectCopied()

	// 2. Change every mutable field, one apply each.
	for _, f := range k.Fields {
		if !c.mutable(&f) {
			continue
		}
		next := c.cur.clone()
		next.vals[f.Name] = 1
		c.step("change %s", f.Name)
		out := c.apply(next)
		expectOutput(c.t, out, `0 added, [1-9][0-9]* changed, 0 destroyed`)
		c.expectSpec([]string{f.Name})
		c.expectCopied()
	}

	c.fractionRefused()
	c.itemRequiredRefused()
	c.guardRefusal(first)
	c.linkStatesRefused()
	c.linkDeleteRefused()

	// 3. Walk to every status a route reaches, final states last.
	at := first
	visited := map[string]bool{first: true}
	requestable := k.RequestableStates()
	for {
		var to string
		for _, s := range k.Reachable(at, false) {
			if !visited[s] && slices.Contains(requestable, s) && !k.IsFinal(s) {
				to = s
				break
			}
		}
		if to == "" {
			for _, s := range k.Reachable(at, false) {
				if !visited[s] && slices.Contains(requestable, s) {
					to = s
					break
				}
			}
		}
		if to == "" {
			break
		}
		route, err := k.Route(at, "", to, false)
		if err != nil {
			c.t.Fatalf("route %s → %s: %v", at, to, err)
		}
		next := c.cur.clone()
		next.status = to
		c.step("walk %s → %s (%s)", at, to, strings.Join(route.Actions(), ", "))
		c.apply(next)
		c.expectStates(to)
		visited[to] = true
		at = to
	}

	// 4. A status no route reaches from here, that a new object reaches: a replacement, with
	// its warning. One no new object reaches: refused at plan.
	c.replacementPlans(at)

	// 5. An immutable field replaced.
	c.immutableReplaced(at)

	// 6. Import by ID, then identity import and list at the protocol level.
	c.importByID()
	c.protocolIdentityAndList()
	if c.tf.atLeast(1, 14) {
		c.importByIdentity()
		c.query()
	} else {
		c.t.Logf("terraform %s: identity import and terraform query run at the protocol level only (TF_ACC_TERRAFORM_PATH=<terraform 1.14 or newer> runs them end to end)", c.tf.version)
	}

	// 7. moved from lifecycle_object to the typed resource.
	c.moved()

	// 8. Destroy.
	c.destroy()
}

// mutable reports whether the suite changes the field in place: not immutable, not a link
// (set by the create), not the list that makes the children.
func (c *conformance) mutable(f *lifecycle.Field) bool {
	if f.Immutable || c.isLink(f.Name) {
		return false
	}
	for _, ch := range c.kind.Children {
		if ch.Each == f.Name {
			return false
		}
	}
	return true
}

func (c *conformance) isLink(field string) bool {
	return slices.ContainsFunc(c.kind.Links, func(l lifecycle.Link) bool { return l.Field == field })
}

// guardRefusal shuts the object a guard looks at (the generated parent, or the generated kind
// a link points at) out of band, asks for a status whose route starts with a guarded action:
// the apply fails naming the state the object is in, and changes nothing; the object is then
// opened again.
func (c *conformance) guardRefusal(at string) {
	k := c.kind
	for _, g := range k.Guards {
		var addr, kind string
		switch {
		case g.Ancestor != "" && g.Ancestor == c.set.Parent:
			addr, kind = "lifecycle_"+c.set.Parent+".p", c.set.Parent
		case g.Link != "" && !c.isBuiltin(c.set.Target):
			addr, kind = "lifecycle_"+c.set.Target+".l", c.set.Target
		default:
			continue
		}
		var to string
		for _, s := range k.Reachable(at, false) {
			r, err := k.Route(at, "", s, false)
			if err == nil && len(r) > 0 && (len(g.Actions) == 0 || slices.Contains(g.Actions, r[0].Action)) {
				to = s
				break
			}
		}
		if to == "" {
			continue
		}
		gk, ok := c.set.Kind(kind)
		if !ok {
			continue
		}
		id := fmt.Sprint(c.stateValues()[addr]["id"])
		c.step("guard: %s %s shut, status %s refused", kind, id, to)
		c.sim.act(c.t, gk.Collection, id, "shut")
		next := c.cur.clone()
		next.status = to
		c.write(next)
		out, code := c.tf.run("apply", "-auto-approve", "-no-color")
		c.write(c.cur)
		if code == 0 {
			c.t.Errorf("apply of status %s while %s %s is SHUT: it succeeded, want the guard's refusal", to, kind, id)
		}
		expectOutput(c.t, out, `Error: `, `SHUT`)
		c.sim.act(c.t, gk.Collection, id, "open")
		c.expectStates(at)
		c.expectEmptyPlan(c.cur)
		return
	}
}

// linkStatesRefused shuts the generated kind a link the create sets points at (a link with
// `in:` states) out of band and replaces the typed resource: the new object's create is
// refused naming the state the linked object is in and the one it must be in; once that
// object is open again, the next apply makes the replacement.
func (c *conformance) linkStatesRefused() {
	k := c.kind
	var link *lifecycle.Link
	for i := range k.Links {
		l := &k.Links[i]
		if len(l.States) > 0 && slices.Contains(l.SetBy, k.Create.Name) && l.Kind == c.set.Target && !c.isBuiltin(l.Kind) {
			link = l
			break
		}
	}
	if link == nil || !c.cur.typed || slices.Contains(link.States, "SHUT") {
		return
	}
	tk, ok := c.set.Kind(c.set.Target)
	if !ok {
		return
	}
	id := fmt.Sprint(c.stateValues()["lifecycle_"+c.set.Target+".l"]["id"])
	c.step("link: %s %s shut, the create of a replacement refused", tk.Name, id)
	c.sim.act(c.t, tk.Collection, id, "shut")
	c.write(c.cur)
	out, code := c.tf.run("apply", "-auto-approve", "-no-color", "-replace="+c.typ+".t")
	if code == 0 {
		c.t.Errorf("apply replacing %s.t while %s %s is SHUT: it succeeded, want the create refused", c.typ, tk.Name, id)
	}
	expectOutput(c.t, out, `Error: `, regexp.QuoteMeta(tk.Name+" "+id)+` to be `+regexp.QuoteMeta(link.States[0])+`.* but it is SHUT`)
	c.sim.act(c.t, tk.Collection, id, "open")
	c.apply(c.cur)
	c.expectStates(c.cur.status)
}

// linkDeleteRefused replaces the link's target while the subject names it, where the link says
// `delete: refuse`: Terraform destroys the old target before it updates the subject to the new
// one, so the simulator refuses the destroy, naming the subject, and the error advises
// create_before_destroy; with it, the same replacement goes through.
func (c *conformance) linkDeleteRefused() {
	k := c.kind
	if !c.set.Uses(kindgen.LinkDeleteRefuse) || !c.cur.typed {
		return
	}
	l := k.Links[0]
	if !l.Refuses() || l.Kind != c.set.Target {
		c.t.Fatalf("seed %d draws %s but its first link is %+v", c.seed, kindgen.LinkDeleteRefuse, l)
	}
	addr := "lifecycle_" + c.set.Target + ".l"
	id := fmt.Sprint(c.stateValues()[addr]["id"])
	c.step("link delete: refuse: %s %s replaced while the %s names it, its destroy refused", l.Kind, id, k.Name)
	c.write(c.cur)
	out, code := c.tf.run("apply", "-auto-approve", "-no-color", "-replace="+addr)
	if code == 0 {
		c.t.Errorf("apply replacing %s while %s.t names it: it succeeded, want the destroy refused", addr, c.typ)
	}
	expectOutput(c.t, out, `Error: `, regexp.QuoteMeta(l.Kind+" "+id)+` is in use by [0-9]+ objects that name it: delete them first: .*`+
		regexp.QuoteMeta(k.Name+" "), `create_before_destroy = true`)
	if strings.Contains(out, "changed since the plan") {
		c.t.Errorf("the refused destroy says the object changed since the plan:\n%s", out)
	}
	if got := fmt.Sprint(c.stateValues()[addr]["id"]); got != id {
		c.t.Errorf("after the refused destroy %s is %s in state, want %s", addr, got, id)
	}
	// The advice: with create_before_destroy the subject moves to the new target first.
	first := c.cur.clone()
	first.targetFirst = true
	c.step("link delete: refuse: %s replaced with create_before_destroy", l.Kind)
	c.write(first)
	out = c.tf.mustRun("apply", "-auto-approve", "-no-color", "-replace="+addr)
	expectOutput(c.t, out, `Apply complete! Resources: 1 added, [1-9][0-9]* changed, 1 destroyed`)
	now := fmt.Sprint(c.stateValues()[addr]["id"])
	if now == id {
		c.t.Errorf("after the replacement %s is still %s", addr, id)
	}
	if named := c.stateValues()[c.typ+".t"][l.Field]; fmt.Sprint(named) != now {
		c.t.Errorf("after the replacement %s.t names %v, want the new %s %s", c.typ, named, l.Kind, now)
	}
	tk, err := lifecycle.Builtin().Kind(l.Kind)
	if gk, ok := c.set.Kind(l.Kind); ok {
		tk, err = gk, nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.sim.Client.Get(context.Background(), tk.Collection, id); !client.IsNotFound(err) {
		c.t.Errorf("the replaced %s %s: %v, want it gone", l.Kind, id, err)
	}
	c.apply(c.cur)
	c.expectStates(c.cur.status)
}

// isBuiltin reports whether kind is a built-in kind.
func (c *conformance) isBuiltin(kind string) bool {
	_, ok := kindgen.BuiltinTargets[kind]
	return ok
}

// itemRequiredRefused plans an item of a list of objects without its required field: refused
// at plan, naming the field.
func (c *conformance) itemRequiredRefused() {
	for _, f := range c.kind.Fields {
		if !isBlock(&f) {
			continue
		}
		var req string
		for _, sub := range f.Items.Fields {
			if sub.Required {
				req = sub.Name
				break
			}
		}
		if req == "" {
			continue
		}
		for _, addr := range c.addrs() {
			c.step("%s: an item of %s without %s refused at plan", addr, f.Name, req)
			c.write(c.cur)
			main := filepath.Join(c.tf.dir, "main.tf")
			b, err := os.ReadFile(main)
			if err != nil {
				c.t.Fatal(err)
			}
			cfg := string(b)
			// The first item's name ("zz") goes: a block's attribute line, or the JSON key.
			block := strings.Index(cfg, `resource "`+strings.Replace(addr, ".", `" "`, 1)+`"`)
			old := req + ` = "zz"`
			at := strings.Index(cfg[block:], old)
			if at < 0 {
				continue
			}
			cfg = cfg[:block+at] + cfg[block+at+len(old):]
			cfg = strings.Replace(cfg, "{ , ", "{ ", 1)
			writeFile(c.t, main, cfg)
			out, code := c.tf.run("plan", "-detailed-exitcode", "-no-color")
			c.write(c.cur)
			if code != 1 {
				c.t.Errorf("plan of %s with an item of %s without %s: exit %d, want 1 (refused)", addr, f.Name, req, code)
			}
			expectOutput(c.t, out, `Error: `, regexp.QuoteMeta(req))
		}
		return
	}
}

// fractionRefused plans a fraction for an integer field: refused at plan, naming the field.
func (c *conformance) fractionRefused() {
	var f *lifecycle.Field
	for i := range c.kind.Fields {
		if c.kind.Fields[i].Type == lifecycle.TypeInteger && c.mutable(&c.kind.Fields[i]) {
			f = &c.kind.Fields[i]
			break
		}
	}
	if f == nil {
		return
	}
	for _, addr := range c.addrs() {
		c.step("%s: %s = 2.5 refused at plan", addr, f.Name)
		c.write(c.cur)
		main := filepath.Join(c.tf.dir, "main.tf")
		b, err := os.ReadFile(main)
		if err != nil {
			c.t.Fatal(err)
		}
		// Only this resource's value changes.
		cfg := string(b)
		block := strings.Index(cfg, `resource "`+strings.Replace(addr, ".", `" "`, 1)+`"`)
		re := regexp.MustCompile(`(?m)^(\s+` + regexp.QuoteMeta(f.Name) + ` = )[0-9]+$`)
		loc := re.FindStringSubmatchIndex(cfg[block:])
		if loc == nil {
			c.write(c.cur)
			continue
		}
		cfg = cfg[:block+loc[3]] + "2.5" + cfg[block+loc[1]:]
		writeFile(c.t, main, cfg)
		out, code := c.tf.run("plan", "-detailed-exitcode", "-no-color")
		c.write(c.cur)
		if code != 1 {
			c.t.Errorf("plan of %s %s = 2.5: exit %d, want 1 (refused)", addr, f.Name, code)
		}
		expectOutput(c.t, out, `Error: `, regexp.QuoteMeta(f.Name))
		expectNoOutput(c.t, out, `always an error in the provider`)
	}
}

// replacementPlans plans a status no route reaches from at (a replacement when a new object
// gets there) and one no new object reaches (refused).
func (c *conformance) replacementPlans(at string) {
	k := c.kind
	first := k.Create.To
	reachesNew := func(s string) bool {
		if s == first {
			return true
		}
		_, err := k.Route(first, "", s, false)
		return err == nil
	}
	var replace, refuse string
	for _, s := range k.RequestableStates() {
		if s == at {
			continue
		}
		if _, err := k.Route(at, "", s, false); err == nil {
			continue
		}
		if replace == "" && reachesNew(s) {
			replace = s
		}
	}
	for _, s := range k.StaticStates() {
		if s == at || k.IsGone(s) || reachesNew(s) {
			continue
		}
		if _, err := k.Route(at, "", s, false); err != nil && refuse == "" {
			refuse = s
		}
	}
	if replace != "" {
		next := c.cur.clone()
		next.status = replace
		c.step("status %s (no route from %s, a new object gets there): a replacement", replace, at)
		out, code := c.plan(next)
		if code != 2 {
			c.t.Errorf("plan of status %s from %s: exit %d, want 2 (a replacement)", replace, at, code)
		}
		expectOutput(c.t, out, `Warning: `+c.set.Subject+` .* will be replaced`, `must be replaced`)
	} else {
		c.t.Logf("every requestable state is reachable from %s: no replacement to plan", at)
	}
	if refuse == "" {
		refuse = "NO_SUCH_STATE"
	}
	// One resource at a time: a typed resource's status fails validation, which would keep
	// lifecycle_object's plan from running.
	for _, addr := range c.addrs() {
		next := c.cur.clone()
		if addr == "lifecycle_object.o" {
			next.objectStatus = refuse
		} else {
			next.typedStatus = refuse
		}
		c.step("%s status %s (no new object gets there): refused at plan", addr, refuse)
		out, code := c.plan(next)
		if code != 1 {
			c.t.Errorf("plan of %s status %s: exit %d, want 1 (refused)", addr, refuse, code)
		}
		expectOutput(c.t, out, `Error: `, regexp.QuoteMeta(refuse), `with `+regexp.QuoteMeta(addr))
	}
}

// immutableReplaced changes the first immutable field: a replacement.
func (c *conformance) immutableReplaced(at string) {
	k := c.kind
	var f *lifecycle.Field
	for i := range k.Fields {
		if k.Fields[i].Immutable && !c.isLink(k.Fields[i].Name) {
			f = &k.Fields[i]
			break
		}
	}
	if f == nil {
		return
	}
	field := f.Name
	next := c.cur.clone()
	next.vals[field] = 1 - next.vals[field]
	if _, err := k.Route(k.Create.To, "", at, false); err != nil && at != k.Create.To {
		next.status = k.Create.To // a new object cannot get back to where this one is
	}
	c.step("change immutable %s: a replacement", field)
	out, code := c.plan(next)
	if code != 2 {
		c.t.Errorf("plan of a change of immutable %s: exit %d, want 2", field, code)
	}
	expectOutput(c.t, out, `must be replaced`)
	out = c.apply(next)
	expectOutput(c.t, out, `[1-9] added, 0 changed, [1-9] destroyed`)
	c.expectStates(next.status)
}

// importByID forgets both resources and imports them by ID.
func (c *conformance) importByID() {
	if c.cur.object && c.itemDefaults() && c.seed%2 == 1 {
		// Odd seeds write the items' defaults out first: no value changes, and the import
		// reads them back as written (even seeds import them left out).
		next := c.cur.clone()
		next.objectFull = true
		c.step("lifecycle_object's items with their defaults written out")
		c.apply(next)
		c.expectStates(c.cur.status)
	}
	ids := c.ids()
	c.step("import by ID")
	for _, addr := range c.addrs() {
		c.tf.mustRun("state", "rm", addr)
	}
	if c.cur.typed {
		c.tf.mustRun("import", "-no-color", c.typ+".t", ids[c.typ+".t"])
	}
	if c.cur.object {
		c.tf.mustRun("import", "-no-color", "lifecycle_object.o", c.set.Subject+"/"+ids["lifecycle_object.o"])
	}
	c.expectEmptyPlan(c.cur)
}

// itemDefaults reports whether a field the configuration sets is a list of objects whose
// items have defaulted fields.
func (c *conformance) itemDefaults() bool {
	for _, f := range c.kind.Fields {
		if _, set := c.cur.vals[f.Name]; !set || !isBlock(&f) {
			continue
		}
		if slices.ContainsFunc(f.Items.Fields, func(sub lifecycle.Field) bool { return sub.Default != nil }) {
			return true
		}
	}
	return false
}

// importByIdentity forgets both resources and imports them with import blocks naming their
// identity (Terraform 1.12+), then plans nothing.
func (c *conformance) importByIdentity() {
	ids := c.ids()
	c.step("import by identity (terraform %s)", c.tf.version)
	for _, addr := range c.addrs() {
		c.tf.mustRun("state", "rm", addr)
	}
	var blocks strings.Builder
	for _, addr := range c.addrs() {
		kind := ""
		if addr == "lifecycle_object.o" {
			kind = fmt.Sprintf(", kind = %q", c.set.Subject)
		}
		fmt.Fprintf(&blocks, "\nimport {\n  to       = %s\n  identity = { id = %q%s }\n}\n", addr, ids[addr], kind)
	}
	writeFile(c.t, filepath.Join(c.tf.dir, "main.tf"), c.config(c.cur)+blocks.String())
	out := c.tf.mustRun("apply", "-auto-approve", "-no-color")
	expectOutput(c.t, out, fmt.Sprintf(`%d imported, 0 added, 0 changed, 0 destroyed`, len(ids)))
	c.expectEmptyPlan(c.cur)
}

// query runs terraform query (1.14+) with a list block of the typed resource and of
// lifecycle_object for the kind: both find the objects.
func (c *conformance) query() {
	ids := c.ids()
	c.step("terraform query (terraform %s)", c.tf.version)
	q := fmt.Sprintf(`list %q "all" {
  provider = lifecycle
}

list "lifecycle_object" "all" {
  provider = lifecycle
  config {
    kind = %q
  }
}
`, c.typ, c.set.Subject)
	file := filepath.Join(c.tf.dir, "conformance.tfquery.hcl")
	writeFile(c.t, file, q)
	defer os.Remove(file)
	out := c.tf.mustRun("query", "-no-color")
	for _, id := range ids {
		expectOutput(c.t, out, regexp.QuoteMeta(id))
	}
}

// protocolIdentityAndList imports each object by its identity and lists the kind, at the
// protocol level (Terraform 1.12 and 1.14 features that CI's Terraform cannot run).
func (c *conformance) protocolIdentityAndList() {
	c.step("identity import and list (protocol)")
	p := newProtoProviderOf(c.t, c.sim, c.prov())
	ctx := context.Background()
	ids := c.ids()
	for addr, id := range ids {
		typeName, _, _ := strings.Cut(addr, ".")
		identity := map[string]string{"id": id}
		if typeName == "lifecycle_object" {
			identity["kind"] = c.set.Subject
		}
		imp, err := p.srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{
			TypeName: typeName, Identity: p.identity(c.t, typeName, identity)})
		if err != nil || hasError(imp.Diagnostics) || len(imp.ImportedResources) != 1 {
			c.t.Errorf("import %s by identity %v: %v %s", typeName, identity, err, diagText(imp.Diagnostics))
			continue
		}
		typ := p.schemas.ResourceSchemas[typeName].ValueType()
		read, err := p.srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typeName,
			CurrentState: imp.ImportedResources[0].State, CurrentIdentity: imp.ImportedResources[0].Identity})
		if err != nil || hasError(read.Diagnostics) {
			c.t.Errorf("read %s after the identity import: %v %s", typeName, err, diagText(read.Diagnostics))
			continue
		}
		if st := attrsOf(c.t, read.NewState, typ); st["id"] != id || st["state"] != c.cur.status {
			c.t.Errorf("%s imported by identity: id %q state %q, want %s %s", typeName, st["id"], st["state"], id, c.cur.status)
		}
	}
	for _, typeName := range []string{c.typ, "lifecycle_object"} {
		if _, ok := p.schemas.ListResourceSchemas[typeName]; !ok {
			c.t.Errorf("no list resource %s", typeName)
			continue
		}
		filter := map[string]string{}
		if typeName == "lifecycle_object" {
			filter["kind"] = c.set.Subject
		}
		got := p.list(c.t, typeName, filter, false, 0)
		var listed []string
		for _, r := range got {
			if hasError(r.Diagnostics) {
				c.t.Errorf("list %s: %s", typeName, diagText(r.Diagnostics))
				continue
			}
			listed = append(listed, attrsOf(c.t, r.Identity.IdentityData, p.identityType(c.t, typeName))["id"])
		}
		for _, id := range ids {
			if !slices.Contains(listed, id) {
				c.t.Errorf("list %s %v = %v, want it to hold %s", typeName, filter, listed, id)
			}
		}
	}
}

// moved removes the typed resource (destroying its object), then moves lifecycle_object to
// the typed resource: no change.
func (c *conformance) moved() {
	next := c.cur.clone()
	next.typed = false
	c.step("remove the typed resource")
	out := c.apply(next)
	c.expectForgetWarning(out)
	next = c.cur.clone()
	next.moved, next.typed, next.object = true, true, false
	c.step("moved from lifecycle_object to %s", c.typ)
	// A move is a change of the state (-detailed-exitcode 2), with nothing to do to the object.
	out, code := c.plan(next)
	if code != 2 {
		c.t.Errorf("plan of moved: exit %d, want 2 (the move alone)", code)
	}
	expectOutput(c.t, out, `lifecycle_object.o has moved to `+c.typ+`.t`, `Plan: 0 to add, 0 to change, 0 to destroy`)
	expectNoOutput(c.t, out, `must be replaced`, `update in-place`)
	c.apply(next)
}

// destroy runs terraform destroy: nothing is left of a kind with deletion; without, the
// object stays and the output says so.
func (c *conformance) destroy() {
	ids := c.ids()
	c.step("destroy")
	out := c.tf.mustRun("destroy", "-auto-approve", "-no-color")
	c.expectForgetWarning(out)
	for addr, id := range ids {
		_, err := c.sim.Client.Get(context.Background(), c.kind.Collection, id)
		gone := client.IsNotFound(err)
		switch {
		case err != nil && !gone:
			c.t.Errorf("reading %s %s after destroy: %v", addr, id, err)
		case c.kind.Deletion != nil && !gone:
			c.t.Errorf("%s %s is still in the simulator after destroy", addr, id)
		case c.kind.Deletion == nil && c.set.Parent == "" && gone:
			c.t.Errorf("%s %s was removed by destroy though its kind has no deletion", addr, id)
		}
	}
}

// expectForgetWarning checks the warning a kind without deletion gives when its resource is
// destroyed.
func (c *conformance) expectForgetWarning(out string) {
	if c.kind.Deletion == nil {
		expectOutput(c.t, out, `Warning: `+c.set.Subject+` \S+ left in the simulator`, `it stays`)
	}
}

// addrs are the subject's resource addresses in the current configuration.
func (c *conformance) addrs() []string {
	var out []string
	if c.cur.typed {
		out = append(out, c.typ+".t")
	}
	if c.cur.object {
		out = append(out, "lifecycle_object.o")
	}
	return out
}

// ids reads the subject's objects' IDs from the state.
func (c *conformance) ids() map[string]string {
	vals := c.stateValues()
	out := map[string]string{}
	for _, addr := range c.addrs() {
		v, ok := vals[addr]
		if !ok {
			c.t.Fatalf("%s is not in the state", addr)
		}
		out[addr] = fmt.Sprint(v["id"])
	}
	return out
}

// stateValues are the state's resources' attribute values by address (terraform show -json).
func (c *conformance) stateValues() map[string]map[string]any {
	return stateResources(c.t, c.tf.mustRunQuiet("show", "-json"))
}

// expectStates checks the subject's objects are in state, in the state file and the simulator.
func (c *conformance) expectStates(state string) {
	c.t.Helper()
	vals := c.stateValues()
	for _, addr := range c.addrs() {
		v := vals[addr]
		if got := fmt.Sprint(v["state"]); got != state {
			c.t.Errorf("%s: state %s in the Terraform state, want %s", addr, got, state)
		}
		o, err := c.sim.Client.Get(context.Background(), c.kind.Collection, fmt.Sprint(v["id"]))
		if err != nil {
			c.t.Errorf("%s: %v", addr, err)
			continue
		}
		if o.State != state {
			c.t.Errorf("%s: %s in the simulator, want %s", addr, o.State, state)
		}
	}
}

// expectSpec checks the changed fields hold their new values in the simulator.
func (c *conformance) expectSpec(fields []string) {
	c.t.Helper()
	vals := c.stateValues()
	for _, addr := range c.addrs() {
		o, err := c.sim.Client.Get(context.Background(), c.kind.Collection, fmt.Sprint(vals[addr]["id"]))
		if err != nil {
			c.t.Errorf("%s: %v", addr, err)
			continue
		}
		for _, name := range fields {
			f, _ := c.kind.Field(name)
			want, _ := json.Marshal(c.value(f, c.cur.vals[name], true))
			got, _ := json.Marshal(o.Spec[name])
			if !confJSONEqual(want, got) {
				c.t.Errorf("%s: spec.%s = %s in the simulator, want %s", addr, name, got, want)
			}
		}
	}
}

func confJSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// expectChildren checks the typed resource shows the children its create made, in the list
// field's order.
// expectNoChildren checks a held object has no children, in the simulator and in the typed
// resource's lists.
func (c *conformance) expectNoChildren() {
	if c.set.Child == "" {
		return
	}
	child, ok := c.set.Kind(c.set.Child)
	if !ok {
		return
	}
	vals := c.stateValues()
	for _, addr := range c.addrs() {
		kids, err := c.sim.Client.ListAll(context.Background(), child.Collection, client.ListOptions{ParentID: fmt.Sprint(vals[addr]["id"])})
		if err != nil || len(kids) != 0 {
			c.t.Errorf("%s: held, it has %d %s objects (%v), want none", addr, len(kids), child.Name, err)
		}
	}
	if list, ok := vals[c.typ+".t"][child.Collection].([]any); c.cur.typed && (!ok || len(list) != 0) {
		c.t.Errorf("%s.t: held, its %s list is %v, want empty", c.typ, child.Collection, vals[c.typ+".t"][child.Collection])
	}
}

func (c *conformance) expectChildren() {
	if c.set.Child == "" || !c.cur.typed {
		return
	}
	child, ok := c.set.Kind(c.set.Child)
	if !ok {
		return
	}
	vals := c.stateValues()[c.typ+".t"]
	list, ok := vals[child.Collection].([]any)
	if !ok {
		c.t.Errorf("%s.t has no %s list: %v", c.typ, child.Collection, vals)
		return
	}
	want := 0
	var prefixes []string
	for _, item := range c.partsItems(0) {
		n := 1
		if cnt, ok := item["count"]; ok {
			n = int(cnt.(int64))
		}
		want += n
		prefixes = append(prefixes, fmt.Sprint(item["name"]))
	}
	if len(list) != want {
		c.t.Errorf("%s.t.%s has %d children, want %d", c.typ, child.Collection, len(list), want)
		return
	}
	var names []string
	for _, e := range list {
		names = append(names, fmt.Sprint(e.(map[string]any)["name"]))
	}
	for i, j := 0, 0; i < len(names); i++ {
		for j < len(prefixes) && !strings.Contains(names[i], "-"+prefixes[j]) {
			j++
		}
		if j == len(prefixes) {
			c.t.Errorf("%s.t.%s = %v: not in the order of the items %v", c.typ, child.Collection, names, prefixes)
			return
		}
	}
}

// expectCopied checks, in the simulator, the fields the subject's children copy from it: a
// plain copy holds the subject's value; a time with a lead (`before`) is that long before the
// subject's, never before its `not_before` time, and once made moves by as much as the
// subject's time moves (still never before `not_before`); each move of a copied field runs the
// declaration's `moved` action on the child once.
func (c *conformance) expectCopied() {
	c.t.Helper()
	if c.copied == nil {
		c.copied = map[string]copiedSeen{}
	}
	ctx := context.Background()
	for _, decl := range c.kind.Children {
		ck, ok := c.set.Kind(decl.Kind)
		if len(decl.Copy) == 0 || !ok {
			continue
		}
		for _, id := range c.ids() {
			o, err := c.sim.Client.Get(ctx, c.kind.Collection, id)
			if err != nil {
				c.t.Fatalf("reading %s %s: %v", c.kind.Name, id, err)
			}
			kids, err := c.sim.Client.ListAll(ctx, ck.Collection, client.ListOptions{ParentID: id})
			if err != nil {
				c.t.Fatalf("listing the %s of %s: %v", ck.Collection, id, err)
			}
			was, seen := c.copied[id]
			for _, kid := range kids {
				before, kidSeen := c.copied[kid.ID]
				moved := 0
				if decl.Moved != "" {
					evs, err := c.sim.Client.Events(ctx, ck.Collection, kid.ID)
					if err != nil {
						c.t.Fatalf("events of %s %s: %v", ck.Name, kid.ID, err)
					}
					for _, ev := range evs {
						if ev.Action == decl.Moved && ev.To == kid.State {
							moved++
						}
					}
				}
				changed := false
				for to, from := range decl.Copy {
					want := o.Spec[from]
					if decl.Before != 0 || decl.NotBefore != "" {
						want = confLead(c.t, o.Spec, from, decl, before.spec[to], was.spec[from], seen && kidSeen)
					}
					if !confSameValue(kid.Spec[to], want) {
						c.t.Errorf("%s %s (of %s %s): %s = %v, want %v (the %s's %s = %v, before: %s, not_before: %q)",
							ck.Name, kid.ID, c.kind.Name, id, to, kid.Spec[to], want, c.kind.Name, from, o.Spec[from],
							time.Duration(decl.Before), decl.NotBefore)
					}
					if kidSeen && !confSameValue(kid.Spec[to], before.spec[to]) {
						changed = true
					}
				}
				if decl.Moved != "" && kidSeen {
					want := before.moved
					if changed {
						want++
					}
					if moved != want {
						c.t.Errorf("%s %s: its moved action %s ran %d times, want %d (a copied field moved: %t)", ck.Name, kid.ID, decl.Moved, moved, want, changed)
					}
				}
				c.copied[kid.ID] = copiedSeen{spec: kid.Spec, moved: moved}
			}
			c.copied[id] = copiedSeen{spec: o.Spec}
		}
	}
}

// confLead is the time a child copies from the parent's field from under a lead: at the
// child's create, the parent's time less `before`; after, the child's last time (kid) moved by
// as much as the parent's (from was to now); never before the parent's `not_before` time.
func confLead(t *testing.T, parent map[string]any, from string, decl lifecycle.Child, kid, was any, made bool) any {
	t.Helper()
	now, ok := confTime(parent[from])
	if !ok {
		return nil
	}
	want := now.Add(-time.Duration(decl.Before))
	if made {
		k, ok1 := confTime(kid)
		w, ok2 := confTime(was)
		if ok1 && ok2 {
			want = k.Add(now.Sub(w))
		}
	}
	if nb, ok := confTime(parent[decl.NotBefore]); ok && want.Before(nb) {
		want = nb
	}
	return want.UTC().Format(time.RFC3339)
}

func confTime(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// confSameValue compares two spec values; times by the instant they name.
func confSameValue(a, b any) bool {
	ta, ok1 := confTime(a)
	tb, ok2 := confTime(b)
	if ok1 && ok2 {
		return ta.Equal(tb)
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// expectDerived checks the typed resource shows the status fields the kind derives from its
// children (in derived_status).
func (c *conformance) expectDerived() {
	if c.kind.Derive == nil || !c.cur.typed {
		return
	}
	vals := c.stateValues()[c.typ+".t"]
	status, _ := vals["derived_status"].(map[string]any)
	for _, d := range c.kind.Derive.Use {
		if d.Status == "" {
			continue
		}
		_, top := vals[d.Status]
		_, nested := status[d.Status]
		if !top && !nested {
			c.t.Errorf("%s.t does not show the derived status field %s: %v", c.typ, d.Status, vals)
		}
	}
}

// apply writes the configuration, applies it and checks the plan after it is empty.
func (c *conformance) apply(d desired) string {
	c.t.Helper()
	c.write(d)
	out := c.tf.mustRun("apply", "-auto-approve", "-no-color")
	c.cur = d
	c.expectEmptyPlan(d)
	return out
}

// plan writes the configuration and plans it, returning the output and exit code
// (-detailed-exitcode: 0 no changes, 1 error, 2 changes). The configuration is not kept.
func (c *conformance) plan(d desired) (string, int) {
	c.t.Helper()
	c.write(d)
	out, code := c.tf.run("plan", "-detailed-exitcode", "-no-color")
	c.write(c.cur)
	return out, code
}

// expectEmptyPlan plans d and fails the test unless nothing changes.
func (c *conformance) expectEmptyPlan(d desired) {
	c.t.Helper()
	c.write(d)
	out, code := c.tf.run("plan", "-detailed-exitcode", "-no-color")
	if code != 0 {
		c.t.Fatalf("the plan after the step is not empty (exit %d):\n%s", code, out)
	}
}

// write writes main.tf for d.
func (c *conformance) write(d desired) {
	writeFile(c.t, filepath.Join(c.tf.dir, "main.tf"), c.config(d))
}

// config renders d: the provider, the names (known only after apply), the parent and link
// target, and the subject's resources.
func (c *conformance) config(d desired) string {
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    lifecycle = { source = "lifecyclesim/lifecycle" }
  }
}

provider "lifecycle" {
  endpoint = %q
}

# Names known only after apply.
resource "terraform_data" "names" {
  input = { t = "t%d", o = "o%d" }
}
`, c.sim.URL, c.seed, c.seed)
	if c.set.Parent != "" {
		fmt.Fprintf(&b, "\nresource \"lifecycle_%s\" \"p\" {\n  name = \"p%d\"\n}\n", c.set.Parent, c.seed)
	}
	if c.set.Target != "" {
		fmt.Fprintf(&b, "\nresource \"lifecycle_%s\" \"l\" {\n  name = \"l%d\"\n", c.set.Target, c.seed)
		if d.targetFirst {
			b.WriteString("  lifecycle {\n    create_before_destroy = true\n  }\n")
		}
		b.WriteString("}\n")
	}
	if d.typed {
		name := "t"
		if d.moved {
			name = "o"
			fmt.Fprintf(&b, "\nmoved {\n  from = lifecycle_object.o\n  to   = %s.t\n}\n", c.typ)
		}
		fmt.Fprintf(&b, "\nresource %q \"t\" {\n  name   = terraform_data.names.output.%s\n  status = %q\n", c.typ, name, cmp.Or(d.typedStatus, d.status))
		if c.set.Parent != "" {
			fmt.Fprintf(&b, "  %s_id = lifecycle_%s.p.id\n", c.set.Parent, c.set.Parent)
		}
		c.typedFields(&b, d)
		b.WriteString("}\n")
	}
	if d.object {
		fmt.Fprintf(&b, "\nresource \"lifecycle_object\" \"o\" {\n  kind   = %q\n  name   = terraform_data.names.output.o\n  status = %q\n", c.set.Subject, cmp.Or(d.objectStatus, d.status))
		if c.set.Parent != "" {
			fmt.Fprintf(&b, "  parent_id = lifecycle_%s.p.id\n", c.set.Parent)
		}
		var spec strings.Builder
		for _, f := range c.kind.Fields {
			v, ok := d.vals[f.Name]
			if !ok {
				continue
			}
			fmt.Fprintf(&spec, "    %s = %s\n", f.Name, c.objectValue(&f, v, d.objectFull))
		}
		fmt.Fprintf(&b, "  spec = {\n%s  }\n", spec.String())
		b.WriteString("}\n")
	}
	return b.String()
}

// typedFields writes the typed resource's field attributes and blocks.
func (c *conformance) typedFields(b *strings.Builder, d desired) {
	for _, f := range c.kind.Fields {
		v, ok := d.vals[f.Name]
		if !ok {
			continue
		}
		if c.isLink(f.Name) {
			fmt.Fprintf(b, "  %s = lifecycle_%s.l.id\n", f.Name, c.set.Target)
			continue
		}
		if isBlock(&f) {
			for _, item := range c.value(&f, v, false).([]map[string]any) {
				fmt.Fprintf(b, "  %s {\n", cmp.Or(f.ItemName, f.Name))
				for _, sub := range f.Items.Fields {
					if x, ok := item[sub.Name]; ok {
						fmt.Fprintf(b, "    %s = %s\n", sub.Name, confHCL(x))
					}
				}
				b.WriteString("  }\n")
			}
			continue
		}
		fmt.Fprintf(b, "  %s = %s\n", f.Name, confHCL(c.value(&f, v, false)))
	}
}

// objectValue is a field's value in lifecycle_object's spec, as users write it: a native HCL
// value (numbers, bools, lists and objects as such; times as strings).
func (c *conformance) objectValue(f *lifecycle.Field, v int, full bool) string {
	if c.isLink(f.Name) {
		return fmt.Sprintf("lifecycle_%s.l.id", c.set.Target)
	}
	return confHCL(c.value(f, v, full))
}

// partsItems are the items of the list that makes the children, variant v.
func (c *conformance) partsItems(v int) []map[string]any {
	for _, ch := range c.kind.Children {
		if f, ok := c.kind.Field(ch.Each); ok {
			return c.value(f, v, false).([]map[string]any)
		}
	}
	return nil
}

// value is a field's value, variant v (0 at create, 1 after a change). The first item of a
// list of objects leaves out its defaulted fields, unless full (the value the simulator holds).
func (c *conformance) value(f *lifecycle.Field, v int, full bool) any {
	if f.Type == lifecycle.TypeList && f.Items != nil && f.Items.Type == lifecycle.TypeObject {
		// Items out of name order (children follow the list), the first leaving out its
		// defaulted fields.
		names := []string{"zz", "aa"}
		if v == 1 {
			names = append(names, "mm")
		}
		var items []map[string]any
		for i, n := range names {
			item := map[string]any{}
			for _, sub := range f.Items.Fields {
				switch {
				case sub.Name == "name":
					item["name"] = n
				case sub.Default != nil && i == 0 && !full:
				case sub.Default != nil && i == 0:
					item[sub.Name] = confNormalise(&sub, sub.Default)
				default:
					item[sub.Name] = c.value(&sub, (v+i)%2, full)
				}
			}
			items = append(items, item)
		}
		return items
	}
	switch f.Type {
	case lifecycle.TypeString:
		if len(f.Enum) > 0 {
			return f.Enum[v%len(f.Enum)]
		}
		return []string{"alpha", "beta"}[v]
	case lifecycle.TypeInteger:
		lo := int64(0)
		if f.Min != nil {
			lo = int64(*f.Min)
		}
		return lo + 1 + int64(v)
	case lifecycle.TypeNumber:
		lo := 0.0
		if f.Min != nil {
			lo = *f.Min
		}
		return lo + 1.25 + float64(v)
	case lifecycle.TypeBool:
		return v == 0
	case lifecycle.TypeTime:
		if f.After != "" {
			// After both values of the field it must follow.
			return []string{"2099-08-01T00:00:00Z", "2099-09-01T00:00:00Z"}[v]
		}
		return []string{kindgen.FarFuture, "2099-06-01T00:00:00Z"}[v]
	case lifecycle.TypeList:
		if v == 0 {
			return []any{"a"}
		}
		return []any{"a", "b"}
	case lifecycle.TypeObject:
		out := map[string]any{}
		for _, sub := range f.Fields {
			out[sub.Name] = c.value(&sub, v, full)
		}
		return out
	}
	return nil
}

// confNormalise is a default as the suite writes values (integers as int64).
func confNormalise(f *lifecycle.Field, v any) any {
	if f.Type == lifecycle.TypeInteger {
		switch n := v.(type) {
		case int:
			return int64(n)
		case float64:
			return int64(n)
		}
	}
	return v
}

// confHCL renders a value as an HCL expression.
func confHCL(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		var parts []string
		for _, x := range v {
			parts = append(parts, confHCL(x))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []map[string]any:
		var parts []string
		for _, x := range v {
			parts = append(parts, confHCL(x))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var parts []string
		for _, k := range confKeys(v) {
			parts = append(parts, k+" = "+confHCL(v[k]))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return fmt.Sprint(v)
}

func confKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// confCLI runs the terraform binary (TF_ACC_TERRAFORM_PATH, or terraform on PATH) in a working
// directory of its own against the provider served in this process.
type confCLI struct {
	t       *testing.T
	dir     string
	bin     string
	version string
	env     []string
	stats   *conformanceStats
}

// newConfCLI serves the provider prov makes for the test's lifetime (TF_REATTACH_PROVIDERS).
func newConfCLI(t *testing.T, prov func() *lifecycleProvider, stats *conformanceStats) *confCLI {
	t.Helper()
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("terraform"); err != nil {
			t.Skip("terraform is not on PATH (or set TF_ACC_TERRAFORM_PATH)")
		}
	}
	info := serveReattached(t, prov())
	dir := t.TempDir()
	cliConfig := filepath.Join(dir, ".terraformrc")
	writeFile(t, cliConfig, "")
	env := []string{"TF_REATTACH_PROVIDERS=" + string(info), "TF_CLI_CONFIG_FILE=" + cliConfig,
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "CHECKPOINT_") {
			env = append(env, kv)
		}
	}
	c := &confCLI{t: t, dir: dir, bin: bin, env: env, stats: stats}
	out, code := c.exec("version", "-json")
	var v struct {
		Version string `json:"terraform_version"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("terraform version -json (%s): exit %d\n%s", bin, code, out)
	}
	c.version = v.Version
	return c
}

// atLeast reports whether the terraform is major.minor or newer.
func (c *confCLI) atLeast(major, minor int) bool {
	parts := strings.SplitN(c.version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (ma > major || ma == major && mi >= minor)
}

// run runs terraform with args and returns its output and exit code.
func (c *confCLI) run(args ...string) (string, int) {
	c.t.Helper()
	out, code := c.exec(args...)
	c.t.Logf("terraform %s (exit %d):\n%s", strings.Join(args, " "), code, out)
	return out, code
}

func (c *confCLI) exec(args ...string) (string, int) {
	c.t.Helper()
	c.stats.commands.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"-chdir=" + c.dir}, args...)...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	c.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
	return "", -1
}

// mustRun is run that fails the test when terraform fails.
func (c *confCLI) mustRun(args ...string) string {
	c.t.Helper()
	out, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("terraform %s failed (exit %d)", strings.Join(args, " "), code)
	}
	return out
}

// mustRunQuiet is mustRun without logging the output (terraform show -json).
func (c *confCLI) mustRunQuiet(args ...string) string {
	c.t.Helper()
	out, code := c.exec(args...)
	if code != 0 {
		c.t.Fatalf("terraform %s failed (exit %d):\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// TestConfCLIAtLeast: the Terraform version check that turns the end-to-end identity import and
// query on.
func TestConfCLIAtLeast(t *testing.T) {
	tests := []struct {
		version string
		want    bool
	}{
		{"1.11.4", false},
		{"1.14.0", true},
		{"1.15.9-dev", true},
		{"2.0.0", true},
		{"", false},
	}
	for _, tt := range tests {
		if got := (&confCLI{version: tt.version}).atLeast(1, 14); got != tt.want {
			t.Errorf("atLeast(1, 14) of %q = %v, want %v", tt.version, got, tt.want)
		}
	}
}
