package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Operations move through their phases here: an action starts (its first phase, or its
// landing when it has none), phases complete when due, failures follow the kind's rule, and
// landings fire the relations (relations.go). Every function changes objects of a step.

// start begins action a on c: the first phase, or the target at once when the action has no
// phases. Propagations of the start run with it.
func (s *step) start(c *change, a *lifecycle.Action, force bool, actor string) {
	s.startLinked(c, a, force, actor, func(*store.Operation) {})
}

// startLinked starts a on c; link sets up the new operation's relations (whom it waits for or
// follows) before any phase is scheduled or anything lands.
func (s *step) startLinked(c *change, a *lifecycle.Action, force bool, actor string, link func(*store.Operation)) {
	o := c.o
	from := o.State
	delete(o.Status, "last_error")
	_, clears := c.k.LinksSetBy(a.Name)
	for _, l := range clears {
		delete(o.Spec, l.Field)
	}
	o.Op = &store.Operation{ID: newID("op"), Action: a.Name, From: from, Force: force, StartedAt: s.now}
	link(o.Op)
	c.dirty = true
	if len(a.Via) > 0 {
		s.enterPhase(c, a.Via, 0, actor)
	}
	s.propagateStart(c, a, force)
	if len(a.Via) == 0 {
		s.land(c, s.target(c, a, from), actor, "", false)
	}
}

// target is where action a started from `from` lands on success.
func (s *step) target(c *change, a *lifecycle.Action, from string) string {
	if a.Derived && c.k.Derive != nil {
		if d, err := s.derived(c); err == nil && c.k.IsStatic(d.State) {
			return d.State
		}
	}
	return a.Target(from)
}

// enterPhase puts c into phase i of via and schedules its completion, applying slow and hang
// faults. A follower's phases have no schedule of their own: they end with its leader's.
func (s *step) enterPhase(c *change, via []lifecycle.Phase, i int, actor string) {
	o := c.o
	p := via[i]
	from := o.State
	o.State = p.State
	o.Op.Phase = i
	o.Op.PhaseStarted = s.now
	o.Op.Hung = false
	o.Op.Parked = false
	o.StateSince = s.now
	c.event(store.Event{Time: s.now, Actor: actor, From: from, To: p.State, Action: o.Op.Action, OperationID: o.Op.ID, Error: o.Op.Error})
	if o.Op.Follows != "" {
		o.Due = time.Time{}
		return
	}
	s.schedulePhase(c, p)
}

// schedulePhase schedules the completion of c's phase p, started now, applying slow and hang
// faults.
func (s *step) schedulePhase(c *change, p lifecycle.Phase) {
	o, k := c.o, c.k
	d := s.e.scaled(k.PhaseDuration(p))
	if r := s.e.faults.Match(s.ctx, wire.FaultSlow, o.Tenant, k.Name, o.Op.Action, p.State); r != nil {
		d = mulDuration(d, r.Factor)
	}
	o.Due = addTime(s.now, d)
	_, heal := s.e.Config()
	// A phase that hangs, or would take longer than the self-healing limit, is stuck: it is
	// repaired by the kind's failure rule when the limit passes.
	if r := s.e.faults.Match(s.ctx, wire.FaultHang, o.Tenant, k.Name, o.Op.Action, p.State); r != nil || d >= heal {
		o.Op.Hung = true
		o.Due = s.now.Add(heal)
	}
}

// land finishes c's running operation in a static state and fires what the landing implies.
func (s *step) land(c *change, state, actor, msg string, failed bool) {
	o := c.o
	ev := store.Event{Time: s.now, Actor: actor, From: o.State, To: state, Message: msg}
	op := o.Op
	if op != nil {
		ev.Action, ev.OperationID, ev.Error = op.Action, op.ID, op.Error
		s.recordLanding(c, op, state, actor, failed)
	}
	if op != nil && op.Action == c.k.Update {
		s.noteUnapplied(c, op, failed)
	}
	o.State = state
	o.Op = nil
	o.StateSince = s.now
	o.Due = s.e.staticDue(o, c.k)
	c.event(ev)
	if op != nil {
		s.landed(c, op, failed)
	}
}

// noteUnapplied keeps the object's record of what its kind's update did not apply
// (wire.StatusUnapplied): an update that lands applied everything; one that failed without
// rolling the spec back (into an error state) leaves the values it asked for in the spec, not
// applied, and the record keeps each such field's last applied value, so the same values
// asked again run the update again (Patch). A field whose spec is back at its last applied
// value (a rollback, a later change back) leaves the record.
func (s *step) noteUnapplied(c *change, op *store.Operation, failed bool) {
	o := c.o
	if !failed {
		if _, ok := o.Status[wire.StatusUnapplied]; ok {
			delete(o.Status, wire.StatusUnapplied)
			c.dirty = true
		}
		return
	}
	applied := map[string]any{}
	if rec, ok := o.Status[wire.StatusUnapplied].(map[string]any); ok {
		if prev, ok := rec["applied"].(map[string]any); ok {
			maps.Copy(applied, prev)
		}
	}
	if op.PrevSpec != nil {
		for f := range unionKeys(o.Spec, op.PrevSpec) {
			if _, kept := applied[f]; !kept && !sameValue(o.Spec[f], op.PrevSpec[f]) {
				applied[f] = op.PrevSpec[f]
			}
		}
	}
	for f, v := range applied {
		if sameValue(o.Spec[f], v) {
			delete(applied, f)
		}
	}
	if o.Status == nil {
		o.Status = map[string]any{}
	}
	if len(applied) == 0 {
		delete(o.Status, wire.StatusUnapplied)
	} else {
		o.Status[wire.StatusUnapplied] = map[string]any{"action": op.Action, "operation_id": op.ID, "applied": applied}
	}
	c.dirty = true
}

// unapplied returns the spec fields a failed update of o did not apply (wire.StatusUnapplied).
func unapplied(o *store.Object) map[string]any {
	rec, _ := o.Status[wire.StatusUnapplied].(map[string]any)
	applied, _ := rec["applied"].(map[string]any)
	return applied
}

// unionKeys returns the keys of a and b.
func unionKeys(a, b map[string]any) map[string]struct{} {
	out := make(map[string]struct{}, len(a)+len(b))
	for k := range a {
		out[k] = struct{}{}
	}
	for k := range b {
		out[k] = struct{}{}
	}
	return out
}

// sameValue reports whether two spec values are equal as JSON (an absent field is nil).
func sameValue(a, b any) bool { return reflect.DeepEqual(jsonValue(a), jsonValue(b)) }

// completePhase ends c's current phase: a fail fault applies the failure rule; otherwise the
// next phase starts (a drop fault skips a skippable one) or the operation lands. An operation
// still waiting for the operations it propagated parks in its last phase until they land.
func (s *step) completePhase(c *change) {
	o, k := c.o, c.k
	a, _ := k.Action(o.Op.Action)
	via := a.Via
	if o.Op.Failing {
		via = k.FailureRule(a).Via
	}
	p := via[o.Op.Phase]
	actor := phaseActor(p)
	if !o.Op.Failing && o.Op.Follows == "" {
		if r := s.e.faults.Match(s.ctx, wire.FaultFail, o.Tenant, k.Name, a.Name, p.State); r != nil {
			msg := r.Message
			if msg == "" {
				msg = fmt.Sprintf("injected failure in %s (fault %s)", p.State, r.ID)
			}
			s.fail(c, r.Fatal, actor, msg, "failed")
			return
		}
	}
	next := o.Op.Phase + 1
	// The message for a skippable phase may be lost: the next one arrives straight away, from
	// whoever completes the skipped phase. One message at a time: the seeds skip a single step
	// (CreateRequested → Ready).
	if next < len(via) && via[next].Skippable && s.e.faults.Match(s.ctx, wire.FaultDrop, o.Tenant, k.Name, a.Name, via[next].State) != nil {
		actor = phaseActor(via[next])
		next++
	}
	if next < len(via) {
		s.enterPhase(c, via, next, actor)
		return
	}
	if o.Op.Pending() > 0 && !o.Op.Failing {
		o.Op.Parked = true
		o.Due = time.Time{}
		c.dirty = true
		return
	}
	if o.Op.Failing {
		f := k.FailureRule(a)
		s.land(c, s.failureTarget(c, f), actor, "", true)
		return
	}
	s.land(c, s.target(c, a, o.Op.From), actor, "", false)
}

func phaseActor(p lifecycle.Phase) string {
	if p.Actor == "" {
		return string(lifecycle.ActorSystem)
	}
	return string(p.Actor)
}

// failureTarget is where a failure path ends.
func (s *step) failureTarget(c *change, f lifecycle.Failure) string {
	if f.Rollback {
		if c.o.Op.PrevSpec != nil {
			c.o.Spec = c.o.Op.PrevSpec
		}
		return c.o.Op.From
	}
	return f.To
}

// fail applies the failure rule of c's running action; outcome is what a landing counts as
// (failed, or healed when self-healing repairs a stuck phase).
func (s *step) fail(c *change, fatal bool, actor, msg, outcome string) {
	o, k := c.o, c.k
	a, _ := k.Action(o.Op.Action)
	f := k.FailureRule(a)
	o.Op.Error = msg
	o.Status["last_error"] = map[string]any{
		"action": a.Name, "operation_id": o.Op.ID, "state": o.State, "message": msg, "time": s.now.Format(time.RFC3339Nano),
	}
	c.dirty = true
	switch {
	case fatal && f.Fatal != "":
		s.ends(c, outcome)
		s.land(c, f.Fatal, actor, "", true)
	case f.Retry:
		// The phase starts over; the failure is recorded.
		s.enterPhase(c, a.Via, o.Op.Phase, actor)
		c.evs[len(c.evs)-1].Message = "retrying after failure"
	case len(f.Via) > 0 && !o.Op.Failing:
		o.Op.Failing = true
		s.enterPhase(c, f.Via, 0, actor)
	default:
		s.ends(c, outcome)
		s.land(c, s.failureTarget(c, f), actor, "", true)
	}
}

// staticDue is when a system or timer action will next start on a static object.
func (e *Engine) staticDue(o *store.Object, k *lifecycle.Kind) time.Time {
	var due time.Time
	for _, a := range k.AllActions() {
		if ok, _ := a.AllowedFrom(o.State); !ok || a.FromAny || !a.Matches(o.Spec) {
			continue
		}
		var t time.Time
		switch {
		case a.After > 0:
			// From when it entered the state: a spec change must not postpone it.
			t = o.StateSince.Add(e.scaled(time.Duration(a.After)))
		case a.At != "":
			at, ok := lifecycle.TimeValue(o.Spec[a.At])
			if !ok {
				continue
			}
			t = at.UTC() // the store's form, whatever offset the spec was written with
		default:
			continue
		}
		if due.IsZero() || t.Before(due) {
			due = t
		}
	}
	return due
}

// startAutomatic starts the system or timer action due on a static object.
func (s *step) startAutomatic(c *change) {
	o, k := c.o, c.k
	for _, a := range k.AllActions() {
		if a.ByUser() || a.FromAny {
			continue
		}
		if ok, _ := a.AllowedFrom(o.State); !ok || !a.Matches(o.Spec) {
			continue
		}
		switch {
		case a.After > 0 && !s.now.Before(o.StateSince.Add(s.e.scaled(time.Duration(a.After)))):
		case a.At != "":
			if at, ok := lifecycle.TimeValue(o.Spec[a.At]); !ok || s.now.Before(at) {
				continue
			}
		default:
			continue
		}
		s.start(c, a, false, string(a.Actor))
		return
	}
	o.Due = s.e.staticDue(o, k)
	c.dirty = true
}

// heal repairs a stuck phase by the kind's failure rule.
func (s *step) heal(c *change) {
	s.fail(c, false, string(lifecycle.ActorSystem),
		fmt.Sprintf("self-healed: stuck in %s for %s", c.o.State, s.now.Sub(c.o.Op.PhaseStarted).Round(time.Millisecond)), "healed")
	c.evs[len(c.evs)-1].Message = "self-healing repaired a stuck transition"
}

// jsonValue gives a value the shape it has after a store round trip (numbers as float64), so
// derived fields compare equal to what was stored.
func jsonValue(v any) any {
	switch v.(type) {
	case nil, string, bool, float64:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
