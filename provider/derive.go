package provider

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// A typed resource is derived from its kind's spec: what a user may ask for (status), what the
// resource aims at when it has no status (where a create lands, a link's state, nothing for a
// kind that time drives), what a create may wait for (the states its timers lead to), the
// children its create makes (computed lists), the error states a user repairs (held, with the
// repair named) and what a link sends with its actions. The same derivation serves the
// built-in kinds and a user's own; a family file adds only what a spec cannot say (see
// familyDoc and the optional capabilities of a family).

// deriveConfig is the typed resource (or data source) of kind k, with doc's additions.
func deriveConfig(k *lifecycle.Kind, doc familyDoc) kindConfig {
	cfg := kindConfig{
		typeName:    k.Name,
		kind:        k.Name,
		shape:       typedShape{kind: k.Name},
		declared:    k,
		description: doc.description,
		family:      doc.family,
	}
	if cfg.description == "" {
		cfg.description = k.Description
	}
	if k.Parent != nil {
		cfg.parentAttr, cfg.parentKind = k.Parent.Kind+"_id", k.Parent.Kind
	}
	cfg.fields = fieldsOf(k)
	if !k.MadeByParent {
		cfg.statuses = userStatuses(k)
	}
	cfg.holds = heldStates(k)
	if len(cfg.statuses) == 0 {
		switch {
		case len(actionLinks(k)) > 0:
			cfg.links = linkRules(k)
		case len(timerTargets(k)) > 0:
			cfg.timeDriven = true
			cfg.waitFor = append([]string{landing(k)}, timerTargets(k)...)
		default:
			cfg.aim = landing(k)
		}
	}
	cfg.related = childLists(k, cfg)
	if a, ok := typedDerivedAttr(k); ok {
		cfg.derived = &a
	}
	cfg.actions = offeredActions(k)
	return cfg
}

// offeredActions are the user actions a kind's Terraform action (1.14+) runs: those that
// return the object to the state it started from (a machine's reboot) and repairs (a
// cloudlet's fix). An action landing elsewhere would be walked back by the next plan, which
// asks for the resource's status: that is the status's job, not an action's.
func offeredActions(k *lifecycle.Kind) []string {
	var out []string
	for _, a := range k.AllActions() {
		if offers(k, a, "") {
			out = append(out, a.Name)
		}
	}
	return out
}

// offers reports whether Terraform actions (and lifecycle_action) run a on an object in state
// from ("" for any state): a user action, not the create, that returns the object to where it
// started or repairs it, and that works on no other object (with: an action's parameters
// cannot name it, so it would do nothing of what it says).
func offers(k *lifecycle.Kind, a *lifecycle.Action, from string) bool {
	return a.ByUser() && a.Name != k.Create.Name && a.With == "" && (returnsToStart(a, from) || isRepair(k, a))
}

// actionLinks are k's links that actions set or clear (a disk's machine_id, set by attach):
// their value goes with those actions' params, not in the spec. A link only the create sets
// (set_by: [create], nothing clears it) is not one of them: the create's spec carries it, as
// a link no action sets.
func actionLinks(k *lifecycle.Kind) []lifecycle.Link {
	var out []lifecycle.Link
	for _, l := range k.Links {
		if len(l.ClearedBy) > 0 || slices.ContainsFunc(l.SetBy, func(a string) bool { return a != k.Create.Name }) {
			out = append(out, l)
		}
	}
	return out
}

// linkRules are k's links that actions set or clear, with where the user actions that set
// and clear them land.
func linkRules(k *lifecycle.Kind) []linkRule {
	var out []linkRule
	land := func(names lifecycle.Names) string {
		for _, n := range names {
			if a, ok := k.Action(n); ok && a.ByUser() && a.To != "" {
				return a.To
			}
		}
		return ""
	}
	for _, l := range actionLinks(k) {
		out = append(out, linkRule{field: l.Field, set: land(l.SetBy), cleared: land(l.ClearedBy)})
	}
	return out
}

// landing is the static state a new object of k lands in.
func landing(k *lifecycle.Kind) string {
	if s, err := k.Lands(k.Create.To, ""); err == nil {
		return s
	}
	return k.Create.To
}

// moves are the user actions that take an object from one of its everyday states to another:
// not its update, a deletion, a link's action or a repair.
func moves(k *lifecycle.Kind) []*lifecycle.Action {
	skip := map[string]bool{k.Update: true}
	for mode, names := range k.Deletion {
		for i, n := range names {
			// The end of a destroy (a node decommissioned) is a state users may ask for; the
			// recycle bin and the steps before an end are not.
			if mode != "destroy" || i < len(names)-1 {
				skip[n] = true
			}
		}
	}
	for _, l := range k.Links {
		for _, n := range append(slices.Clone(l.SetBy), l.ClearedBy...) {
			skip[n] = true
		}
	}
	var out []*lifecycle.Action
	for _, a := range k.AllActions() {
		if a.ByUser() && !skip[a.Name] && !a.Returns && a.To != "" && !onlyFromErrors(k, a) && a.Name != k.Create.Name {
			out = append(out, a)
		}
	}
	return out
}

// onlyFromErrors reports whether every state a runs from is an error state.
func onlyFromErrors(k *lifecycle.Kind, a *lifecycle.Action) bool {
	if len(a.From) == 0 {
		return false
	}
	for _, s := range a.From {
		if !k.IsError(s) {
			return false
		}
	}
	return true
}

// userStatuses are the static states users may ask for, in spec order: where a create lands
// and every state moves lead to from there (not an error, gone or recycle-bin state, nor one
// the system leaves by itself). None when no move leaves the landing state: the kind has
// `state` only.
func userStatuses(k *lifecycle.Kind) []string {
	reach := map[string]bool{landing(k): true}
	if k.Hold != "" {
		reach[k.Hold] = true // a held create (status = the hold state) waits there
	}
	ms := moves(k)
	for changed := true; changed; {
		changed = false
		for _, a := range ms {
			if reach[a.To] || k.IsError(a.To) || k.IsGone(a.To) || !k.IsStatic(a.To) {
				continue
			}
			for _, s := range a.From {
				if reach[s] {
					reach[a.To], changed = true, true
					break
				}
			}
		}
	}
	if len(reach) < 2 {
		return nil
	}
	var out []string
	for _, s := range k.StaticStates() {
		// A state the system moves the object on from by itself (a cloudspace PAUSED until
		// self-healing resumes it) is not one to ask for.
		if lands, err := k.Lands(s, ""); reach[s] && err == nil && lands == s {
			out = append(out, s)
		}
	}
	return out
}

// timerTargets are the states timer actions take a new object to from where its create lands
// (a lease: PENDING → ACTIVE at start_date).
func timerTargets(k *lifecycle.Kind) []string {
	var out []string
	from := landing(k)
	for _, a := range k.AllActions() {
		if a.Actor == lifecycle.ActorTimer && slices.Contains(a.From, from) && a.To != "" && !slices.Contains(out, a.To) {
			out = append(out, a.To)
		}
	}
	return out
}

// homeStates are where an object of k is meant to be: the statuses users may ask for, where a
// create lands and what its timers lead to.
func homeStates(k *lifecycle.Kind) []string {
	out := append([]string{landing(k)}, userStatuses(k)...)
	return append(out, timerTargets(k)...)
}

// isRepair reports whether a is a repair: a user action that runs only from error states and
// takes the object back where it is meant to be (a cloudlet's fix: UpdateError → Ready).
func isRepair(k *lifecycle.Kind, a *lifecycle.Action) bool {
	return a.ByUser() && onlyFromErrors(k, a) && a.To != "" && slices.Contains(homeStates(k), a.To)
}

// heldStates are the error states a repair leaves: the provider leaves an object there for the
// user to run the repair, rather than replacing it or walking it on.
func heldStates(k *lifecycle.Kind) []string {
	var out []string
	for _, s := range k.States.Error {
		if len(repairActions(k, s)) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// childLists are the computed lists of the children k's create makes, one per child kind, in
// spec order; a kind whose family shows its members another way has none of those.
func childLists(k *lifecycle.Kind, cfg kindConfig) []relatedAttr {
	var out []relatedAttr
	members, _ := cfg.family.(withMembers)
	for _, c := range k.Children {
		if members != nil && members.memberKind() == c.Kind {
			continue
		}
		i := slices.IndexFunc(out, func(r relatedAttr) bool { return r.kind == c.Kind })
		if i < 0 {
			out = append(out, relatedAttr{kind: c.Kind})
			i = len(out) - 1
		}
		ra := &out[i]
		for key := range c.Spec {
			ra.fields = appendNew(ra.fields, key)
		}
		for key := range c.Copy {
			ra.fields = appendNew(ra.fields, key)
		}
		if c.Each != "" {
			ra.each = appendNew(ra.each, c.Each)
		}
	}
	for i := range out {
		slices.Sort(out[i].fields)
	}
	return out
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// relatedAttrsOf completes the child lists with what needs the child kinds (their collection,
// required fields and states); it runs where the registry is at hand.
func relatedAttrsOf(reg *lifecycle.Registry, k *lifecycle.Kind, cfg kindConfig) []relatedAttr {
	out := slices.Clone(cfg.related)
	for i := range out {
		ra := &out[i]
		ck, err := reg.Kind(ra.kind)
		if err != nil {
			continue
		}
		if len(ra.each) > 0 {
			for _, f := range ck.Fields {
				if f.Required {
					ra.fields = appendNew(ra.fields, f.Name)
				}
			}
			slices.Sort(ra.fields)
		}
		ra.attr = ck.Collection
		for _, f := range cfg.fields {
			if f.attr == ra.attr || f.field.Name == ra.attr {
				// A field of the same name (the list the children are made from, whatever
				// its blocks are called) keeps it: the list is <kind>_states, as a lease's
				// reservation_states beside its reservation blocks.
				ra.attr = ck.Name + "_states"
			}
		}
		order := "by name"
		if len(ra.each) > 0 {
			order = "in `" + strings.Join(ra.each, "`, `") + "` order"
		}
		fields := "ID, name, state (" + quoted(ck.StaticStates()) + ")"
		if len(ra.fields) > 0 {
			fields += " and " + strings.Join(ra.fields, ", ")
		}
		ra.description = fmt.Sprintf("The %s objects the %s's create makes, %s: %s.", ck.Name, k.Name, order, fields)
	}
	return out
}

// timeNotice explains a time-driven object that a timer took out of the states it is meant
// to be in (a lease that ended at its end_date): Terraform keeps it and plans no change, and
// says what gives a new one. "" when there is nothing to explain.
func timeNotice(k *lifecycle.Kind, o *client.Object) string {
	if o.Operation != nil || !k.IsStatic(o.State) || k.IsError(o.State) || slices.Contains(homeStates(k), o.State) {
		return ""
	}
	var by *lifecycle.Action
	for _, a := range k.AllActions() {
		if a.Actor == lifecycle.ActorTimer && a.At != "" && a.To == o.State {
			by = a
		}
	}
	if by == nil {
		return ""
	}
	return fmt.Sprintf("The %s reached its %s (%v) and is %s. %s", k.Name, by.At, o.Spec[by.At], o.State,
		advise(situation{k: k, event: evTimeEnded, state: o.State}).text)
}
