package lifecycle

import "slices"

// Step is one action of a route.
type Step struct {
	Action string `json:"action"`
	From   string `json:"from"`
	// Via are the transition states the step passes through.
	Via []string `json:"via,omitempty"`
	To  string   `json:"to"`
	// Force is set when the action is allowed from From only when forced.
	Force bool `json:"force,omitempty"`
}

// Route is a sequence of user actions between two static states. An empty route means the
// object is already there.
type Route []Step

// States lists the static states the route visits, starting state included.
func (r Route) States(from string) []string {
	out := []string{from}
	for _, s := range r {
		out = append(out, s.To)
	}
	return out
}

// Actions lists the route's action names.
func (r Route) Actions() []string {
	out := make([]string, len(r))
	for i, s := range r {
		out[i] = s.Action
	}
	return out
}

// Route finds the shortest sequence of user actions from a state to a desired static state.
// An object already in the desired state gets an empty route. Otherwise a transition state (or
// a static one the system will leave by itself) starts from where it lands; action names the
// action running, if known, to settle which. Among routes of equal
// length the one whose actions come first in the spec wins, so the answer is deterministic.
// Actions that need force are used only when force is true.
func (k *Kind) Route(from, action, to string, force bool) (Route, error) {
	if !k.HasState(to) {
		return nil, &UnknownStateError{Kind: k.Name, State: to, Known: k.allStates()}
	}
	if !k.IsStatic(to) {
		return nil, &NotStaticError{Kind: k.Name, State: to, Static: k.StaticStates()}
	}
	// An object already in the desired static state needs nothing, even when the system will
	// move it later (a paused cloudspace that self-healing will resume).
	if from == to {
		return Route{}, nil
	}
	start, err := k.Lands(from, action)
	if err != nil {
		return nil, err
	}
	if start == to {
		return Route{}, nil
	}
	prev := map[string]Step{}
	k.walk(start, force, func(step Step) bool {
		prev[step.To] = step
		return step.To != to
	})
	if _, ok := prev[to]; !ok {
		return nil, &NoRouteError{Kind: k.Name, From: from, To: to, Reachable: k.withoutGone(k.Reachable(from, force))}
	}
	var r Route
	for at := to; at != start; at = prev[at].From {
		r = append(r, prev[at])
	}
	slices.Reverse(r)
	return r, nil
}

// Reachable lists the static states users can reach from a state, in breadth-first order. Like
// Route, it starts from where a transition state (or a static state the system leaves by
// itself) lands, and lists that state first; the state itself is not listed. When where it
// lands cannot be told it lists nothing.
func (k *Kind) Reachable(from string, force bool) []string {
	start, err := k.Lands(from, "")
	if err != nil {
		return nil
	}
	var out []string
	if start != from {
		out = append(out, start)
	}
	k.walk(start, force, func(step Step) bool {
		if step.To != from {
			out = append(out, step.To)
		}
		return true
	})
	return out
}

// walk visits the user steps reachable from start breadth-first, the first step into each
// state only, until visit returns false. Route and Reachable share it, so they cannot disagree.
func (k *Kind) walk(start string, force bool, visit func(Step) bool) {
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, step := range k.userSteps(s, force) {
			if seen[step.To] {
				continue
			}
			seen[step.To] = true
			if !visit(step) {
				return
			}
			queue = append(queue, step.To)
		}
	}
}

// CanTransition reports whether a route exists from a state to a static state.
func (k *Kind) CanTransition(from, to string, force bool) bool {
	_, err := k.Route(from, "", to, force)
	return err == nil
}

// userSteps lists the moves users can make from a static state that change it.
func (k *Kind) userSteps(s string, force bool) []Step {
	var out []Step
	for _, a := range k.AllActions() {
		if !a.ByUser() || a.Returns {
			continue
		}
		ok, needsForce := a.AllowedFrom(s)
		// Routes force only the cells the spec names (force_from); force_any is an override
		// for people, not a path to plan.
		if !ok || (needsForce && (!force || !slices.Contains(a.ForceFrom, s))) || a.To == s {
			continue
		}
		via := make([]string, len(a.Via))
		for i, p := range a.Via {
			via[i] = p.State
		}
		out = append(out, Step{Action: a.Name, From: s, Via: via, To: a.To, Force: needsForce})
	}
	return out
}

func (k *Kind) withoutGone(states []string) []string {
	out := []string{}
	for _, s := range states {
		if !k.IsGone(s) {
			out = append(out, s)
		}
	}
	return out
}

// Settles is Lands for an object whose running operation is known: an action that returns
// (or rolls back) to where it started lands in from, the static state it started from.
func (k *Kind) Settles(state, action, from string) (string, error) {
	if a, ok := k.actions[action]; ok && from != "" && k.IsStatic(from) {
		if to, through := a.landsFrom(k, state); through && to == "" {
			return from, nil
		}
	}
	return k.Lands(state, action)
}
