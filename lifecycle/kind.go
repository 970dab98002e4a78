// Package lifecycle holds the state machines of every object kind the simulator serves and the
// provider manages: their states, actions, failure rules and parent rules, loaded from
// declarative spec files, plus route search between static states and Mermaid rendering.
//
// It is pure Go with no HTTP or Terraform dependency, so the simulator (which enforces
// transitions) and the provider (which validates plans and walks routes) share one source of
// truth and cannot disagree.
package lifecycle

import (
	"fmt"
	"slices"
	"time"
)

// Actor is who drives a step: who may start an action, or who completes a phase.
type Actor string

// The actors of the seed systems.
const (
	ActorUser       Actor = "user"       // an API caller
	ActorSystem     Actor = "system"     // the platform itself (self-healing, cascades)
	ActorTimer      Actor = "timer"      // a point in time held in one of the object's fields
	ActorCRM        Actor = "crm"        // MobiledgeX's cloudlet resource manager
	ActorController Actor = "controller" // MobiledgeX's controller
)

var validActors = []Actor{ActorUser, ActorSystem, ActorTimer, ActorCRM, ActorController}

// Duration is a time.Duration written as a Go duration string ("2s", "1m30s") in spec files.
type Duration time.Duration

// Phase is one transition state an action passes through.
type Phase struct {
	// State is the transition state the object is in during this phase.
	State string `yaml:"state" json:"state"`
	// Actor completes the phase (the CRM answers, the system finishes the job...).
	Actor Actor `yaml:"actor,omitempty" json:"actor,omitempty"`
	// Duration is how long the phase takes before the time scale; zero means the kind's default.
	Duration Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Skippable phases may be skipped when their message is lost (MobiledgeX's CRM may go
	// from CreateRequested straight to Ready).
	Skippable bool `yaml:"skippable,omitempty" json:"skippable,omitempty"`
}

// Failure says what happens when an action fails in one of its phases.
type Failure struct {
	// Rollback returns the object to the static state the action started from.
	Rollback bool `yaml:"rollback,omitempty" json:"rollback,omitempty"`
	// Via lists transition phases the failure passes through first (MobiledgeX's CreateError,
	// undone by the controller).
	Via []Phase `yaml:"via,omitempty" json:"via,omitempty"`
	// To is the static state a failure lands in when it does not roll back.
	To string `yaml:"to,omitempty" json:"to,omitempty"`
	// Retry restarts the failed phase instead of leaving it (Savanna's Deleting is never left
	// except by removal).
	Retry bool `yaml:"retry,omitempty" json:"retry,omitempty"`
	// Fatal is the state a fatal failure lands in, for actions whose ordinary failures roll
	// back (a fatal Blazar update error gives ERROR).
	Fatal string `yaml:"fatal,omitempty" json:"fatal,omitempty"`
}

// Action is a named move between static states.
type Action struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// From lists the static states the action may start from.
	From []string `yaml:"from,omitempty" json:"from,omitempty"`
	// FromAny allows the action from every state, transitional ones included (Blazar's and
	// Savanna's delete). Starting it preempts the running operation.
	FromAny bool `yaml:"from_any,omitempty" json:"from_any,omitempty"`
	// ForceFrom lists static states the action may start from only when forced
	// (CB-Tumblebug's terminate from Failed).
	ForceFrom []string `yaml:"force_from,omitempty" json:"force_from,omitempty"`
	// Via lists the transition phases in order; empty means an instant move.
	Via []Phase `yaml:"via,omitempty" json:"via,omitempty"`
	// To is the static state the action lands in.
	To string `yaml:"to,omitempty" json:"to,omitempty"`
	// Returns lands the action back in the state it started from (reboot, clone...).
	Returns bool `yaml:"returns,omitempty" json:"returns,omitempty"`
	// With names the kind of another object the action works on (a machine's attach_disk
	// attaches a disk, its clone makes a machine): the API runs it as a transition, but an
	// action's parameters cannot name that object, so Terraform does not offer it.
	With string `yaml:"with,omitempty" json:"with,omitempty"`
	// Actor may start the action; only user actions are offered through the API and routes.
	Actor Actor `yaml:"actor,omitempty" json:"actor,omitempty"`
	// After starts a system action automatically once the object has sat that long in a from
	// state (self-healing of a paused cloudspace).
	After Duration `yaml:"after,omitempty" json:"after,omitempty"`
	// At names the object field holding the time a timer action starts at (Blazar's
	// start_date).
	At string `yaml:"at,omitempty" json:"at,omitempty"`
	// Where limits an automatic action (`at` or `after`) to objects whose spec has these
	// values (Blazar's before_end_lease event runs at its time; the start_lease and end_lease
	// events run with their lease).
	Where map[string]any `yaml:"where,omitempty" json:"where,omitempty"`
	// Failure overrides the kind's failure rule for this action.
	Failure *Failure `yaml:"failure,omitempty" json:"failure,omitempty"`
	// ParentStates overrides the parent states the kind requires for this action.
	ParentStates []string `yaml:"parent_in,omitempty" json:"parent_states,omitempty" was:"parent_states"`
	// IgnoreParent lets the action run whatever the parent's state (deletes).
	IgnoreParent bool `yaml:"ignore_parent,omitempty" json:"ignore_parent,omitempty"`
	// Derived lands the action in the kind's derived state (a Blazar update lands in the status
	// its events give); routes treat it as returning to where it started.
	Derived bool `yaml:"derived,omitempty" json:"derived,omitempty"`
	// ContinuesCreate makes the action the held create's continuation (CB-Tumblebug's
	// continue): it starts from the kind's hold state, runs the create's phases to the
	// create's target and makes the kind's children, as the create would have.
	ContinuesCreate bool `yaml:"continues_create,omitempty" json:"continues_create,omitempty"`

	// forced are the static states the kind's force_any lets the action start from.
	forced []string
}

// Parent names the kind an object lives under and the states it must be in for the child's
// actions to run.
type Parent struct {
	Kind string `yaml:"kind" json:"kind"`
	// States the parent must be in for the child's actions to run.
	States []string `yaml:"in,omitempty" json:"states,omitempty" was:"states"`
	// Delete is what deleting the parent does to its children: refuse (while any exist),
	// cascade (remove them with it, the default) or detach (keep them, parentless).
	Delete string `yaml:"delete,omitempty" json:"delete,omitempty"`
}

// States groups a kind's state names.
type States struct {
	// Static states do not change unless an action is requested (or a timer or the system acts).
	Static []string `yaml:"static" json:"static"`
	// Transition states are phases of running actions.
	Transition []string `yaml:"transition,omitempty" json:"transition,omitempty"`
	// Final states have no way out for users.
	Final []string `yaml:"final,omitempty" json:"final,omitempty"`
	// Error states record an unrecoverable failure.
	Error []string `yaml:"error,omitempty" json:"error,omitempty"`
	// Gone states mean the object no longer exists: reaching one removes it.
	Gone []string `yaml:"gone,omitempty" json:"gone,omitempty"`
}

// Kind is the state machine of one object kind.
type Kind struct {
	Name        string `yaml:"name" json:"name"`
	Family      string `yaml:"family" json:"family"`
	Collection  string `yaml:"collection" json:"collection"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	States      States `yaml:"states" json:"states"`
	// Initial is the static state an object is modelled in before its create action runs
	// (VIRTUAL, MODELED, NotPresent). Empty when the create action starts from nothing.
	Initial string `yaml:"initial,omitempty" json:"initial,omitempty"`
	// Hold is the static state a create request that asks to hold (CB-Tumblebug's
	// option=hold) puts the object in, instead of starting the create: no operation runs and
	// no children are made until an action with ContinuesCreate starts from it. Empty when
	// the kind's creates cannot be held.
	Hold string `yaml:"hold,omitempty" json:"hold,omitempty"`
	// Create is the action a create request runs. With an Initial state it is also an
	// ordinary action from that state, so a rolled-back create can be run again.
	Create Action `yaml:"create" json:"create"`
	// Actions are every other action.
	Actions []Action `yaml:"actions,omitempty" json:"actions,omitempty"`
	// Failure is the default failure rule of the kind's actions.
	Failure Failure `yaml:"failure,omitempty" json:"failure,omitempty"`
	// Parent is the kind objects of this kind live under, if any.
	Parent *Parent `yaml:"parent,omitempty" json:"parent,omitempty"`
	// Deletion maps a deletion mode ("destroy", "delete") to the actions that carry it out; a
	// DELETE request runs the first of them allowed from the object's state.
	Deletion map[string][]string `yaml:"deletion,omitempty" json:"deletion,omitempty"`
	// Update names the action a spec change runs; empty means spec changes apply at once.
	Update string `yaml:"update,omitempty" json:"update,omitempty"`
	// ForceAny lets a forced user action start from any static state that is not final,
	// skipping the checks (CB-Tumblebug's force flag). One action at a time still holds.
	ForceAny bool `yaml:"force_any,omitempty" json:"force_any,omitempty"`
	// DefaultDuration is a phase's duration when the phase names none.
	DefaultDuration Duration `yaml:"default_duration,omitempty" json:"default_duration,omitempty"`

	// Fields declares the spec fields; a kind that declares none accepts any spec.
	Fields []Field `yaml:"fields,omitempty" json:"fields,omitempty"`
	// ExtraFields keeps spec fields beyond the declared ones as they are, unchecked.
	ExtraFields bool `yaml:"extra_fields,omitempty" json:"extra_fields,omitempty"`
	// MadeByParent kinds are made only by their parent's create (children), never through
	// their own collection.
	MadeByParent bool `yaml:"made_by_parent,omitempty" json:"made_by_parent,omitempty"`
	// Children are made together with an object of this kind.
	Children []Child `yaml:"children,omitempty" json:"children,omitempty"`
	// Propagate carries actions and landings over to related objects.
	Propagate []Propagation `yaml:"propagate,omitempty" json:"propagate,omitempty"`
	// Derive computes state and status fields from related objects.
	Derive *Derive `yaml:"derive,omitempty" json:"derive,omitempty"`
	// Guards require ancestors or linked objects to be in some states for actions to run.
	Guards []Guard `yaml:"guards,omitempty" json:"guards,omitempty"`
	// Links are spec fields that point at objects of other kinds.
	Links []Link `yaml:"links,omitempty" json:"links,omitempty"`
	// Invariants name registered checks of an object against its children.
	Invariants []string `yaml:"invariants,omitempty" json:"invariants,omitempty"`

	file    string
	loc     locator
	actions map[string]*Action
	kinds   map[string]stateKind
}

type stateKind uint8

const (
	stateStatic stateKind = iota + 1
	stateTransition
)

// IsStatic reports whether state is one of the kind's static states.
func (k *Kind) IsStatic(state string) bool { return k.kinds[state] == stateStatic }

// IsTransition reports whether state is one of the kind's transition states.
func (k *Kind) IsTransition(state string) bool { return k.kinds[state] == stateTransition }

// HasState reports whether state is declared by the kind.
func (k *Kind) HasState(state string) bool { return k.kinds[state] != 0 }

// IsFinal reports whether state is final (users cannot leave it).
func (k *Kind) IsFinal(state string) bool { return slices.Contains(k.States.Final, state) }

// IsError reports whether state records an unrecoverable failure.
func (k *Kind) IsError(state string) bool { return slices.Contains(k.States.Error, state) }

// IsHeld reports whether state is the kind's hold state: a create held before it started
// (no children made, nothing derived from them).
func (k *Kind) IsHeld(state string) bool { return k.Hold != "" && state == k.Hold }

// IsGone reports whether reaching state removes the object.
func (k *Kind) IsGone(state string) bool { return slices.Contains(k.States.Gone, state) }

// Action returns the named action (the create action included).
func (k *Kind) Action(name string) (*Action, bool) {
	a, ok := k.actions[name]
	return a, ok
}

// AllActions returns the create action followed by the other actions, in spec order.
func (k *Kind) AllActions() []*Action {
	out := make([]*Action, 0, len(k.Actions)+1)
	out = append(out, &k.Create)
	for i := range k.Actions {
		out = append(out, &k.Actions[i])
	}
	return out
}

// StaticStates returns the kind's static states that an object can be in while it exists,
// in spec order (gone states excluded).
func (k *Kind) StaticStates() []string {
	out := make([]string, 0, len(k.States.Static))
	for _, s := range k.States.Static {
		if !k.IsGone(s) {
			out = append(out, s)
		}
	}
	return out
}

// RequestableStates returns the static states a user can ask an object to be in, in spec
// order: where the create lands (or the initial state), the hold state (a held create) and
// where some user action lands.
// Error states that only failures reach, and gone states, are left out.
func (k *Kind) RequestableStates() []string {
	var out []string
	for _, s := range k.StaticStates() {
		ok := s == k.Initial || s == k.Create.To || k.IsHeld(s)
		for _, a := range k.AllActions() {
			if ok {
				break
			}
			ok = a.ByUser() && a.To == s
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// Target is where an action started from state lands on success.
func (a *Action) Target(from string) string {
	if a.Returns {
		return from
	}
	return a.To
}

// AllowedFrom reports whether the action may start from state, and whether it must be forced
// to. Create actions are allowed only from the kind's initial state.
func (a *Action) AllowedFrom(state string) (ok, needsForce bool) {
	if a.FromAny || slices.Contains(a.From, state) {
		return true, false
	}
	if slices.Contains(a.ForceFrom, state) || slices.Contains(a.forced, state) {
		return true, true
	}
	return false, false
}

// Matches reports whether an object with spec is one the action applies to: its spec has the
// values of the action's `where`.
func (a *Action) Matches(spec map[string]any) bool {
	for k, v := range a.Where {
		if fmt.Sprint(spec[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// ByUser reports whether users start the action through the API.
func (a *Action) ByUser() bool { return a.Actor == "" || a.Actor == ActorUser }

// FailureRule is the failure rule that applies to the named action.
func (k *Kind) FailureRule(a *Action) Failure {
	if a.Failure != nil {
		return *a.Failure
	}
	return k.Failure
}

// PhaseDuration is how long phase takes before the time scale.
func (k *Kind) PhaseDuration(p Phase) time.Duration {
	if p.Duration > 0 {
		return time.Duration(p.Duration)
	}
	if k.DefaultDuration > 0 {
		return time.Duration(k.DefaultDuration)
	}
	return time.Second
}

// RequiredParentStates are the states the parent must be in for the action to run; nil means
// no requirement.
func (k *Kind) RequiredParentStates(a *Action) []string {
	if k.Parent == nil || a.IgnoreParent {
		return nil
	}
	if a.ParentStates != nil {
		return a.ParentStates
	}
	return k.Parent.States
}

// Allowed lists the user actions that may start from state, in spec order. Actions allowed
// only when forced are included when force is true.
func (k *Kind) Allowed(state string, force bool) []string {
	var out []string
	for _, a := range k.AllActions() {
		if !a.ByUser() {
			continue
		}
		ok, needsForce := a.AllowedFrom(state)
		if ok && (!needsForce || force) {
			out = append(out, a.Name)
		}
	}
	return out
}

// Check reports whether a user may start action from state; it returns a typed error naming
// what is allowed instead.
func (k *Kind) Check(state, action string, force bool) (*Action, error) {
	a, ok := k.actions[action]
	if !ok || !a.ByUser() {
		return nil, &UnknownActionError{Kind: k.Name, Action: action, Known: k.userActions()}
	}
	allowed, needsForce := a.AllowedFrom(state)
	if !allowed || (needsForce && !force) {
		// Only a cell the spec names (force_from) says "needs force"; force_any overrides
		// every check and is not advertised as the way to do it.
		return nil, &InvalidTransitionError{
			Kind: k.Name, From: state, Action: action,
			Allowed: k.Allowed(state, force), NeedsForce: allowed && slices.Contains(a.ForceFrom, state),
		}
	}
	return a, nil
}

// userActions lists the names of the actions users may start, in spec order.
func (k *Kind) userActions() []string {
	var out []string
	for _, a := range k.AllActions() {
		if a.ByUser() {
			out = append(out, a.Name)
		}
	}
	return out
}

// DeletionAction returns the action a DELETE in mode runs from state: the first of the mode's
// actions allowed from it.
func (k *Kind) DeletionAction(mode, state string) (*Action, error) {
	names, ok := k.Deletion[mode]
	if !ok {
		modes := make([]string, 0, len(k.Deletion))
		for m := range k.Deletion {
			modes = append(modes, m)
		}
		slices.Sort(modes)
		return nil, &UnknownActionError{Kind: k.Name, Action: "deletion mode " + mode, Known: modes}
	}
	for _, n := range names {
		a := k.actions[n]
		if ok, needsForce := a.AllowedFrom(state); ok && !needsForce {
			return a, nil
		}
	}
	return nil, &InvalidTransitionError{Kind: k.Name, From: state, Action: names[0], Allowed: k.Allowed(state, false)}
}

// DeletionTargets lists the states a deletion in mode ends in (where its actions land).
// A state from which another of the mode's actions runs is a step, not an end (a terminated
// CB-Tumblebug MCI is then deleted).
func (k *Kind) DeletionTargets(mode string) []string {
	var out []string
	for _, n := range k.Deletion[mode] {
		a := k.actions[n]
		if a == nil || a.Returns || slices.Contains(out, a.To) {
			continue
		}
		if _, err := k.DeletionAction(mode, a.To); err == nil && !k.IsGone(a.To) {
			continue
		}
		out = append(out, a.To)
	}
	return out
}

// Lands is the static state an object in state will settle in without user action, given the
// action running (empty when unknown): a transition state lands where its action goes, and a
// static state with an automatic system action lands where that goes (a paused cloudspace
// returns to DEPLOYED). A static state with nothing pending lands on itself.
func (k *Kind) Lands(state, action string) (string, error) {
	if !k.HasState(state) {
		return "", &UnknownStateError{Kind: k.Name, State: state, Known: k.allStates()}
	}
	if k.IsStatic(state) {
		for _, a := range k.AllActions() {
			if a.After > 0 && slices.Contains(a.From, state) {
				return a.Target(state), nil
			}
		}
		return state, nil
	}
	var candidates []*Action
	if a, ok := k.actions[action]; ok {
		candidates = []*Action{a}
	} else {
		candidates = k.AllActions()
	}
	var lands []string
	for _, a := range candidates {
		to, through := a.landsFrom(k, state)
		if !through {
			continue
		}
		if to == "" {
			return "", &AmbiguousStateError{Kind: k.Name, State: state,
				Reason: "action " + a.Name + " returns to the state it started from"}
		}
		if !slices.Contains(lands, to) {
			lands = append(lands, to)
		}
	}
	switch len(lands) {
	case 0:
		return "", &AmbiguousStateError{Kind: k.Name, State: state, Reason: "no action passes through it"}
	case 1:
		return lands[0], nil
	default:
		return "", &AmbiguousStateError{Kind: k.Name, State: state,
			Reason: "actions through it land in different states " + quoteList(lands)}
	}
}

// PassesThrough reports whether the action passes through state, in its phases or its failure
// path.
func (a *Action) PassesThrough(k *Kind, state string) bool {
	_, ok := a.landsFrom(k, state)
	return ok
}

// landsFrom reports whether the action passes through state, in its phases or its failure
// path, and where it lands from there ("" when it returns to where it started).
func (a *Action) landsFrom(k *Kind, state string) (string, bool) {
	for _, p := range a.Via {
		if p.State == state {
			if a.Returns {
				return "", true
			}
			return a.To, true
		}
	}
	f := k.FailureRule(a)
	for _, p := range f.Via {
		if p.State == state {
			if f.Rollback {
				return "", true
			}
			return f.To, true
		}
	}
	return "", false
}

func (k *Kind) allStates() []string {
	out := slices.Clone(k.States.Static)
	return append(out, k.States.Transition...)
}
