package lifecycle

import (
	"errors"
	"slices"
	"testing"
)

// FuzzActionSequences drives random sequences of actions, phase completions, skips, failures
// and preemptions on an object of every kind, as the simulator's engine would, and checks:
//   - the object is always in a declared state: static when idle, transitional when busy;
//   - every action Check accepts starts from a state it allows (and Allowed agrees);
//   - where Lands says a transition state goes is where the running action goes;
//   - every route returned is valid when replayed with Check, and every NoRouteError's
//     reachable states do have routes.
//
// The seed corpus runs in plain `go test`; `go test -fuzz FuzzActionSequences ./lifecycle`
// explores further.
func FuzzActionSequences(f *testing.F) {
	kinds := builtin.Kinds()
	for i := range kinds {
		f.Add(uint8(i), []byte{})
		ascending := make([]byte, 64)
		for j := range ascending {
			ascending[j] = byte(j * 5)
		}
		f.Add(uint8(i), ascending)
		x := uint32(2463534242 + i)
		for n := 0; n < 3; n++ {
			seq := make([]byte, 96)
			for j := range seq {
				x ^= x << 13
				x ^= x >> 17
				x ^= x << 5
				seq[j] = byte(x)
			}
			f.Add(uint8(i), seq)
		}
	}
	f.Fuzz(func(t *testing.T, kindIndex uint8, ops []byte) {
		if len(ops) > 1024 {
			ops = ops[:1024]
		}
		k := kinds[int(kindIndex)%len(kinds)]
		o := newFuzzObject(t, k)
		for i, b := range ops {
			if o.gone {
				o = newFuzzObject(t, k)
			}
			o.step(b)
			o.checkInvariants(i, b)
		}
	})
}

// fuzzObject is one object as the engine would run it.
type fuzzObject struct {
	t     *testing.T
	k     *Kind
	state string
	gone  bool

	// The running operation, when the object is in a transition state.
	op      *Action
	origin  string // the state it started from ("" when created from nothing)
	phase   int    // index into op.Via, or into the failure's Via when failing
	failing bool
}

func newFuzzObject(t *testing.T, k *Kind) *fuzzObject {
	o := &fuzzObject{t: t, k: k}
	if k.Initial != "" {
		o.state = k.Initial
		return o
	}
	o.start(&k.Create, "")
	return o
}

func (o *fuzzObject) busy() bool { return o.op != nil }

func (o *fuzzObject) start(a *Action, from string) {
	o.op, o.origin, o.phase, o.failing = a, from, 0, false
	if len(a.Via) == 0 {
		o.land(a.Target(from))
		return
	}
	o.state = a.Via[0].State
}

func (o *fuzzObject) land(s string) {
	o.op, o.failing = nil, false
	o.state = s
	if o.k.IsGone(s) {
		o.gone = true
	}
}

// step applies one fuzz byte: bits 0-1 choose the move, bit 2 forces (or picks the fatal
// failure, or a skip), bits 3-7 choose an action or a target.
func (o *fuzzObject) step(b byte) {
	sel, force, arg := b&3, b&4 != 0, int(b>>3)
	actions := o.k.AllActions()
	if !o.busy() {
		switch sel {
		case 0, 1:
			o.try(actions[arg%len(actions)], force)
		case 2:
			o.checkRoute(o.k.States.Static[arg%len(o.k.States.Static)], force)
		case 3:
			o.tryDeletion(map[bool]string{false: "delete", true: "destroy"}[force])
		}
		return
	}
	switch sel {
	case 0:
		o.advance(false)
	case 1:
		o.fail(force)
	case 2:
		o.checkRoute(o.k.States.Static[arg%len(o.k.States.Static)], force)
	case 3:
		if force {
			o.advance(true)
		} else {
			o.try(actions[arg%len(actions)], false) // preemption: only from_any actions
		}
	}
}

// try starts an action the way its actor would: users through Check, the system, timers and
// the CRM by the spec alone.
func (o *fuzzObject) try(a *Action, force bool) {
	t, k := o.t, o.k
	ok, needsForce := a.AllowedFrom(o.state)
	want := ok && (!needsForce || force) && (!o.busy() || a.FromAny)
	if !a.ByUser() {
		if _, err := k.Check(o.state, a.Name, force); err == nil {
			t.Fatalf("%s: Check(%q, %q) accepted a %s action", k.Name, o.state, a.Name, a.Actor)
		}
		if want && !needsForce {
			o.start(a, o.state)
		}
		return
	}
	got, err := k.Check(o.state, a.Name, force)
	if (err == nil) != want {
		t.Fatalf("%s: Check(%q, %q, %v) = %v, want allowed=%v", k.Name, o.state, a.Name, force, err, want)
	}
	if listed := slices.Contains(k.Allowed(o.state, force), a.Name); listed != (err == nil) {
		t.Fatalf("%s: Allowed(%q, %v) lists %s: %v, but Check = %v", k.Name, o.state, force, a.Name, listed, err)
	}
	if err != nil {
		var it *InvalidTransitionError
		if !errors.As(err, &it) || it.From != o.state || it.Action != a.Name {
			t.Fatalf("%s: Check(%q, %q) = %v, want *InvalidTransitionError", k.Name, o.state, a.Name, err)
		}
		return
	}
	// Every accepted action starts from an allowed state.
	if got != a {
		t.Fatalf("%s: Check returned %v, want %s", k.Name, got, a.Name)
	}
	if !a.FromAny && (!k.IsStatic(o.state) || !slices.Contains(a.From, o.state) && !(force && (slices.Contains(a.ForceFrom, o.state) || k.ForceAny))) {
		t.Fatalf("%s: %s accepted from %s, which it does not allow", k.Name, a.Name, o.state)
	}
	o.start(a, o.state)
}

func (o *fuzzObject) tryDeletion(mode string) {
	a, err := o.k.DeletionAction(mode, o.state)
	if err != nil {
		return
	}
	// Deletion may name a system action (a reservation is released): check the spec's from
	// states rather than Check.
	if ok, needsForce := a.AllowedFrom(o.state); !ok || needsForce || o.busy() && !a.FromAny {
		o.t.Fatalf("%s: DeletionAction(%q, %q) = %s, which it does not allow", o.k.Name, mode, o.state, a.Name)
	}
	if a.ByUser() {
		if _, err := o.k.Check(o.state, a.Name, false); err != nil {
			o.t.Fatalf("%s: DeletionAction(%q, %q) = %s, but Check = %v", o.k.Name, mode, o.state, a.Name, err)
		}
	}
	o.start(a, o.state)
}

// advance completes the current phase, or skips the next one when skip is set and it is
// skippable (a lost CRM message).
func (o *fuzzObject) advance(skip bool) {
	if o.failing {
		via := o.k.FailureRule(o.op).Via
		if o.phase++; o.phase < len(via) {
			o.state = via[o.phase].State
			return
		}
		o.land(o.failureEnd())
		return
	}
	via := o.op.Via
	o.phase++
	if skip && o.phase < len(via) && via[o.phase].Skippable {
		o.phase++
	}
	if o.phase < len(via) {
		o.state = via[o.phase].State
		return
	}
	o.land(o.op.Target(o.origin))
}

func (o *fuzzObject) failureEnd() string {
	f := o.k.FailureRule(o.op)
	if f.Rollback {
		return o.origin
	}
	return f.To
}

func (o *fuzzObject) fail(fatal bool) {
	if o.failing {
		o.advance(false) // an undo does not fail again
		return
	}
	f := o.k.FailureRule(o.op)
	switch {
	case f.Retry:
		// The phase runs again.
	case fatal && f.Fatal != "":
		o.land(f.Fatal)
	case len(f.Via) > 0:
		o.failing, o.phase = true, 0
		o.state = f.Via[0].State
	default:
		o.land(o.failureEnd())
	}
}

// expectedLanding is where the object will settle if the operation runs on (succeeds, or
// finishes undoing a failure); "" when it depends on where the operation started.
func (o *fuzzObject) expectedLanding() string {
	switch {
	case !o.busy():
		return o.state
	case o.failing:
		if o.k.FailureRule(o.op).Rollback {
			return ""
		}
		return o.failureEnd()
	case o.op.Returns:
		return ""
	default:
		return o.op.To
	}
}

func (o *fuzzObject) action() string {
	if o.op == nil {
		return ""
	}
	return o.op.Name
}

func (o *fuzzObject) checkInvariants(i int, b byte) {
	t, k := o.t, o.k
	if !k.HasState(o.state) {
		t.Fatalf("%s: step %d (%#x): state %q is not declared", k.Name, i, b, o.state)
	}
	if o.busy() != k.IsTransition(o.state) {
		t.Fatalf("%s: step %d (%#x): state %s, busy=%v", k.Name, i, b, o.state, o.busy())
	}
	if !o.busy() && !k.IsStatic(o.state) {
		t.Fatalf("%s: step %d: idle in non-static state %s", k.Name, i, o.state)
	}
	want := o.expectedLanding()
	if !o.busy() {
		return
	}
	got, err := k.Lands(o.state, o.action())
	switch {
	case want == "" && err == nil:
		t.Fatalf("%s: Lands(%q, %q) = %s, but the operation returns to %s", k.Name, o.state, o.action(), got, o.origin)
	case want != "" && (err != nil || got != want):
		t.Fatalf("%s: Lands(%q, %q) = %q, %v, want %s", k.Name, o.state, o.action(), got, err, want)
	}
	if got, err := k.Lands(o.state, ""); err == nil && want != "" && got != want {
		t.Fatalf("%s: Lands(%q) = %s, but %s lands in %s", k.Name, o.state, got, o.action(), want)
	}
}

// checkRoute asks for a route from the object's state to a static state and replays it.
func (o *fuzzObject) checkRoute(to string, force bool) {
	t, k := o.t, o.k
	r, err := k.Route(o.state, o.action(), to, force)
	var nr *NoRouteError
	var ae *AmbiguousStateError
	switch {
	case err == nil:
		replay(t, k, o.state, o.action(), to, force, r)
	case errors.As(err, &nr):
		if slices.Contains(nr.Reachable, to) {
			t.Fatalf("%s: Route(%q, %q) = %v lists the target as reachable", k.Name, o.state, to, err)
		}
		for _, s := range nr.Reachable {
			r, err := k.Route(o.state, o.action(), s, force)
			if err != nil {
				t.Fatalf("%s: Route(%q, %q) lists %s as reachable, but Route(%q, %q) = %v", k.Name, o.state, to, s, o.state, s, err)
			}
			replay(t, k, o.state, o.action(), s, force, r)
		}
	case errors.As(err, &ae):
		if o.expectedLanding() != "" {
			t.Fatalf("%s: Route(%q, %q, %q) = %v, but the operation lands in %s", k.Name, o.state, o.action(), to, err, o.expectedLanding())
		}
	default:
		t.Fatalf("%s: Route(%q, %q) = %v", k.Name, o.state, to, err)
	}
}
