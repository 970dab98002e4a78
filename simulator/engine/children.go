package engine

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// makeChildren makes the children c's kind declares, from its spec, and starts their create.
// Children a create waits for are added to its operation.
func (s *step) makeChildren(c *change) error {
	for i := range c.k.Children {
		ch := &c.k.Children[i]
		ck, err := s.e.reg.Kind(ch.Kind)
		if err != nil {
			return err
		}
		if err := checkItems(c.o, ch); err != nil {
			return err
		}
		for _, spec := range childSpecs(c.o, ch) {
			if _, err := s.makeChild(c, ch, ck, spec.name, spec.spec); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkItems refuses a spec whose list items would make children with the same names (two
// subgroups named web make the same VM names): items that name their children are unique by
// name.
func checkItems(parent *store.Object, ch *lifecycle.Child) error {
	if ch.Each == "" {
		return nil
	}
	items, _ := parent.Spec[ch.Each].([]any)
	seen := make(map[string]int, len(items))
	for i, it := range items {
		item, _ := it.(map[string]any)
		n := itemName(item, i)
		if j, ok := seen[n]; ok {
			field := fmt.Sprintf("spec.%s[%d].name", ch.Each, i)
			return &Error{Code: wire.CodeInvalid,
				Message: fmt.Sprintf("%s: %q is the name of %s[%d] too; the items of %s name their %s objects, so each needs its own name",
					field, n, ch.Each, j, ch.Each, ch.Kind),
				Details: map[string]string{"field": field}}
		}
		seen[n] = i
	}
	return nil
}

// checkChildName refuses a child name over the bound a user's name has: the simulator's names
// obey the rules users' do.
func checkChildName(parent *store.Object, ch *lifecycle.Child, name string) error {
	if len(name) <= MaxNameBytes {
		return nil
	}
	shown := name
	if len(shown) > 80 {
		shown = shown[:40] + "…" + shown[len(shown)-20:]
	}
	return &Error{Code: wire.CodeInvalid,
		Message: fmt.Sprintf("the %s name %q made from the %s's name would be %d bytes, over the limit of %d; use a shorter name for the %s or its items",
			ch.Kind, shown, parent.Kind, len(name), MaxNameBytes, parent.Kind),
		Details: map[string]string{"field": "name"}}
}

type childSpec struct {
	name string
	spec map[string]any
}

// childSpecs lists the children one declaration makes from the parent's spec.
func childSpecs(parent *store.Object, ch *lifecycle.Child) []childSpec {
	base := func() map[string]any {
		spec := map[string]any{}
		maps.Copy(spec, ch.Spec)
		for to, from := range ch.Copy {
			if v, ok := ch.Copied(parent.Spec, from); ok {
				spec[to] = v
			}
		}
		return spec
	}
	if ch.Each == "" {
		return []childSpec{{name: parent.Name + "-" + ch.Name, spec: base()}}
	}
	items, _ := parent.Spec[ch.Each].([]any)
	var out []childSpec
	for i, it := range items {
		item, _ := it.(map[string]any)
		group := itemName(item, i)
		n := 1
		if ch.Count != "" {
			f, _ := item[ch.Count].(float64)
			n = int(f)
		}
		for j := range n {
			spec := base()
			for k, v := range item {
				if k != ch.Count && k != "name" {
					spec[k] = v
				}
			}
			if ch.Group != "" {
				spec[ch.Group] = group
			}
			name := fmt.Sprintf("%s-%s", parent.Name, group)
			if ch.Count != "" {
				name = fmt.Sprintf("%s-%d", name, j+1)
			}
			out = append(out, childSpec{name: name, spec: spec})
		}
	}
	return out
}

// itemName is a list item's name, or its position.
func itemName(item map[string]any, i int) string {
	if n, ok := item["name"].(string); ok && n != "" {
		return n
	}
	return fmt.Sprint(i + 1)
}

// makeChild makes one child of c and starts its create.
func (s *step) makeChild(c *change, ch *lifecycle.Child, ck *lifecycle.Kind, name string, spec map[string]any) (*change, error) {
	if err := checkChildName(c.o, ch, name); err != nil {
		return nil, err
	}
	o := &store.Object{
		ID: newID(ck.Name), Tenant: c.o.Tenant, Kind: ck.Name, Name: name, ParentID: c.o.ID,
		State: ck.Initial, Spec: spec, Status: map[string]any{}, CreatedAt: s.now,
	}
	_ = ck.CheckSpec(o.Spec, s.now) // fills defaults; the parent's declaration validated the values
	kid := s.insert(o, ck)
	wait := ch.Wait && c.o.Op != nil
	s.startLinked(kid, &ck.Create, false, string(lifecycle.ActorSystem), func(op *store.Operation) {
		if wait {
			s.wait(c, op)
		}
	})
	if wait && ch.Limit != nil && kid.o.Op != nil {
		// Provisioned under the limit: the create holds in its first phase until its lane
		// has room.
		s.admit(c, ch.Limit, kid, ck.Create.Name, func(lane []string) { kid.o.Op.Lane = lane })
	}
	return kid, nil
}

// reconcile brings c's children in line with its spec after a change from old: fields copied
// into children follow, counted items grow (new children) or shrink (the newest children run
// the scale-in action and are removed when it lands).
func (s *step) reconcile(c *change, old, changed map[string]any) error {
	for i := range c.k.Children {
		ch := &c.k.Children[i]
		ck, err := s.e.reg.Kind(ch.Kind)
		if err != nil {
			return err
		}
		kids, err := s.list(store.Filter{Kind: ch.Kind, ParentID: c.o.ID})
		if err != nil {
			return err
		}
		for to, from := range ch.Copy {
			_, moved := changed[from]
			if _, ok := changed[ch.NotBefore]; ok && ch.NotBefore != "" {
				moved = true
			}
			if !moved {
				continue
			}
			for _, kid := range kids {
				if !childOf(kid, c.k, ch) {
					continue
				}
				v := ch.MovedValue(c.o.Spec, old, from, kid.o.Spec[to])
				if sameValue(v, kid.o.Spec[to]) {
					continue
				}
				kid.o.Spec[to] = v
				kid.event(store.Event{Time: s.now, Actor: string(lifecycle.ActorSystem), From: kid.o.State, To: kid.o.State,
					Message: fmt.Sprintf("%s follows its %s's %s", to, c.k.Name, from)})
				s.rearm(kid, ch)
				kid.o.Due = s.e.staticDue(kid.o, kid.k)
			}
		}
		if ch.Each == "" || ch.Count == "" || ch.Group == "" {
			continue
		}
		if _, ok := changed[ch.Each]; !ok {
			continue
		}
		if err := checkItems(c.o, ch); err != nil {
			return err
		}
		if err := s.scale(c, ch, ck, kids); err != nil {
			return err
		}
	}
	return nil
}

// rearm runs the child declaration's Moved action on a child whose copied field moved, when it
// is allowed from the child's state (a done before_end_lease event is UNDONE again).
func (s *step) rearm(kid *change, ch *lifecycle.Child) {
	if ch.Moved == "" || kid.o.Op != nil {
		return
	}
	a, ok := kid.k.Action(ch.Moved)
	if !ok {
		return
	}
	if allowed, _ := a.AllowedFrom(kid.o.State); !allowed {
		return
	}
	s.start(kid, a, false, string(lifecycle.ActorSystem))
}

// childrenDrift reports whether c's counted children differ from what its spec says (per
// group, children on their way out left aside).
func (s *step) childrenDrift(c *change) (bool, error) {
	for i := range c.k.Children {
		ch := &c.k.Children[i]
		if ch.Each == "" || ch.Count == "" || ch.Group == "" {
			continue
		}
		kids, err := s.list(store.Filter{Kind: ch.Kind, ParentID: c.o.ID})
		if err != nil {
			return false, err
		}
		have, want := map[string]int{}, map[string]int{}
		for _, kid := range kids {
			if kid.o.Op == nil || !kid.o.Op.Remove {
				have[fmt.Sprint(kid.o.Spec[ch.Group])]++
			}
		}
		for _, cs := range childSpecs(c.o, ch) {
			want[fmt.Sprint(cs.spec[ch.Group])]++
		}
		if !maps.Equal(have, want) {
			return true, nil
		}
	}
	return false, nil
}

// childOf reports whether a child was made by the declaration ch of k: a single child by its
// name suffix; one per item by not being a single child of k's of its kind (a lease's
// reservations and its named events may share a kind).
func childOf(kid *change, k *lifecycle.Kind, ch *lifecycle.Child) bool {
	if ch.Each == "" {
		return strings.HasSuffix(kid.o.Name, "-"+ch.Name)
	}
	for _, other := range k.Children {
		if other.Kind == ch.Kind && other.Each == "" && strings.HasSuffix(kid.o.Name, "-"+other.Name) {
			return false
		}
	}
	return true
}

// scale adds and removes counted children to match the items' counts.
func (s *step) scale(c *change, ch *lifecycle.Child, ck *lifecycle.Kind, kids []*change) error {
	byGroup := map[string][]*change{}
	for _, kid := range kids {
		if kid.o.Op != nil && kid.o.Op.Remove {
			continue // already on its way out
		}
		g := fmt.Sprint(kid.o.Spec[ch.Group])
		byGroup[g] = append(byGroup[g], kid)
	}
	want := map[string]int{}
	for _, cs := range childSpecs(c.o, ch) {
		g := fmt.Sprint(cs.spec[ch.Group])
		want[g]++
		if want[g] > len(byGroup[g]) {
			// Names continue past the highest number in use.
			cs.name = fmt.Sprintf("%s-%s-%d", c.o.Name, g, nextIndex(byGroup[g], want[g]))
			kid, err := s.makeChild(c, ch, ck, cs.name, cs.spec)
			if err != nil {
				return err
			}
			byGroup[g] = append(byGroup[g], kid)
		}
	}
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		have := byGroup[g]
		surplus := len(have) - want[g]
		if surplus <= 0 {
			continue
		}
		// Newest first.
		sort.SliceStable(have, func(i, j int) bool {
			if !have[i].o.CreatedAt.Equal(have[j].o.CreatedAt) {
				return have[i].o.CreatedAt.After(have[j].o.CreatedAt)
			}
			return nameIndex(have[i].o.Name) > nameIndex(have[j].o.Name)
		})
		for _, kid := range have[:surplus] {
			if err := s.scaleIn(c, ch, kid); err != nil {
				return err
			}
		}
	}
	return nil
}

// nextIndex is the number for a new child: past every number in use, and at least want.
func nextIndex(have []*change, want int) int {
	n := want
	for _, h := range have {
		if i := nameIndex(h.o.Name); i >= n {
			n = i + 1
		}
	}
	return n
}

// nameIndex is the number ending a counted child's name (web-3 → 3), 0 if none.
func nameIndex(name string) int {
	i, err := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
	if err != nil {
		return 0
	}
	return i
}

// scaleIn ends one surplus child: it runs the scale-in action (forced, so a failed child goes
// too) and is removed when that lands; a child already in a final state is removed at once.
func (s *step) scaleIn(c *change, ch *lifecycle.Child, kid *change) error {
	if kid.o.Op != nil {
		return &Error{Code: wire.CodeBusy, Message: fmt.Sprintf("%s %s is busy (%s); scale when it is static", kid.k.Name, kid.o.ID, kid.o.Op.Action)}
	}
	a, ok := kid.k.Action(ch.ScaleIn)
	if ok {
		ok, _ = a.AllowedFrom(kid.o.State)
	}
	if !ok || kid.k.IsFinal(kid.o.State) {
		kid.remove = true
		kid.event(store.Event{Time: s.now, Actor: string(lifecycle.ActorSystem), From: kid.o.State, To: kid.o.State, Message: "removed by scale-in"})
		return nil
	}
	s.startLinked(kid, a, true, string(lifecycle.ActorSystem), func(op *store.Operation) {
		op.Remove = true
		if ch.Wait && c.o.Op != nil {
			s.wait(c, op)
		}
	})
	return nil
}
