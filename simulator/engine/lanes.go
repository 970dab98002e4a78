package engine

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// Limit lanes: an originator's operation runs its propagated operations (an MCI's suspend on
// its VMs) or provisions its children (an MCI's create) under a two-level limit, per outer
// value (a CSP) so many inner values (regions) at a time and per inner value so many objects
// at a time. The operation keeps one store.Lane per outer and inner value: how many run, and
// a queue chained through the queued objects themselves (their store.QueueEntry), so the
// originator stays the same size whatever the number of objects and a landing costs the
// same for 10 objects as for 10,000: it frees its lane's slot and starts the lane's next
// object, or the head of the next lane when its own is empty.

// limited returns the limit an operation of action a on an object of kind k runs under: the
// limit of a's start propagation, else the limit of a child declaration (its creates, made by
// the create or a scale). p is the limited propagation (nil for children). An operation has
// one limit.
func (e *Engine) limited(k *lifecycle.Kind, action string) (p *lifecycle.Propagation, l *lifecycle.Limit) {
	for _, sp := range k.StartPropagations(action) {
		if sp.Limit != nil {
			return sp, sp.Limit
		}
	}
	for i := range k.Children {
		if k.Children[i].Limit != nil {
			return nil, k.Children[i].Limit
		}
	}
	return nil, nil
}

// laneOf returns an operation's lane for an outer and inner value, made when missing.
func laneOf(op *store.Operation, outer, inner string) *store.Lane {
	if op.Lanes == nil {
		op.Lanes = map[string]map[string]*store.Lane{}
	}
	if op.Lanes[outer] == nil {
		op.Lanes[outer] = map[string]*store.Lane{}
	}
	l := op.Lanes[outer][inner]
	if l == nil {
		l = &store.Lane{}
		op.Lanes[outer][inner] = l
	}
	return l
}

// laneKey is t's outer and inner value under l.
func laneKey(l *lifecycle.Limit, t *store.Object) (outer, inner string) {
	return fmt.Sprint(t.Spec[l.Outer]), fmt.Sprint(t.Spec[l.Inner])
}

// admit lets t into c's operation under limit l: start runs it in its lane when the lane has
// room and no queue, else t is queued at the lane's tail (a create already started holds).
func (s *step) admit(c *change, l *lifecycle.Limit, t *change, action string, start func(lane []string)) {
	outer, inner := laneKey(l, t.o)
	lane := laneOf(c.o.Op, outer, inner)
	c.dirty = true
	if lane.Queued == 0 && room(c.o.Op, l, outer, inner) {
		lane.Running++
		start([]string{outer, inner})
		return
	}
	s.enqueue(c, lane, t, action, outer, inner)
}

// room reports whether one more object may run in the lane: under the lane's own bound, and
// the lane already running or fewer lanes of its outer value running than the outer bound.
func room(op *store.Operation, l *lifecycle.Limit, outer, inner string) bool {
	g := l.For(outer)
	lanes := op.Lanes[outer]
	if ln := lanes[inner]; ln != nil && ln.Running > 0 {
		return ln.Running < g.PerInner
	}
	active := 0
	for _, ln := range lanes {
		if ln.Running > 0 {
			active++
		}
	}
	return active < g.Inner && g.PerInner > 0
}

// enqueue puts t at the tail of c's lane.
func (s *step) enqueue(c *change, lane *store.Lane, t *change, action, outer, inner string) {
	t.o.Queue = &store.QueueEntry{By: c.o.ID, Op: c.o.Op.ID, Action: action, Lane: []string{outer, inner}}
	t.o.Status["queued"] = action
	if t.o.Op != nil {
		// A create holds in its first phase: nothing is scheduled until its turn.
		t.o.Op.Held, t.o.Op.Hung = true, false
		t.o.Due = time.Time{}
	}
	var tail *change
	if lane.Tail != "" {
		if x, err := s.load(lane.Tail); err == nil && x.o.Queue != nil {
			tail = x
		}
	}
	if tail != nil {
		tail.o.Queue.Next, tail.o.Queue.NextName = t.o.ID, t.o.Name
		tail.dirty = true
	} else {
		lane.Head, lane.HeadName = t.o.ID, t.o.Name
	}
	lane.Tail = t.o.ID
	lane.Queued++
	t.dirty, c.dirty = true, true
}

// fill starts queued objects of w's lanes of one outer value while they have room: running
// lanes first, then new lanes in the name order of their heads.
func (s *step) fill(w *change, outer string) {
	p, l := s.e.limited(w.k, w.o.Op.Action)
	if l == nil {
		return
	}
	lanes := w.o.Op.Lanes[outer]
	for {
		var best string
		for _, inner := range slices.Sorted(maps.Keys(lanes)) {
			ln := lanes[inner]
			if ln.Queued == 0 || !room(w.o.Op, l, outer, inner) {
				continue
			}
			if best == "" || better(ln, lanes[best]) {
				best = inner
			}
		}
		if best == "" {
			return
		}
		s.pop(w, p, lanes[best], outer, best)
	}
}

// better orders lanes for fill: a running lane before a new one, then by the head's name.
func better(a, b *store.Lane) bool {
	if (a.Running > 0) != (b.Running > 0) {
		return a.Running > 0
	}
	return cmp.Less(a.HeadName, b.HeadName)
}

// pop takes the head of w's lane and starts it: a held create starts its first phase, a
// queued object runs the propagated action (unless it is no longer allowed: it was acted on
// meanwhile, and is skipped).
func (s *step) pop(w *change, p *lifecycle.Propagation, lane *store.Lane, outer, inner string) {
	w.dirty = true
	lane.Queued--
	t, err := s.load(lane.Head)
	if err != nil || t.o.Queue == nil {
		// The chain is lost past a missing head (a removal splices its object out, so this is
		// a store edited by hand): the lane's queue ends here.
		lane.Head, lane.Tail, lane.HeadName, lane.Queued = "", "", "", 0
		return
	}
	q := t.o.Queue
	lane.Head, lane.HeadName = q.Next, q.NextName
	if q.Next == "" {
		lane.Tail = ""
	}
	t.o.Queue = nil
	delete(t.o.Status, "queued")
	t.dirty = true
	laneIDs := []string{outer, inner}
	if op := t.o.Op; op != nil && op.Held {
		lane.Running++
		op.Lane = laneIDs
		s.unhold(t)
		return
	}
	if p == nil {
		return
	}
	if a, _ := s.allowedFor(t, q.Action, w.o.Op.Force); a == nil {
		return
	}
	lane.Running++
	s.run(w, p, t, q.Action, laneIDs, w.o.Op.Force, fmt.Sprintf("%s %s: its %s (queued)", w.k.Name, w.o.ID, w.o.Op.Action))
}

// unhold starts a held create's phase now.
func (s *step) unhold(t *change) {
	op := t.o.Op
	op.Held = false
	op.PhaseStarted = s.now
	a, _ := t.k.Action(op.Action)
	if a == nil || op.Phase >= len(a.Via) {
		return
	}
	s.schedulePhase(t, a.Via[op.Phase])
	t.dirty = true
}

// dequeue splices a queued object that is going away out of its lane.
func (s *step) dequeue(c *change) {
	q := c.o.Queue
	if q == nil {
		return
	}
	c.o.Queue = nil
	w, err := s.load(q.By)
	if err != nil || w.o.Op == nil || w.o.Op.ID != q.Op || len(q.Lane) != 2 {
		return
	}
	lane := w.o.Op.Lanes[q.Lane[0]][q.Lane[1]]
	if lane == nil {
		return
	}
	var prev *change
	for id := lane.Head; id != c.o.ID; {
		x, err := s.load(id)
		if id == "" || err != nil || x.o.Queue == nil {
			return // not in the chain
		}
		prev, id = x, x.o.Queue.Next
	}
	if prev == nil {
		lane.Head, lane.HeadName = q.Next, q.NextName
	} else {
		prev.o.Queue.Next, prev.o.Queue.NextName = q.Next, q.NextName
		prev.dirty = true
	}
	if lane.Tail == c.o.ID {
		lane.Tail = ""
		if prev != nil {
			lane.Tail = prev.o.ID
		}
	}
	lane.Queued--
	w.dirty = true
}

// flush empties the lanes of an operation that ended (landed, failed, preempted) with objects
// still queued: held creates start at once, no longer limited nor waited for; queued objects
// stay where they are.
func (s *step) flush(op *store.Operation) {
	for _, outer := range slices.Sorted(maps.Keys(op.Lanes)) {
		for _, inner := range slices.Sorted(maps.Keys(op.Lanes[outer])) {
			lane := op.Lanes[outer][inner]
			for id := lane.Head; id != ""; {
				t, err := s.load(id)
				if err != nil || t.o.Queue == nil {
					break
				}
				id = t.o.Queue.Next
				t.o.Queue = nil
				delete(t.o.Status, "queued")
				t.dirty = true
				if t.o.Op != nil && t.o.Op.Held {
					t.o.Op.WaitedBy, t.o.Op.WaitedOp = "", ""
					s.unhold(t)
				}
			}
			lane.Head, lane.Tail, lane.HeadName, lane.Queued = "", "", "", 0
		}
	}
}

// upgradeOp turns the waiting and queued lists of an operation written by an earlier version
// into its count and lanes (once, the first time a release meets it). The release is of c's
// operation ended, which a landing has already taken off c: c is counted in from it, like
// the objects still running, so that the release counts it out, frees its lane and completes
// an originator it was the last for.
func (s *step) upgradeOp(w, c *change, ended *store.Operation) {
	op := w.o.Op
	if len(op.Waiting) == 0 && len(op.Queued) == 0 {
		return
	}
	p, l := s.e.limited(w.k, op.Action)
	waiting, queued := op.Waiting, op.Queued
	op.Waiting, op.Queued = nil, nil
	w.dirty = true
	for _, id := range waiting {
		t, top := c, ended
		if id != c.o.ID {
			x, err := s.load(id)
			if err != nil || x.o.Op == nil {
				continue
			}
			t, top = x, x.o.Op
		}
		if top.WaitedBy != w.o.ID {
			continue
		}
		top.WaitedOp = op.ID
		op.Waits++
		t.dirty = true
		if l != nil {
			outer, inner := laneKey(l, t.o)
			laneOf(op, outer, inner).Running++
			top.Lane = []string{outer, inner}
		}
	}
	for _, id := range queued {
		t, err := s.load(id)
		if err != nil {
			continue
		}
		if p == nil {
			delete(t.o.Status, "queued")
			t.dirty = true
			continue
		}
		outer, inner := laneKey(l, t.o)
		s.enqueue(w, laneOf(op, outer, inner), t, p.RunAction(op.Action), outer, inner)
	}
}
