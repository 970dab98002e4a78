package lifecycle

import (
	"fmt"
	"strings"
)

// InvalidTransitionError is returned when an action may not start from a state. It names the
// actions that are allowed instead.
type InvalidTransitionError struct {
	Kind, From, Action string
	Allowed            []string
	// NeedsForce is set when the action is allowed from From only when forced.
	NeedsForce bool
}

func (e *InvalidTransitionError) Error() string {
	if e.NeedsForce {
		return fmt.Sprintf("%s: action %q from state %s needs force", e.Kind, e.Action, e.From)
	}
	return fmt.Sprintf("%s: action %q is not allowed from state %s; allowed: %s",
		e.Kind, e.Action, e.From, listOrNone(e.Allowed))
}

// NoRouteError is returned when no sequence of user actions leads from one state to another.
// Reachable lists the static states that can be reached instead.
type NoRouteError struct {
	Kind, From, To string
	Reachable      []string
}

func (e *NoRouteError) Error() string {
	return fmt.Sprintf("%s: no route from %s to %s; reachable from %s: %s",
		e.Kind, e.From, e.To, e.From, listOrNone(e.Reachable))
}

// UnknownStateError is returned for a state the kind does not declare.
type UnknownStateError struct {
	Kind, State string
	Known       []string
}

func (e *UnknownStateError) Error() string {
	return fmt.Sprintf("%s: unknown state %q; states are %s", e.Kind, e.State, listOrNone(e.Known))
}

// NotStaticError is returned when a route is asked to end in a transition state.
type NotStaticError struct {
	Kind, State string
	Static      []string
}

func (e *NotStaticError) Error() string {
	return fmt.Sprintf("%s: %s is a transition state, not a static one; static states are %s",
		e.Kind, e.State, listOrNone(e.Static))
}

// UnknownActionError is returned for an action the kind does not offer to users.
type UnknownActionError struct {
	Kind, Action string
	Known        []string
}

func (e *UnknownActionError) Error() string {
	return fmt.Sprintf("%s: unknown action %q; actions are %s", e.Kind, e.Action, listOrNone(e.Known))
}

// UnknownKindError is returned for a kind the registry does not hold.
type UnknownKindError struct {
	Kind  string
	Known []string
}

func (e *UnknownKindError) Error() string {
	return fmt.Sprintf("unknown kind %q; kinds are %s", e.Kind, listOrNone(e.Known))
}

// AmbiguousStateError is returned when where a transition state lands cannot be told without
// knowing the action running.
type AmbiguousStateError struct {
	Kind, State, Reason string
}

func (e *AmbiguousStateError) Error() string {
	return fmt.Sprintf("%s: cannot tell where transition state %s lands: %s", e.Kind, e.State, e.Reason)
}

// SpecError is a problem in a spec file, located by file, kind, field path and line.
type SpecError struct {
	File  string
	Kind  string
	Field string
	Line  int
	Msg   string
}

func (e *SpecError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Kind != "" {
		fmt.Fprintf(&b, ": kind %q", e.Kind)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// SpecErrors is every problem found in one load.
type SpecErrors []*SpecError

func (es SpecErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func quoteList(xs []string) string { return "(" + strings.Join(xs, ", ") + ")" }
