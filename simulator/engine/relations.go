package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
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
	s.ends(t, "aborted")
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
				r.countDerive, _ = e.reg.CountDerivation(d)
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
