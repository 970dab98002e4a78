package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// One source for advice. Every message about an object's situation — the refresh warning, the
// plan's warning or error and the apply's error — says what Terraform does next and what the
// user runs with the text advise returns for that situation, so plan, apply and refresh cannot
// disagree. The callers add only the facts (the error, the failed members, since when).
// advise also gives each situation's row of the state-machine guide's recovery table
// (RecoveryTable), so the guide says what the messages say.

// event is what the provider advises about.
type event int

const (
	// evStatus: the configuration asks for a status the object is not in (a plan).
	evStatus event = iota + 1
	// evImmutable: an immutable field changed (Terraform's own "forces replacement").
	evImmutable
	// evField: a field that changes only in some states (field, back) changed while the
	// object is elsewhere.
	evField
	// evError: the object is in an error state (found by a refresh, a plan or a failed apply).
	evError
	// evTimeEnded: a time-driven object's timer took it to a state it stays in.
	evTimeEnded
	// evMembersFailed: some members of an object made of members failed; the object is kept.
	evMembersFailed
	// evCreateFailed: a create failed or timed out (timedOut); Terraform taints the resource.
	evCreateFailed
	// evCreateInterrupted: a create interrupted (Ctrl-C) while the object was healthy.
	evCreateInterrupted
	// evStuck: a transition overran its due time.
	evStuck
	// evUndeletable: an object of a kind with no deletion mode is destroyed.
	evUndeletable
	// evLiveChildren: an object whose live children refuse its deletion is destroyed (atPlan:
	// the plan warns; otherwise the apply refuses).
	evLiveChildren
	// evBlocking: the object, in state, blocks a change of a related object (a child, a
	// descendant) that needs it in one of need.
	evBlocking
	// evInUse: an object that others name in a link refusing its deletion (`delete: refuse`)
	// is destroyed or replaced, and the simulator refuses it, naming them (deps).
	evInUse
)

// row is a situation of the recovery table, in the table's order.
type row int

const (
	rowNone row = iota
	rowNoRoute
	rowUnreachable
	rowImmutable
	rowFieldNoReturn
	rowFieldReturn
	rowErrorReplaced
	rowErrorHeld
	rowErrorRoute
	rowTimeEnded
	rowTimeError
	rowMembersPartly
	rowMembersAll
	rowCreateFailed
	rowCreateInterrupted
	rowStuck
	rowUndeletable
	rowLiveChildren
	rowBlocking
	rowInUse
	rowCount // not a row: the number of rows + 1
)

// situation is what the provider knows when it advises: the resource's kind (as the typed
// resource derives it), where the object is (or settles), what the configuration asks, and
// what happened.
type situation struct {
	c     kindConfig
	k     *lifecycle.Kind
	event event
	// state is the state the object is in, or settles in.
	state string
	// asked is the status the configuration asks for ("" when it asks none).
	asked string
	// field and back: the field whose change needs other states, and those of them a route
	// leads back to (evField; none: only a new object takes the change).
	field string
	back  []string
	// unapplied: a failed update left values the object has not applied (status.unapplied).
	unapplied bool
	// isNew: the object is still to be made (a plan without a prior state): no replacement
	// can help it.
	isNew bool
	// timedOut: the create ran out of time rather than failing (evCreateFailed).
	timedOut bool
	// allMembers: every member failed (evCreateFailed of an object made of members).
	allMembers bool
	// atPlan: the advice is the plan's (evLiveChildren, evInUse).
	atPlan bool
	// need are the states a related object's change needs this one in (evBlocking).
	need []string
	// deps are the objects a removal was refused for (evLiveChildren at apply, evInUse).
	deps []client.Dependent
}

// advice is what advise says about a situation.
type advice struct {
	row row
	// text is the advice a message carries after its facts ("" when there is none).
	text string
	// does and run are the recovery table's columns: what Terraform does and what the user
	// runs.
	does, run string
	// actions are the kind's actions the advice names (a route, a repair).
	actions []string
}

// advise says what Terraform does next in the situation s and what the user runs.
func advise(s situation) advice {
	k, c := s.k, s.c
	switch s.event {
	case evStatus:
		if s.asked == "" || s.asked == s.state {
			return advice{}
		}
		if route, err := k.Route(s.state, "", s.asked, false); err == nil {
			return advice{actions: route.Actions()}
		}
		if s.isNew || !newObjectReaches(k, s.asked) {
			return advice{row: rowUnreachable, text: "Choose one of them.",
				does: "The plan fails: `Impossible status change`, naming the reachable states", run: "Choose one of them"}
		}
		keep := ""
		if c.hasStatus() && slices.ContainsFunc(k.Reachable(s.state, false), func(st string) bool { return !k.IsGone(st) }) {
			keep = "To keep this one, ask for one of the states reachable from " + s.state + "."
		}
		return advice{row: rowNoRoute, text: replaceText(keep),
			does: "The plan replaces the object, warning `will be replaced` with the states reachable instead",
			run:  "`terraform apply` (or `-replace`); to keep it, ask for a reachable status"}
	case evImmutable:
		return advice{row: rowImmutable, does: "The plan replaces the object (`forces replacement`)",
			run: "`terraform apply` (or `-replace`)"}
	case evField:
		if len(s.back) == 0 {
			return advice{row: rowFieldNoReturn, text: replaceText(keepByReverting),
				does: "The plan replaces the object with a warning", run: "`terraform apply` (or `-replace` with the new values)"}
		}
		a := advice{row: rowFieldReturn, does: "The plan fails naming the status to set first"}
		switch {
		case c.hasStatus():
			a.text = fmt.Sprintf("Set its status to %s and apply that first; then change it in another apply.", strings.Join(s.back, " or "))
			a.run = "Set `status`, apply, then change the field"
		case slices.Contains(c.holds, s.state):
			held := advise(situation{c: c, k: k, event: evError, state: s.state})
			a.text, a.actions = held.text, held.actions
			a.does, a.run = "The plan fails naming the repair", held.run
		default:
			a.text = fmt.Sprintf("It can change once the %s is %s again; until then the plan refuses the change.", k.Name, strings.Join(s.back, " or "))
			a.does, a.run = "The plan fails naming the states it needs", "Wait until the object is back there, then `terraform apply`"
		}
		return a
	case evError:
		return adviseError(s)
	case evTimeEnded:
		times := timerFields(k)
		return advice{row: rowTimeEnded,
			text: fmt.Sprintf("Terraform keeps it in the state as it is, and plans no change. A %s in %s cannot change: to get "+
				"a new one, give it a new %s; the plan then replaces it (terraform apply -replace=ADDRESS with the new "+
				"values does the same). Or remove it.", k.Name, s.state, strings.Join(times, " and ")),
			does: fmt.Sprintf("Refresh warning: give it a new %s. No change is planned; a new %s plans its replacement",
				strings.Join(times, " and "), strings.Join(times, " and ")),
			run: fmt.Sprintf("New %s and `terraform apply` (or `-replace`), or remove it", codeList(times))}
	case evMembersFailed:
		return adviseMembers(s)
	case evCreateFailed:
		return adviseCreateFailed(s)
	case evCreateInterrupted:
		return advice{row: rowCreateInterrupted,
			text: "It is kept in the state and not tainted: the next terraform apply waits for it and carries on from where " +
				"it is (it is not replaced).",
			does: "A warning; the object stays in the state, untainted", run: "`terraform apply` waits for it and carries on"}
	case evStuck:
		return advice{row: rowStuck,
			text: "What to do: wait for the simulator's self-healing (it repairs transitions stuck longer than its heal_after, " +
				"10m by default), look for a fault rule that hangs it (GET /v1/sim/faults), then run terraform apply again: " +
				"it waits for the object to be static before it changes anything.",
			does: "Refresh warning `is stuck`, since when and what to do",
			run:  "Wait for self-healing, remove a hanging fault rule, then `terraform apply`"}
	case evUndeletable:
		return advice{row: rowUndeletable,
			text: fmt.Sprintf("The %s kind declares no deletion modes (no `deletion:` in its spec), so no action removes its "+
				"objects. terraform destroy, or removing the resource from the configuration, only removes the object from the "+
				"Terraform state: it stays in the simulator (until POST /v1/sim/reset). To make %s objects removable, give the "+
				"kind a deletion mode naming the action that removes them, for example `deletion: {destroy: [ACTION]}`, and "+
				"restart the simulator with the kinds file.", k.Name, k.Name),
			does: "A warning at plan and at destroy: Terraform forgets the object, which stays in the simulator",
			run:  "Give the kind a `deletion:` mode and restart the simulator, or `POST /v1/sim/reset`"}
	case evBlocking:
		return adviseBlocking(s)
	case evLiveChildren:
		a := advice{row: rowLiveChildren,
			does: "The plan warns, naming the children it does not destroy; the apply waits for children being deleted, and " +
				"refuses before deleting anything while others remain, naming them",
			run: "Delete those children first (or `terraform state rm` the parent); children this configuration manages: " +
				"refer to the parent's `id`, not its ID written out. Then the same command again"}
		if s.atPlan {
			a.text = fmt.Sprintf("Terraform destroys the ones this configuration manages first. If others remain when the %s's "+
				"turn comes, the apply refuses to delete it, naming them: delete them first (or remove the %s from this "+
				"configuration with terraform state rm).", k.Name, k.Name)
		} else {
			a.text = dependentsAdvice(k.Name, s.deps)
		}
		return a
	case evInUse:
		a := advice{row: rowInUse, text: dependentsAdvice(k.Name, s.deps),
			does: "A destroy's plan warns, naming the objects it does not destroy; the apply waits for those being deleted, " +
				"and fails naming the others and their field, deleting nothing",
			run: "Objects this configuration manages: refer to its `id`, not the ID written out; when replacing it, " +
				"`create_before_destroy`. Others: delete them (or, where the field can change, make them name another) first. " +
				"Then the same command again"}
		if s.atPlan {
			a.text = fmt.Sprintf("Terraform destroys first the ones this configuration manages that refer to the %s's id. If "+
				"others remain when the %s's turn comes, the apply refuses to delete it, naming them: delete them (or, where "+
				"their field can change, make them name another %s) first.", k.Name, k.Name, k.Name)
		}
		return a
	}
	return advice{}
}

// dependentsAdvice is what to do about a removal of an object of kind refused for the objects
// that depend on it (a refusal's details.dependents, or the apply's own look at its live
// children): nothing was deleted; each of them named with the field that names the object;
// and the ways out that work. A reference instead of the ID written out makes Terraform
// remove (or change) them first; create_before_destroy makes a replacement move them to the
// new object first (a link: a child cannot change parent); anything else must go first.
func dependentsAdvice(kind string, deps []client.Dependent) string {
	var children, linkers []client.Dependent
	var fields []string
	for _, d := range deps {
		if d.Via == client.ViaParent {
			children = append(children, d)
			fields = appendNew(fields, kind+"_id (parent_id in lifecycle_object)")
			continue
		}
		linkers = append(linkers, d)
		fields = appendNew(fields, d.Via+" (its spec key in lifecycle_object)")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The %s was not deleted: ", kind)
	if len(children) > 0 {
		fmt.Fprintf(&b, "a %s is deleted only after its children are gone, and these remain: %s. ", kind, dependentList(children))
	}
	if len(linkers) > 0 {
		fmt.Fprintf(&b, "a %s is not deleted while objects name it through a link that refuses it, and these do: %s. ", kind,
			dependentList(linkers))
	}
	attrs := strings.Join(fields, " or ")
	fmt.Fprintf(&b, "If this configuration manages them, set their %s to a reference to this resource's id, such as "+
		"lifecycle_%s.NAME.id, not the ID written out: Terraform then destroys or changes them before the %s.", attrs, kind, kind)
	if len(linkers) > 0 {
		fmt.Fprintf(&b, " When Terraform replaces the %s, also add `lifecycle { create_before_destroy = true }` to its "+
			"resource, so that they move to the new %s before the old one is deleted.", kind, kind)
	}
	b.WriteString(" If it does not manage them, delete them first")
	if len(linkers) > 0 {
		fmt.Fprintf(&b, " (or, where their field can change, make them name another %s)", kind)
	}
	b.WriteString(". Then run the same terraform command again.")
	return b.String()
}

// dependentList names the objects a removal waits for: kind, ID, name and state, and the field
// that names the object unless they are its children.
func dependentList(deps []client.Dependent) string {
	out := make([]string, len(deps))
	for i, d := range deps {
		out[i] = fmt.Sprintf("%s %s (%q, %s)", d.Kind, d.ID, d.Name, d.State)
		if d.Via != client.ViaParent {
			out[i] += " by its " + d.Via
		}
	}
	return strings.Join(out, ", ")
}

// adviseError is advise for an object in an error state: the provider leaves a held state for
// its repair, a time-driven kind for a replacement, and otherwise walks the object back or
// replaces it.
func adviseError(s situation) advice {
	k, c, state, desired := s.k, s.c, s.state, s.asked
	if slices.Contains(c.holds, state) {
		// heldStates holds only states a repair leaves.
		repairs := repairActions(k, state)
		text := fmt.Sprintf("The provider leaves the %s in %s for you to repair: run its %s, then apply again. Changes "+
			"that need it elsewhere fail until then.", k.Name, state, c.repairHow(k, state))
		if s.unapplied && k.Update != "" {
			text += fmt.Sprintf(" Its failed %s was not applied: once the %s is repaired, the next plan shows it again "+
				"and that apply retries it.", k.Update, k.Name)
		}
		return advice{row: rowErrorHeld, text: text, actions: repairs,
			does: fmt.Sprintf("Refresh warning: left for you to repair with %s. The plan changes nothing; a change that "+
				"needs it elsewhere fails naming the repair; the failed apply's error said the same. A failed update "+
				"is not applied: once repaired, the next plan shows it again and its apply retries it", quoted(repairs)),
			run: fmt.Sprintf("Apply a `lifecycle_action` with `action = %q` (or, on Terraform %s+, `terraform apply "+
				"-invoke` of an `action` block), then `terraform apply`", repairs[0], queryVersion)}
	}
	if c.timeDriven {
		// Time drives the kind: nothing walks it out; a new one starts over.
		return advice{row: rowTimeError,
			text: "Terraform keeps it in the state and plans no change: replace it with terraform apply -replace=ADDRESS, or remove it.",
			does: "Refresh warning: replace it. No change is planned", run: "`terraform apply -replace=ADDRESS`, or remove it"}
	}
	if desired == "" || desired == state {
		return advice{}
	}
	if route, err := k.Route(state, "", desired, false); err == nil {
		return advice{row: rowErrorRoute, actions: route.Actions(),
			text: fmt.Sprintf("The next terraform apply brings it back to %s: it runs %s.", desired, strings.Join(route.Actions(), ", then ")),
			does: fmt.Sprintf("Refresh warning: the next apply brings it back to %s by running %s. The plan is an in-place update",
				desired, quoted(route.Actions())),
			run: "Fix the cause, then `terraform apply`"}
	}
	if newObjectReaches(k, desired) {
		return advice{row: rowErrorReplaced,
			text: fmt.Sprintf("No action leads from %s to %s, so the next terraform apply replaces the %s (the plan "+
				"shows the replacement and why).", state, desired, k.Name),
			does: fmt.Sprintf("Refresh warning: no action leads from %s to %s, the next apply replaces it. The plan "+
				"replaces it; the failed apply's error said the same", state, desired),
			run: "`terraform apply` (or `-replace`), with or without a configuration change"}
	}
	return advice{row: rowUnreachable, text: fmt.Sprintf("No action leads from %s to %s.", state, desired),
		does: "The plan fails: `Impossible status change`, naming the reachable states", run: "Choose one of them"}
}

// adviseBlocking is advise for an object (of kind s.k, in s.state) that a related object's
// change needs in one of s.need: a repair, its own status first, or the system's doing.
func adviseBlocking(s situation) advice {
	k, c, need := s.k, s.c, strings.Join(s.need, " or ")
	a := advice{row: rowBlocking, does: "The apply fails naming the blocking object, its state and the states it must be in"}
	switch {
	case slices.Contains(c.holds, s.state):
		a.actions = repairActions(k, s.state)
		a.text = fmt.Sprintf("The %s is in %s, an error state that only a repair leaves: run its %s. Once it is %s again, "+
			"apply again.", k.Name, s.state, c.repairHow(k, s.state), need)
		a.run = "Repair it (its repair action), then `terraform apply`"
	case k.IsError(s.state):
		a.text = fmt.Sprintf("The %s is in %s, an error state that only a repair leaves (actions allowed from %s: %s). "+
			"Once it is %s again, apply again.", k.Name, s.state, s.state, listOr(k.Allowed(s.state, false), "none"), need)
		a.run = "Repair or replace it, then `terraform apply`"
	case c.hasStatus():
		a.text = fmt.Sprintf("Change the %s's status to %s first (in the same configuration, the %s's resource), then "+
			"apply again.", k.Name, need, k.Name)
		a.run = "Set its `status` first, then `terraform apply`"
	default:
		a.text = fmt.Sprintf("The %s has no status to ask for: it gets back to %s by the system's doing (or its own "+
			"resource's apply). Once it is %s again, apply again.", k.Name, need, need)
		a.run = "Wait until it is back there, then `terraform apply`"
	}
	return a
}

// adviseMembers is advise for an object some of whose members failed: it is kept, and the next
// apply updates it in place from where its working members stand (s.state, "" when not known
// yet). The apply's warning and the refresh's say the same.
func adviseMembers(s situation) advice {
	members, ok := s.c.members()
	if !ok {
		return advice{}
	}
	sm, ok := members.(specMembers)
	if !ok {
		return advice{}
	}
	a := sm.shortfall(s.state)
	if s.state == "" {
		return a
	}
	if more := adviseError(situation{c: s.c, k: s.k, event: evError, state: s.state, asked: s.asked}); more.text != "" && !s.k.IsError(s.state) {
		a.text += " " + strings.Replace(more.text, "The next terraform apply", "Then it", 1)
		a.actions = append(a.actions, more.actions...)
	}
	return a
}

// shortfall is the advice about an object of m.parent some of whose members failed, kept with
// its working members; from is where they stand ("" when not known).
func (m specMembers) shortfall(from string) advice {
	shown := m.listAttr
	if m.status != nil {
		shown = strings.Join(append(attrNames(m.status.computed[:min(2, len(m.status.computed))]), m.listAttr), ", ")
	}
	repair := "removes"
	a := advice{row: rowMembersPartly, run: "`terraform apply`"}
	if m.repairAction != "" {
		repair = "runs " + m.repairAction + " on"
		a.actions = []string{m.repairAction}
	}
	where := ""
	if from != "" {
		where = fmt.Sprintf(", from where its working members stand (%s)", from)
	}
	a.text = fmt.Sprintf("The %s is kept and not tainted, so its working %s objects stay. Its %s show the shortfall, and "+
		"the next terraform apply updates the %s in place (the plan shows the update): it %s the failed ones and "+
		"provisions replacements up to each %s's %s%s.", m.parent, m.kind, shown, m.parent, repair, m.group, m.count, where)
	a.does = fmt.Sprintf("The apply succeeds with a warning naming each failed %s and its recorded message; %s show the "+
		"shortfall. The next plan is an in-place update that %s the failed ones and provisions replacements", m.kind,
		quoted(strings.Split(shown, ", ")), repair)
	return a
}

// adviseCreateFailed is advise for a create that failed or timed out: Terraform taints the
// resource, so the next apply replaces the object unless it is untainted.
func adviseCreateFailed(s situation) advice {
	k, c := s.k, s.c
	switch {
	case s.allMembers:
		return advice{row: rowMembersAll,
			text: "Terraform marks it tainted: the next apply replaces it (terraform untaint ADDRESS keeps it instead).",
			does: "The create fails (tainted), naming each member's message", run: "`terraform apply` replaces it"}
	case s.timedOut:
		return advice{row: rowCreateFailed,
			text: fmt.Sprintf("Terraform marks a resource whose create fails as tainted: the next apply destroys this %s "+
				"and creates a new one. The transition may still finish: to keep the %s instead, run "+
				"terraform untaint ADDRESS (the resource's address), then apply again; it waits for the %s and "+
				"carries on. To give creates more time, raise timeouts.create.", k.Name, k.Name, k.Name),
			does: createFailedDoes, run: createFailedRun}
	case slices.Contains(c.holds, s.state):
		// Tainted: the repair alone would not keep it (the next apply replaces it). Untaint
		// first, then repair, then apply.
		repairs := repairActions(k, s.state)
		return advice{row: rowCreateFailed, actions: repairs,
			text: fmt.Sprintf("Terraform marks a resource whose create fails as tainted: the next apply would destroy this %s "+
				"and create a new one. To keep it and repair it instead:\n"+
				"1. run terraform untaint ADDRESS (the resource's address);\n"+
				"2. run its %s;\n"+
				"3. apply again: the %s is kept, with the same ID.", k.Name, c.repairHow(k, s.state), k.Name),
			does: createFailedDoes, run: createFailedRun + "; an object left for a repair: untaint, repair, apply"}
	}
	return advice{row: rowCreateFailed,
		text: "Terraform marks it tainted: the next apply replaces it (terraform untaint ADDRESS keeps it instead).",
		does: createFailedDoes, run: createFailedRun}
}

const (
	createFailedDoes = "The apply fails; Terraform taints the object and the next apply replaces it"
	createFailedRun  = "`terraform apply`, or `terraform untaint ADDRESS` to keep it and let the next apply carry on"
)

// replaceText is what a plan that replaces the object says after why; keep says how to keep it.
func replaceText(keep string) string {
	return strings.TrimSpace("The plan replaces it: terraform apply removes this one and makes a new one (terraform apply " +
		"-replace=ADDRESS does the same). " + keep)
}

// keepByReverting is what a user does to keep an object whose configuration change needs a new one.
const keepByReverting = "To keep this one instead, change the configuration back."

// timerFields are the spec fields whose times drive k's timers (a lease's start_date, end_date).
func timerFields(k *lifecycle.Kind) []string {
	var times []string
	for _, a := range k.AllActions() {
		if a.Actor == lifecycle.ActorTimer && a.At != "" {
			times = appendNew(times, a.At)
		}
	}
	return times
}

// codeList joins names as code, with "and".
func codeList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "`" + x + "`"
	}
	return strings.Join(q, " and ")
}

// hasMembers reports whether c's kind is made of members (an MCI of VMs).
func hasMembers(c kindConfig) bool {
	_, ok := c.members()
	return ok
}

// repairActions are the user actions that take an object out of the error state state to a
// static state that is not an error (a cloudlet's fix).
func repairActions(k *lifecycle.Kind, state string) []string {
	var out []string
	for _, name := range k.Allowed(state, false) {
		a, ok := k.Action(name)
		if ok && isRepair(k, a) {
			out = append(out, name)
		}
	}
	return out
}

// objectAdvice is the advice about the object o of the refreshed model m, from the decision
// the plan makes: an object made of members whose failed members the next apply repairs
// (an MCI whose dominant status is Failed after a partly failed scale) is updated in place
// from where its working members stand, not replaced.
func (r *kindResource) objectAdvice(k *lifecycle.Kind, m *objectModel, o *client.Object, desired string) string {
	if members, ok := r.cfg.members(); ok && m != nil {
		// The same call the plan makes (resource_plan.go), on the state the refresh wrote.
		from, _, converge := members.plan(m, m, o.State)
		if converge && from != o.State {
			return advise(situation{c: r.cfg, k: k, event: evMembersFailed, state: from, asked: desired}).text
		}
	}
	_, unapplied := o.Status[client.StatusUnapplied]
	return advise(situation{c: r.cfg, k: k, event: evError, state: o.State, asked: desired, unapplied: unapplied}).text
}

// repairHow names the repair actions of an object of kind k in the error state state and the
// two ways Terraform runs the first: the lifecycle_action resource (every Terraform) and the
// kind's action block (Terraform 1.14+).
func (c kindConfig) repairHow(k *lifecycle.Kind, state string) string {
	repairs := repairActions(k, state)
	how := fmt.Sprintf("%s action from Terraform (a lifecycle_action resource with kind = %q and action = %q", quoted(repairs),
		k.Name, repairs[0])
	if c.typeName != "" {
		how += fmt.Sprintf(", or on Terraform %s+ an action block of type lifecycle_%s with action = %q, run by "+
			"terraform apply -invoke=action.lifecycle_%s.NAME", queryVersion, c.typeName, repairs[0], c.typeName)
	}
	return how + ")"
}

// failedCreateError is a create that ended in an error state (not a timeout): the resource is
// tainted, and the advice says how to keep the object.
type failedCreateError struct{ err error }

func (e *failedCreateError) Error() string { return e.err.Error() }

func (e *failedCreateError) Unwrap() error { return e.err }

// failureText is what an object in an error state records about its failure: its last error,
// or, for an object made of members, its failed members' ("" when neither says anything).
func (r *kindResource) failureText(ctx context.Context, o *client.Object) string {
	if le := lastError(o); le != "" {
		return le
	}
	if fd, ok := r.cfg.family.(failureDescriber); ok && r.data != nil {
		return fd.failures(ctx, r.data, o)
	}
	return ""
}

// failureDescriber is a memberHooks that can name what failed among an object's members.
type failureDescriber interface {
	failures(ctx context.Context, d *providerData, o *client.Object) string
}
