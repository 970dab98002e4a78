package simulator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle/kindgen"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// TestGeneratedWhereTimers: on generated kinds whose children have a timer at a time copied
// from their parent (with a lead and a floor when the draw has them) that only children with
// one value run (`where`), the children with that value run it when the clock passes their
// time, and the others stay where they were. The conformance suite cannot see it: its times
// are in 2099.
func TestGeneratedWhereTimers(t *testing.T) {
	var seeds []uint64
	for seed := uint64(0); seed < 500 && len(seeds) < 3; seed++ {
		if s := kindgen.ForSeed(seed); whereTimer(s) != nil {
			seeds = append(seeds, seed)
		}
	}
	if len(seeds) == 0 {
		t.Fatal("no seed of 0-499 draws a child timer with where")
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			t.Parallel()
			runWhereTimer(t, seed)
		})
	}
}

// whereTimer is the set's child timer with `where` when the set has one and its subject needs
// no link.
func whereTimer(s *kindgen.Set) *lifecycle.Action {
	if !generatedFits(s) {
		return nil
	}
	child, _ := s.Kind(s.Child)
	for i := range child.Actions {
		if a := &child.Actions[i]; a.Actor == lifecycle.ActorTimer && len(a.Where) > 0 {
			return a
		}
	}
	return nil
}

// generated is one seed's kinds served by a simulator without a worker (each Advance runs
// what is due then, and nothing runs between), and a subject object made with them.
type generated struct {
	seed  uint64
	set   *kindgen.Set
	sim   *simtest.Sim
	k     *lifecycle.Kind
	child *lifecycle.Kind
	decl  lifecycle.Child
	// subject is the subject object: its time fields some hours ahead.
	subject *client.Object
}

// generatedRegistry is the built-in kinds with the seed's kind file loaded as --kinds loads it.
func generatedRegistry(t *testing.T, set *kindgen.Set, seed uint64) *lifecycle.Registry {
	t.Helper()
	b, err := set.YAML("")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "kinds.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := lifecycle.NewRegistry()
	if err := reg.Add(lifecycle.Builtin().Kinds()...); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.LoadFiles(file); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return reg
}

// startGenerated loads the seed's kind file as --kinds loads it and makes a subject with parts
// (the items of its children's list field): its required fields and time fields set, and
// under a parent made first when its kind has one. Its kinds need no link (generatedFits).
func startGenerated(t *testing.T, seed uint64, parts []any) *generated {
	t.Helper()
	g := &generated{seed: seed, set: kindgen.ForSeed(seed)}
	g.sim = simtest.Start(t, simtest.WithRegistry(generatedRegistry(t, g.set, seed)), simtest.WithoutWorker())
	ctx := context.Background()
	g.k, _ = g.set.Kind(g.set.Subject)
	g.child, _ = g.set.Kind(g.set.Child)
	g.decl = g.k.Children[len(g.k.Children)-1]
	var parentID string
	if g.set.Parent != "" {
		pk, _ := g.set.Kind(g.set.Parent)
		p, err := g.sim.Client.Create(ctx, pk.Collection, client.CreateRequest{Name: "p"})
		if err != nil {
			t.Fatalf("seed %d: creating the %s: %v", seed, pk.Name, err)
		}
		parentID = p.ID
		waitStatic(t, g.sim, pk.Collection, p.ID)
	}
	now := g.sim.Clock().Now()
	spec := map[string]any{g.decl.Each: parts}
	for _, f := range g.k.Fields {
		if v := whereValue(f, now); v != nil && (f.Required || f.Type == lifecycle.TypeTime) {
			spec[f.Name] = v
		}
	}
	o, err := g.sim.Client.Create(ctx, g.k.Collection, client.CreateRequest{Name: "s", ParentID: parentID, Spec: spec})
	if err != nil {
		t.Fatalf("seed %d: creating the %s with %v: %v", seed, g.k.Name, spec, err)
	}
	waitStatic(t, g.sim, g.k.Collection, o.ID)
	g.subject = o
	return g
}

// generatedFits reports whether startGenerated can make the set's subject with children: it
// has a child kind and no required link.
func generatedFits(s *kindgen.Set) bool {
	k, _ := s.Kind(s.Subject)
	if s.Child == "" {
		return false
	}
	for _, l := range k.Links {
		if f, _ := k.Field(l.Field); f.Required {
			return false
		}
	}
	return true
}

// kids lists the subject's children.
func (g *generated) kids(t *testing.T) []client.Object {
	t.Helper()
	kids, err := g.sim.Client.ListAll(context.Background(), g.child.Collection, client.ListOptions{ParentID: g.subject.ID})
	if err != nil {
		t.Fatalf("seed %d: the %s of %s: %v", g.seed, g.child.Collection, g.subject.ID, err)
	}
	return kids
}

// ran counts the landings of action on a child.
func (g *generated) ran(t *testing.T, kid client.Object, action string) int {
	t.Helper()
	evs, err := g.sim.Client.Events(context.Background(), g.child.Collection, kid.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Action == action && slices.Contains(g.child.States.Static, ev.To) {
			n++
		}
	}
	return n
}

func runWhereTimer(t *testing.T, seed uint64) {
	set := kindgen.ForSeed(seed)
	ring := whereTimer(set)
	child, _ := set.Kind(set.Child)
	field := ""
	for name := range ring.Where {
		field = name
	}
	grade, _ := child.Field(field)
	match := ring.Where[field]
	g := startGenerated(t, seed, []any{
		map[string]any{"name": "hit", field: match},
		map[string]any{"name": "miss", field: otherValue(grade, match)},
	})
	sim, ctx := g.sim, context.Background()
	kids := g.kids(t)
	if len(kids) != 2 {
		t.Fatalf("seed %d: the %s of %s: %v; want 2", seed, child.Collection, g.subject.ID, kids)
	}
	for _, kid := range kids {
		if kid.State != child.Create.To {
			t.Fatalf("seed %d: %s %s is %s before its time (now %s, spec %v), want %s", seed, child.Name, kid.Name, kid.State, sim.Clock().Now(), kid.Spec, child.Create.To)
		}
	}

	sim.Advance(t, 48*time.Hour)
	for _, kid := range kids {
		want := child.Create.To
		if fmt.Sprint(kid.Spec[field]) == fmt.Sprint(match) {
			want = ring.To
		}
		cur, err := sim.Client.Get(ctx, child.Collection, kid.ID)
		if err != nil {
			t.Fatalf("seed %d: reading %s %s: %v", seed, child.Name, kid.ID, err)
		}
		if cur.State != want {
			t.Errorf("seed %d: %s %s (%s: %v, %s %v, where %s: %v) is %s past its time, want %s", seed, child.Name, kid.Name,
				field, kid.Spec[field], ring.At, kid.Spec[ring.At], field, match, cur.State, want)
		}
		ran := g.ran(t, kid, ring.Name)
		if wantRan := map[bool]int{true: 1}[want == ring.To]; ran != wantRan {
			t.Errorf("seed %d: %s %s (%s: %v) ran %s %d times, want %d", seed, child.Name, kid.Name, field, kid.Spec[field], ring.Name, ran, wantRan)
		}
	}
}

// waitStatic moves the clock a minute at a time until the object is in a static state.
func waitStatic(t *testing.T, sim *simtest.Sim, collection, id string) {
	t.Helper()
	for range 10 {
		o, err := sim.Client.Get(context.Background(), collection, id)
		if err != nil {
			t.Fatalf("reading %s/%s: %v", collection, id, err)
		}
		if o.Static {
			return
		}
		sim.Advance(t, time.Minute)
	}
	t.Fatalf("%s/%s is not static after 10 minutes", collection, id)
}

// whereValue is a valid value of a generated field: times 10 hours from now (past the
// longest lead kindgen draws), or 11 for a field after another.
func whereValue(f lifecycle.Field, now time.Time) any {
	switch f.Type {
	case lifecycle.TypeString:
		if len(f.Enum) > 0 {
			return f.Enum[0]
		}
		return "x"
	case lifecycle.TypeInteger, lifecycle.TypeNumber:
		if f.Min != nil {
			return *f.Min + 1
		}
		return 1
	case lifecycle.TypeBool:
		return true
	case lifecycle.TypeTime:
		h := 10 * time.Hour
		if f.After != "" {
			h = 11 * time.Hour
		}
		return now.Add(h).UTC().Format(time.RFC3339)
	case lifecycle.TypeList:
		if f.Items != nil && f.Items.Type == lifecycle.TypeString {
			return []any{"a"}
		}
	}
	return nil
}

// otherValue is a valid value of f other than v.
func otherValue(f *lifecycle.Field, v any) any {
	switch f.Type {
	case lifecycle.TypeBool:
		b, _ := v.(bool)
		return !b
	case lifecycle.TypeString:
		for _, e := range f.Enum {
			if e != v {
				return e
			}
		}
		return fmt.Sprint(v, "x")
	case lifecycle.TypeInteger:
		n, _ := v.(int)
		return n + 1
	}
	return nil
}

// TestGeneratedCopiesFollow: on generated kinds whose children (one per item of a list field)
// copy fields of their parent, a change of those fields reaches the children: a plain copy
// takes the new value; a time with a lead (`before`) moves by as much as the parent's, never
// before the `not_before` time; and the declaration's `moved` action runs once on each child
// whose field moved. (Children made per item did not follow at all: only a single child did.)
func TestGeneratedCopiesFollow(t *testing.T) {
	var seeds []uint64
	covered := map[string]bool{}
	for seed := uint64(0); seed < 500; seed++ {
		s := kindgen.ForSeed(seed)
		if !generatedFits(s) || !copiesMutable(s) {
			continue
		}
		k, _ := s.Kind(s.Subject)
		decl := k.Children[len(k.Children)-1]
		var adds bool
		for what, ok := range map[string]bool{"plain": decl.Before == 0 && decl.NotBefore == "", "before": decl.Before != 0,
			"not_before": decl.NotBefore != "", "moved": decl.Moved != ""} {
			if ok && !covered[what] {
				covered[what], adds = true, true
			}
		}
		if adds {
			seeds = append(seeds, seed)
		}
	}
	if len(covered) < 4 {
		t.Fatalf("seeds 0-499 draw copies %v, want plain, before, not_before and moved", covered)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			t.Parallel()
			runCopiesFollow(t, seed)
		})
	}
}

// copiesMutable reports whether the subject's children copy fields a patch can change in the
// state its create lands in.
func copiesMutable(s *kindgen.Set) bool {
	k, _ := s.Kind(s.Subject)
	if len(k.Children) == 0 || len(k.Children[len(k.Children)-1].Copy) == 0 {
		return false
	}
	for _, f := range k.Fields {
		if f.Type == lifecycle.TypeTime && (f.Immutable || len(f.UpdatableIn) > 0) {
			return false
		}
	}
	for _, from := range k.Children[len(k.Children)-1].Copy {
		if f, _ := k.Field(from); f.Immutable || len(f.UpdatableIn) > 0 {
			return false
		}
	}
	return true
}

func runCopiesFollow(t *testing.T, seed uint64) {
	g := startGenerated(t, seed, []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}})
	ctx := context.Background()
	before := g.kids(t)
	// Every time field a day later (a field after another stays after it), the strings copied
	// changed.
	patch := map[string]any{}
	for _, f := range g.k.Fields {
		if tm, ok := lifecycle.TimeValue(g.subject.Spec[f.Name]); ok {
			patch[f.Name] = tm.Add(24 * time.Hour).Format(time.RFC3339)
		}
	}
	for _, from := range g.decl.Copy {
		if f, _ := g.k.Field(from); f.Type == lifecycle.TypeString {
			patch[from] = "changed"
		}
	}
	o, err := g.sim.Client.Patch(ctx, g.k.Collection, g.subject.ID, 0, client.PatchRequest{Spec: patch})
	if err != nil {
		t.Fatalf("seed %d: patching the %s with %v: %v", seed, g.k.Name, patch, err)
	}
	after := map[string]client.Object{}
	for _, kid := range g.kids(t) {
		after[kid.ID] = kid
	}
	for _, kid := range before {
		now := after[kid.ID]
		moved := false
		for to, from := range g.decl.Copy {
			want := o.Spec[from]
			if was, ok := lifecycle.TimeValue(kid.Spec[to]); ok && (g.decl.Before != 0 || g.decl.NotBefore != "") {
				tm := was.Add(24 * time.Hour)
				if nb, ok := lifecycle.TimeValue(o.Spec[g.decl.NotBefore]); ok && tm.Before(nb) {
					tm = nb
				}
				want = tm.Format(time.RFC3339)
			}
			if fmt.Sprint(now.Spec[to]) != fmt.Sprint(want) {
				t.Errorf("seed %d: %s %s: %s = %v after its %s's %s moved from %v to %v (before: %s, not_before: %q), want %v", seed,
					g.child.Name, kid.Name, to, now.Spec[to], g.k.Name, from, g.subject.Spec[from], o.Spec[from],
					time.Duration(g.decl.Before), g.decl.NotBefore, want)
			}
			moved = moved || fmt.Sprint(now.Spec[to]) != fmt.Sprint(kid.Spec[to])
		}
		if g.decl.Moved == "" {
			continue
		}
		if n, want := g.ran(t, now, g.decl.Moved), map[bool]int{true: 1}[moved]; n != want {
			t.Errorf("seed %d: %s %s ran %s %d times, want %d (its copy moved: %t)", seed, g.child.Name, kid.Name, g.decl.Moved, n, want, moved)
		}
	}
}

// TestGeneratedLinkDeleteRefuse: on generated kinds whose link says `delete: refuse` (to a
// generated kind or a built-in one), deleting the object a subject's link names is refused
// with a 422 that names the subject and says to delete it first, and leaves the object as it
// was; once the subject's link is cleared (where a patch can clear it) or the subject is gone,
// the delete goes through.
func TestGeneratedLinkDeleteRefuse(t *testing.T) {
	var seeds []uint64
	covered := map[bool]bool{} // by whether the target is built in
	for seed := uint64(0); seed < 500 && len(seeds) < 3; seed++ {
		s := kindgen.ForSeed(seed)
		if !s.Uses(kindgen.LinkDeleteRefuse) {
			continue
		}
		builtin := s.Uses(kindgen.LinkBuiltin)
		if !covered[builtin] || len(covered) == 2 {
			covered[builtin] = true
			seeds = append(seeds, seed)
		}
	}
	if len(covered) < 2 {
		t.Fatalf("seeds 0-499 draw a refusing link to built-in targets %v, want both", covered)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			t.Parallel()
			runLinkDeleteRefuse(t, seed)
		})
	}
}

func runLinkDeleteRefuse(t *testing.T, seed uint64) {
	set := kindgen.ForSeed(seed)
	reg := generatedRegistry(t, set, seed)
	sim := simtest.Start(t, simtest.WithRegistry(reg), simtest.WithoutWorker())
	ctx := context.Background()
	k, _ := set.Kind(set.Subject)
	link := k.Links[0]
	target, err := reg.Kind(link.Kind)
	if err != nil {
		t.Fatal(err)
	}
	var parentID string
	if set.Parent != "" {
		pk, _ := set.Kind(set.Parent)
		p, err := sim.Client.Create(ctx, pk.Collection, client.CreateRequest{Name: "p"})
		if err != nil {
			t.Fatalf("seed %d: creating the %s: %v", seed, pk.Name, err)
		}
		parentID = p.ID
		waitStatic(t, sim, pk.Collection, p.ID)
	}
	// makePair makes a target and a subject whose link names it.
	makePair := func(name string) (tgt, subj *client.Object) {
		tgt, err := sim.Client.Create(ctx, target.Collection, client.CreateRequest{Name: name + "-target"})
		if err != nil {
			t.Fatalf("seed %d: creating the %s: %v", seed, target.Name, err)
		}
		waitStatic(t, sim, target.Collection, tgt.ID)
		spec := map[string]any{link.Field: tgt.ID}
		for _, f := range k.Fields {
			if v := whereValue(f, sim.Clock().Now()); v != nil && f.Name != link.Field && (f.Required || f.Type == lifecycle.TypeTime) {
				spec[f.Name] = v
			}
		}
		subj, err = sim.Client.Create(ctx, k.Collection, client.CreateRequest{Name: name, ParentID: parentID, Spec: spec})
		if err != nil {
			t.Fatalf("seed %d: creating the %s with %v: %v", seed, k.Name, spec, err)
		}
		waitStatic(t, sim, k.Collection, subj.ID)
		return tgt, subj
	}
	// refused checks that deleting tgt is refused, naming subj, and leaves tgt as it was.
	refused := func(tgt, subj *client.Object) {
		t.Helper()
		was, _ := sim.Client.Get(ctx, target.Collection, tgt.ID)
		_, err := sim.Client.Delete(ctx, target.Collection, tgt.ID, "destroy")
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || apiErr.Code != client.CodeInvalidTransition {
			t.Fatalf("seed %d: DELETE of %s %s while %s %s names it: %v, want a 422 invalid_transition", seed, target.Name, tgt.ID, k.Name, subj.ID, err)
		}
		for _, want := range []string{target.Name + " " + tgt.ID + " is in use by 1 objects that name it", "delete them first",
			fmt.Sprintf("%s %s %q", k.Name, subj.ID, subj.Name)} {
			if !strings.Contains(apiErr.Message, want) {
				t.Errorf("seed %d: DELETE of %s %s: %q, want it to say %q", seed, target.Name, tgt.ID, apiErr.Message, want)
			}
		}
		if d, ok := apiErr.Transition(); !ok || !slices.Equal(d.InUseBy, []string{subj.ID}) {
			t.Errorf("seed %d: DELETE of %s %s: details %s, want in_use_by [%s]", seed, target.Name, tgt.ID, apiErr.Details, subj.ID)
		}
		if now, err := sim.Client.Get(ctx, k.Collection, subj.ID); err != nil {
			t.Fatal(err)
		} else if d, _ := apiErr.Transition(); !slices.Equal(d.Dependents, []client.Dependent{{ID: subj.ID, Kind: k.Name, Name: subj.Name,
			State: now.State, Via: link.Field}}) {
			t.Errorf("seed %d: DELETE of %s %s: details %s, want dependents [%s %s by %s]", seed, target.Name, tgt.ID, apiErr.Details, subj.ID, now.State, link.Field)
		}
		sim.Advance(t, time.Hour)
		if now, err := sim.Client.Get(ctx, target.Collection, tgt.ID); err != nil || now.State != was.State {
			t.Errorf("seed %d: after the refused DELETE %s %s is %v (%v), want %s", seed, target.Name, tgt.ID, now, err, was.State)
		}
	}
	deleted := func(collection, id string) {
		t.Helper()
		if _, err := sim.Client.Delete(ctx, collection, id, "destroy"); err != nil {
			t.Fatalf("seed %d: DELETE %s/%s: %v", seed, collection, id, err)
		}
		waitGone(t, sim, collection, id)
	}

	// Gone: once the subject is deleted, its target goes.
	tgt, subj := makePair("s")
	refused(tgt, subj)
	deleted(k.Collection, subj.ID)
	deleted(target.Collection, tgt.ID)

	// Cleared: once a patch clears the subject's link, its target goes while the subject stays.
	if f, _ := k.Field(link.Field); f.Required || f.Immutable || len(f.UpdatableIn) > 0 {
		return
	}
	tgt, subj = makePair("c")
	refused(tgt, subj)
	if _, err := sim.Client.Patch(ctx, k.Collection, subj.ID, 0, client.PatchRequest{Spec: map[string]any{link.Field: nil}}); err != nil {
		t.Fatalf("seed %d: clearing %s of %s %s: %v", seed, link.Field, k.Name, subj.ID, err)
	}
	waitStatic(t, sim, k.Collection, subj.ID)
	deleted(target.Collection, tgt.ID)
	if _, err := sim.Client.Get(ctx, k.Collection, subj.ID); err != nil {
		t.Errorf("seed %d: %s %s after its cleared link's target went: %v", seed, k.Name, subj.ID, err)
	}
}

// waitGone moves the clock a minute at a time until the object is gone (404).
func waitGone(t *testing.T, sim *simtest.Sim, collection, id string) {
	t.Helper()
	for range 10 {
		_, err := sim.Client.Get(context.Background(), collection, id)
		if client.IsNotFound(err) {
			return
		}
		if err != nil {
			t.Fatalf("reading %s/%s: %v", collection, id, err)
		}
		sim.Advance(t, time.Minute)
	}
	t.Fatalf("%s/%s is not gone after 10 minutes", collection, id)
}
