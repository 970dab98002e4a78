package engine

import (
	"errors"
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

// Relations carried out by one mechanism, kind-agnostic: everything is read from the kinds'
// specs (lifecycle.Kind's Children, Propagate, Derive, Guards, Links, Parent.Delete). Every
// function here changes objects of the caller's step, so all of it commits together.

// related returns the objects a selector picks for c.
func (s *step) related(c *change, sel lifecycle.Selector) ([]*change, error) {
	switch {
	case sel.Children != "":
		return s.list(store.Filter{Kind: sel.Children, ParentID: c.o.ID})
	case sel.Descendants != "":
		return s.descendants(c, sel.Descendants)
	case sel.Linked != nil:
		return s.list(store.Filter{Kind: sel.Linked.Kind, Link: [2]string{sel.Linked.Field, c.o.ID}})
	case sel.Parent && c.o.ParentID != "":
		p, err := s.load(c.o.ParentID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*change{p}, nil
	}
	return nil, nil
}

// descendants returns the objects of a kind at any depth below c.
func (s *step) descendants(c *change, kind string) ([]*change, error) {
	var out []*change
	level := []*change{c}
	for depth := 0; len(level) > 0 && depth < 16; depth++ {
		var next []*change
		for _, p := range level {
			kids, err := s.list(store.Filter{ParentID: p.o.ID})
			if err != nil {
				return nil, err
			}
			for _, k := range kids {
				if k.o.Kind == kind {
					out = append(out, k)
				}
				next = append(next, k)
			}
		}
		level = next
	}
	return out, nil
}

// propagateStart runs the propagations of action a starting on c.
func (s *step) propagateStart(c *change, a *lifecycle.Action, force bool) {
	for _, p := range c.k.StartPropagations(a.Name) {
		s.propagate(c, p, p.RunAction(a.Name), force, "its "+a.Name)
	}
}

// propagate applies one propagation from c to its related objects. Objects the action is not
// allowed from (or that are busy) are skipped and reported in c's status; with a limit, those
// over it are queued and start as others land.
func (s *step) propagate(c *change, p *lifecycle.Propagation, action string, force bool, trigger string) {
	why := fmt.Sprintf("%s %s: %s", c.k.Name, c.o.ID, trigger)
	targets, err := s.related(c, p.To)
	if err != nil {
		s.note(c, "error", err.Error())
		return
	}
	var picked []*change
	for _, t := range targets {
		if p.Picks(t.o.State, t.o.Spec) {
			picked = append(picked, t)
		}
	}
	// In name order: with a limit, the first ones start and the last ones wait.
	slices.SortStableFunc(picked, func(a, b *change) int { return strings.Compare(a.o.Name, b.o.Name) })
	switch {
	case p.Remove:
		for _, t := range picked {
			t.remove = true
			t.event(store.Event{Time: s.now, Actor: string(lifecycle.ActorSystem), From: t.o.State, To: t.o.State,
				Message: "removed by " + why})
		}
		return
	case p.Abort:
		for _, t := range picked {
			if t.o.Op != nil {
				s.abort(t, why+": resolved to the last committed state")
			}
		}
		return
	}
	var skipped []any
	var ready []*change
	for _, t := range picked {
		a, reason := s.allowedFor(t, action, force)
		if a == nil {
			skipped = append(skipped, map[string]any{"id": t.o.ID, "state": t.o.State, "reason": reason})
			continue
		}
		ready = append(ready, t)
	}
	if c.o.Op != nil {
		c.o.Status["propagation"] = map[string]any{"action": c.o.Op.Action, "run": action, "skipped": nonNilAny(skipped), "failed": []any{}}
		c.dirty = true
	}
	for _, t := range ready {
		if p.Limit != nil && c.o.Op != nil {
			s.admit(c, p.Limit, t, action, func(lane []string) { s.run(c, p, t, action, lane, force, why) })
			continue
		}
		s.run(c, p, t, action, nil, force, why)
	}
}

// allowedFor returns the action a propagation may start on t, or why not.
func (s *step) allowedFor(t *change, action string, force bool) (*lifecycle.Action, string) {
	a, ok := t.k.Action(action)
	switch {
	case !ok:
		return nil, fmt.Sprintf("%s has no action %s", t.k.Name, action)
	case t.o.Op != nil:
		return nil, fmt.Sprintf("busy: %s is running", t.o.Op.Action)
	}
	if ok, needsForce := a.AllowedFrom(t.o.State); !ok || (needsForce && !force) {
		return nil, fmt.Sprintf("%s is not allowed from %s", action, t.o.State)
	}
	return a, ""
}

// run starts a propagated action on t, linking its operation to c's (wait or follow); lane
// is the limit lane it runs in, if any.
func (s *step) run(c *change, p *lifecycle.Propagation, t *change, action string, lane []string, force bool, why string) {
	a, _ := t.k.Action(action)
	first := len(t.evs)
	defer func() {
		if first < len(t.evs) && t.evs[first].Message == "" {
			t.evs[first].Message = "propagated from " + why
		}
	}()
	s.startLinked(t, a, force, string(lifecycle.ActorSystem), func(op *store.Operation) {
		switch {
		case p.Follow && c.o.Op != nil:
			op.Follows = c.o.ID
			c.o.Op.Followers = append(c.o.Op.Followers, t.o.ID)
		case p.Wait && c.o.Op != nil:
			s.wait(c, op)
		}
		op.Lane = lane
	})
	c.dirty = true
}

// wait makes c's operation wait for op (a propagated or child operation).
func (s *step) wait(c *change, op *store.Operation) {
	op.WaitedBy, op.WaitedOp = c.o.ID, c.o.Op.ID
	c.o.Op.Waits++
	c.dirty = true
}

// note records a problem of a propagation in the object's status.
func (s *step) note(c *change, key, msg string) {
	c.o.Status["propagation_"+key] = msg
	c.dirty = true
}

// abort ends t's running operation where it started, as if it had never run (a restarted
// MobiledgeX CRM reports only what it really holds).
func (s *step) abort(t *change, msg string) { s.abortBy(t, string(lifecycle.ActorCRM), msg) }

// abortBy is abort by an actor.
func (s *step) abortBy(t *change, actor, msg string) {
	op := t.o.Op
	if op.PrevSpec != nil {
		t.o.Spec = op.PrevSpec
	}
	s.e.onDone(t.k.Name, op.Action, "aborted")
	s.land(t, op.From, actor, msg, true)
}

// landed fires what c's landing implies: propagations of the landing, its followers landing
// with it, an originator waiting for it, the next queued operation of that originator.
func (s *step) landed(c *change, op *store.Operation, failed bool) {
	for _, p := range c.k.LandPropagations(c.o.State, op.From, op.Action, failed) {
		s.propagate(c, p, p.Run, op.Force, "landed in "+c.o.State)
	}
	for _, id := range op.Followers {
		f, err := s.load(id)
		if err != nil || f.o.Op == nil || f.o.Op.Follows != c.o.ID {
			continue
		}
		s.follow(f, c, failed)
	}
	if op.Remove {
		c.remove = true
	}
	s.flush(op)
	s.release(c, op, failed)
	if op.Deletion != "" && !failed && c.o.Op == nil && !c.k.IsGone(c.o.State) {
		// A deletion in steps goes on: a terminated MCI is then deleted.
		if next, err := c.k.DeletionAction(op.Deletion, c.o.State); err == nil {
			mode := op.Deletion
			s.startLinked(c, next, false, ActorUser, func(o *store.Operation) { o.Deletion = mode })
		}
	}
}

// follow ends a follower's operation with its leader's: it lands where its action goes, or
// fails by its own failure rule when the leader failed.
func (s *step) follow(f, leader *change, failed bool) {
	f.o.Op.Follows = ""
	if failed {
		s.fail(f, false, string(lifecycle.ActorSystem), fmt.Sprintf("%s %s failed", leader.k.Name, leader.o.ID), "failed")
		return
	}
	a, _ := f.k.Action(f.o.Op.Action)
	for f.o.Op != nil && !f.o.Op.Failing && f.o.Op.Phase+1 < len(a.Via) {
		s.enterPhase(f, a.Via, f.o.Op.Phase+1, string(lifecycle.ActorSystem))
	}
	if f.o.Op != nil {
		s.e.onDone(f.k.Name, a.Name, "succeeded")
		s.land(f, s.target(f, a, f.o.Op.From), string(lifecycle.ActorSystem), "", false)
	}
}

// release tells the originator waiting for c's operation that it ended: failures are
// recorded, the operation's limit lane makes room for the next queued one, and a parked
// originator completes when nothing is left.
func (s *step) release(c *change, op *store.Operation, failed bool) {
	if op.WaitedBy == "" {
		return
	}
	w, err := s.load(op.WaitedBy)
	if err != nil || w.o.Op == nil {
		return
	}
	s.upgradeOp(w, c, op)
	if op.WaitedOp != w.o.Op.ID || w.o.Op.Waits == 0 {
		return // waited for by an operation that has ended since
	}
	w.o.Op.Waits--
	w.dirty = true
	if failed {
		if prop, ok := w.o.Status["propagation"].(map[string]any); ok {
			failedList, _ := prop["failed"].([]any)
			prop["failed"] = append(failedList, map[string]any{"id": c.o.ID, "state": c.o.State, "error": op.Error})
		}
	}
	if len(op.Lane) == 2 {
		if l := w.o.Op.Lanes[op.Lane[0]][op.Lane[1]]; l != nil && l.Running > 0 {
			l.Running--
		}
		s.fill(w, op.Lane[0])
	}
	if w.o.Op.Parked && w.o.Op.Pending() == 0 {
		s.completePhase(w)
	}
}

// removed applies a removal's consequences: children follow their delete policy (cascade
// removes them, detach keeps them parentless; refuse was checked when the deletion was asked,
// and children still there now go with the parent, so no child outlives it), and an
// originator waiting for the object stops waiting.
func (s *step) removed(c *change) error {
	kids, err := s.list(store.Filter{ParentID: c.o.ID})
	if err != nil {
		return err
	}
	for _, kid := range kids {
		if kid.k.DeletePolicy() == lifecycle.DeleteDetach {
			kid.o.ParentID = ""
			kid.event(store.Event{Time: s.now, Actor: string(lifecycle.ActorSystem), From: kid.o.State, To: kid.o.State,
				Message: fmt.Sprintf("detached: its %s %s is gone", c.k.Name, c.o.ID)})
			continue
		}
		kid.remove = true
		kid.event(store.Event{Time: s.now, Actor: string(lifecycle.ActorSystem), From: kid.o.State, To: kid.o.State,
			Message: fmt.Sprintf("removed with its %s %s", c.k.Name, c.o.ID)})
	}
	s.dequeue(c)
	if c.o.Op != nil {
		s.flush(c.o.Op)
		s.release(c, c.o.Op, true)
	}
	return s.unlink(c)
}

// unlink keeps links true when c goes: an object whose link still names c (one the landing's
// propagations did not move, a busy one among them) has its running link-setting operation
// aborted (an attach to c) and the link cleared, in the same step. No link names an object
// that is gone.
func (s *step) unlink(c *change) error {
	for _, lr := range s.e.relationsOf(c.k.Name).linkedBy {
		field := lr.link.Field
		linkers, err := s.list(store.Filter{Kind: lr.kind.Name, Link: [2]string{field, c.o.ID}})
		if err != nil {
			return err
		}
		for _, t := range linkers {
			if op := t.o.Op; op != nil {
				if sets, _ := t.k.LinksSetBy(op.Action); slices.ContainsFunc(sets, func(x lifecycle.Link) bool { return x.Field == field }) {
					s.abortBy(t, string(lifecycle.ActorSystem), fmt.Sprintf("aborted: its %s %s is gone", c.k.Name, c.o.ID))
				}
			}
			if t.o.Spec[field] == c.o.ID {
				delete(t.o.Spec, field)
			}
			if t.o.Op != nil && t.o.Op.PrevSpec != nil && t.o.Op.PrevSpec[field] == c.o.ID {
				delete(t.o.Op.PrevSpec, field)
			}
			t.event(store.Event{Time: s.now, Actor: string(lifecycle.ActorSystem), From: t.o.State, To: t.o.State,
				Message: fmt.Sprintf("%s cleared: its %s %s is gone", field, c.k.Name, c.o.ID)})
		}
	}
	return nil
}

// checkLinkValues checks the links a create or a patch sets in spec: each must name an
// existing object of the link's kind (the states a link needs are the setting action's, see
// checkLinks). The targets are part of the step's compare-and-set.
func (e *Engine) checkLinkValues(s *step, k *lifecycle.Kind, spec, only map[string]any) error {
	for _, l := range k.Links {
		if only != nil {
			if _, ok := only[l.Field]; !ok {
				continue
			}
		}
		id, _ := spec[l.Field].(string)
		if id == "" {
			continue
		}
		t, err := s.load(id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (t.o.Kind != l.Kind || t.k.IsGone(t.o.State))) {
			return &Error{Code: wire.CodeInvalid, Message: fmt.Sprintf("spec.%s: %s %q not found", l.Field, l.Kind, id),
				Details: map[string]string{"field": "spec." + l.Field}}
		}
		if err != nil {
			return err
		}
		s.depend(t)
	}
	return nil
}

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
			if v, ok := parent.Spec[from]; ok {
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

// reconcile brings c's children in line with its spec after a change: fields copied into
// children follow, counted items grow (new children) or shrink (the newest children run the
// scale-in action and are removed when it lands).
func (s *step) reconcile(c *change, changed map[string]any) error {
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
			if _, ok := changed[from]; !ok {
				continue
			}
			for _, kid := range kids {
				if !childOf(kid, ch) {
					continue
				}
				kid.o.Spec[to] = c.o.Spec[from]
				kid.o.Due = s.e.staticDue(kid.o, kid.k)
				kid.event(store.Event{Time: s.now, Actor: string(lifecycle.ActorSystem), From: kid.o.State, To: kid.o.State,
					Message: fmt.Sprintf("%s follows its %s's %s", to, c.k.Name, from)})
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

// childOf reports whether a child was made by a single-child declaration (its name suffix).
func childOf(kid *change, ch *lifecycle.Child) bool {
	return ch.Each == "" && strings.HasSuffix(kid.o.Name, "-"+ch.Name)
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

// checkGuards enforces every guard on action a for an object (its parent ID and spec): the
// parent rule and the kind's guards on ancestors and linked objects. A refusal names the
// blocking object, its state and the states it must be in.
func (e *Engine) checkGuards(s *step, k *lifecycle.Kind, a *lifecycle.Action, parentID string, spec map[string]any) error {
	for _, g := range k.GuardsFor(a) {
		var blocker *change
		switch {
		case g.Ancestor != "":
			b, err := s.ancestor(parentID, g.Ancestor)
			if err != nil {
				return err
			}
			blocker = b
		case g.Link != "":
			id, _ := spec[g.Link].(string)
			if id == "" {
				continue
			}
			b, err := s.load(id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			s.depend(b)
			blocker = b
		}
		if blocker == nil || slices.Contains(g.States, blocker.o.State) {
			continue
		}
		rel := "ancestor"
		if blocker.o.ID == parentID {
			rel = "parent"
		}
		if g.Link != "" {
			rel = "linked"
		}
		return &Error{
			Code: wire.CodeInvalidTransition,
			Message: fmt.Sprintf("%s action %q needs its %s %s %s in state %s, but it is %s; wait until it is %s, or bring it there first",
				k.Name, a.Name, rel, blocker.k.Name, blocker.o.ID, orStates(g.States), blocker.o.State, orStates(g.States)),
			Details: wire.TransitionDetails{Kind: blocker.k.Name, State: blocker.o.State, Action: a.Name, Allowed: []string{},
				BlockedBy: blocker.o.ID, Need: g.States},
		}
	}
	return nil
}

// ancestor walks up from parentID to the first object of kind (nil when the chain ends).
func (s *step) ancestor(parentID, kind string) (*change, error) {
	id := parentID
	for range 16 {
		if id == "" {
			return nil, nil
		}
		p, err := s.load(id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		s.depend(p)
		if p.o.Kind == kind {
			return p, nil
		}
		id = p.o.ParentID
	}
	return nil, nil
}

// checkLinks enforces the links action a sets on an object whose spec already holds the
// request's params: the object a link names must exist (for the tenant) and be in an allowed
// state.
func (e *Engine) checkLinks(s *step, k *lifecycle.Kind, a *lifecycle.Action, spec map[string]any) error {
	sets, _ := k.LinksSetBy(a.Name)
	for _, l := range sets {
		id, _ := spec[l.Field].(string)
		if id == "" {
			return errorf(wire.CodeInvalid, "%s %s needs params.%s: the ID of the %s", k.Name, a.Name, l.Field, l.Kind)
		}
		t, err := s.load(id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && t.o.Kind != l.Kind) {
			return errorf(wire.CodeInvalid, "%s %s: %s %q not found", k.Name, a.Name, l.Kind, id)
		}
		if err != nil {
			return err
		}
		s.depend(t)
		if err := linkState(k, a, l, t); err != nil {
			return err
		}
	}
	return nil
}

// checkSetLinkStates checks, for a create or a patch whose spec sets links (only: the fields
// the patch changes; nil for a create), that the objects the links action a sets name are in
// one of the links' `in:` states, as an action's params are (checkLinks). A link left unset
// is no link; checkLinkValues has checked that the objects exist.
func (e *Engine) checkSetLinkStates(s *step, k *lifecycle.Kind, a *lifecycle.Action, spec, only map[string]any) error {
	sets, _ := k.LinksSetBy(a.Name)
	for _, l := range sets {
		if _, changed := only[l.Field]; only != nil && !changed {
			continue
		}
		id, _ := spec[l.Field].(string)
		if id == "" || len(l.States) == 0 {
			continue
		}
		t, err := s.load(id)
		if err != nil {
			return err
		}
		if err := linkState(k, a, l, t); err != nil {
			return err
		}
	}
	return nil
}

// linkState refuses a link set by action a to t while t is in none of the link's states,
// naming t, its state and the states it must be in.
func linkState(k *lifecycle.Kind, a *lifecycle.Action, l lifecycle.Link, t *change) error {
	if len(l.States) == 0 || slices.Contains(l.States, t.o.State) {
		return nil
	}
	return &Error{Code: wire.CodeInvalidTransition,
		Message: fmt.Sprintf("%s %s: %s %s is %s; it must be %s", k.Name, a.Name, l.Kind, t.o.ID, t.o.State, strings.Join(l.States, ", ")),
		Details: wire.TransitionDetails{Kind: l.Kind, State: t.o.State, Action: a.Name, Allowed: []string{},
			BlockedBy: t.o.ID, Need: l.States}}
}

// checkRefuse refuses an action that removes c while it has children whose delete policy is
// refuse, naming them.
func (e *Engine) checkRefuse(s *step, c *change, a *lifecycle.Action) error {
	if a.Returns || !c.k.IsGone(a.To) {
		return nil
	}
	kids, err := s.list(store.Filter{ParentID: c.o.ID})
	if err != nil {
		return err
	}
	// The count decides: a child made (or gone) after it was read makes the step decide again.
	for _, rk := range e.relationsOf(c.k.Name).refusing {
		var counted []*change
		for _, kid := range kids {
			if kid.o.Kind == rk.Name {
				counted = append(counted, kid)
			}
		}
		s.dependSet(store.Filter{Kind: rk.Name, ParentID: c.o.ID}, counted)
	}
	var blocking []string
	var kinds []string
	var undeletable []*lifecycle.Kind
	for _, kid := range kids {
		if kid.k.DeletePolicy() == lifecycle.DeleteRefuse {
			blocking = append(blocking, fmt.Sprintf("%s %s (%s)", kid.k.Name, kid.o.ID, kid.o.State))
			if !slices.Contains(kinds, kid.k.Name) {
				kinds = append(kinds, kid.k.Name)
				if len(kid.k.Deletion) == 0 {
					undeletable = append(undeletable, kid.k)
				}
			}
		}
	}
	if len(blocking) == 0 {
		return nil
	}
	shown := blocking
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(blocking)-10))
	}
	how := "delete them first"
	if len(undeletable) > 0 {
		// A DELETE cannot remove them: say what does (the kind file check makes sure something does).
		var goes []string
		for _, k := range undeletable {
			goes = append(goes, fmt.Sprintf("%s objects have no deletion and go only when %s lands them in %s", k.Name,
				strings.Join(k.RemovingActions(), " or "), strings.Join(k.States.Gone, " or ")))
		}
		how = "they must be gone first (" + strings.Join(goes, "; ") + ")"
	}
	return &Error{Code: wire.CodeInvalidTransition,
		Message: fmt.Sprintf("%s %s still has %d %s: %s: %s", c.k.Name, c.o.ID, len(blocking),
			strings.Join(kinds, " and ")+" objects", how, strings.Join(shown, ", ")),
		Details: wire.TransitionDetails{Kind: c.k.Name, State: c.o.State, Action: a.Name, Allowed: []string{}}}
}

func nonNilAny(xs []any) []any {
	if xs == nil {
		return []any{}
	}
	return xs
}

// kindRelations are the relations that point at a kind from other kinds, found once.
type kindRelations struct {
	// linkedBy are the links of other kinds that name objects of the kind.
	linkedBy []linkRef
	// refusing are the child kinds whose delete policy refuses the kind's deletion.
	refusing []*lifecycle.Kind
	// derivedBy is the parent kind whose derived status the kind's objects feed.
	derivedBy *lifecycle.Kind
	// countDerive is the kind's derivation as a function of its Members, when it needs no
	// more than counts.
	countDerive lifecycle.CountDeriveFunc
}

type linkRef struct {
	kind *lifecycle.Kind
	link lifecycle.Link
}

// relationsOf returns the relations pointing at a kind (computed for every kind the first
// time: the registry does not change once the engine runs).
func (e *Engine) relationsOf(kind string) kindRelations {
	e.relOnce.Do(func() {
		e.rel = map[string]kindRelations{}
		for _, k := range e.reg.Kinds() {
			for _, l := range k.Links {
				r := e.rel[l.Kind]
				r.linkedBy = append(r.linkedBy, linkRef{kind: k, link: l})
				e.rel[l.Kind] = r
			}
			if k.Parent != nil && k.DeletePolicy() == lifecycle.DeleteRefuse {
				r := e.rel[k.Parent.Kind]
				r.refusing = append(r.refusing, k)
				e.rel[k.Parent.Kind] = r
			}
			if d := k.Derive; d != nil {
				r := e.rel[k.Name]
				r.countDerive, _ = d.CountFunc()
				e.rel[k.Name] = r
				if dk, err := e.reg.Kind(d.From); err == nil && dk.Parent != nil && dk.Parent.Kind == k.Name {
					r := e.rel[d.From]
					r.derivedBy = k
					e.rel[d.From] = r
				}
			}
		}
	})
	return e.rel[kind]
}
