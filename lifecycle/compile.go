package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// reservedCollections are the segments the API's router serves under /v1 itself: a kind
// named after one would be shadowed (GET /v1/kinds/{id} answers a kind spec, not the object)
// or sit in the simulator's control namespace (/v1/sim/...).
var reservedCollections = []string{"kinds", "sim"}

// collectionProblem says why the API cannot route a collection name, with the fix, or "".
// Go's client escapes every name, but the router refuses an escaped / or ; and anyone who
// writes the URL by hand (curl, a browser, another language's client) cannot use ?, #, %,
// blanks, or the dot segments . and .. that URL resolution removes.
func collectionProblem(coll string) string {
	if slices.Contains(reservedCollections, coll) {
		return fmt.Sprintf("collection %q is a route of the API itself (/v1/%s): choose another URL path segment, such as %ss",
			coll, coll, strings.TrimSuffix(coll, "s")+"_object")
	}
	if coll == "." || coll == ".." {
		return fmt.Sprintf("collection %q is a dot segment, which URL resolution removes from a path: choose a name such as gadgets", coll)
	}
	if i := strings.IndexFunc(coll, func(r rune) bool {
		return strings.ContainsRune("/?#%;\\", r) || unicode.IsSpace(r) || unicode.IsControl(r)
	}); i >= 0 {
		fixed := strings.Map(func(r rune) rune {
			if strings.ContainsRune("/?#%;\\", r) || unicode.IsSpace(r) || unicode.IsControl(r) {
				return '_'
			}
			return r
		}, coll)
		return fmt.Sprintf("collection %q cannot be routed: it is one segment of the URL /v1/{collection}/{id}, and %q splits or ends it; use letters, digits, - and _ (such as %q)",
			coll, string([]rune(coll[i:])[0]), fixed)
	}
	return ""
}

// Compile validates a kind built in Go or decoded from JSON (GET /v1/kinds) and builds its
// lookups. Kinds from Parse are already compiled.
func (k *Kind) Compile() error {
	if k.file == "" {
		k.file = "kind " + k.Name
	}
	k.loc = locator{file: k.file, kind: k.Name}
	if errs := k.compile(k.loc); len(errs) > 0 {
		return errs
	}
	return nil
}

// compile validates a kind on its own and builds its lookups.
func (k *Kind) compile(l locator) SpecErrors {
	var errs SpecErrors
	add := func(field, format string, args ...any) { errs = append(errs, l.err(field, format, args...)) }

	if k.Name == "" {
		add("name", "missing kind name")
	}
	if k.Collection == "" {
		add("collection", "missing collection (the URL path segment, e.g. machines)")
	} else if msg := collectionProblem(k.Collection); msg != "" {
		add("collection", "%s", msg)
	}
	// Final, error and gone states are static: a state listed there and nowhere else is
	// added to the static ones (listing it twice is allowed, never needed).
	implied := map[string]string{}
	for _, group := range []struct {
		name   string
		states []string
	}{{"final", k.States.Final}, {"error", k.States.Error}, {"gone", k.States.Gone}} {
		for i, s := range group.states {
			if !slices.Contains(k.States.Static, s) && !slices.Contains(k.States.Transition, s) {
				k.States.Static = append(k.States.Static, s)
				implied[s] = fmt.Sprintf("states.%s[%d]", group.name, i)
			}
		}
	}
	if len(k.States.Static) == 0 {
		add("states.static", "a kind needs at least one static state: write `states: {static: [A, B]}`")
	}
	k.kinds = map[string]stateKind{}
	for i, s := range k.States.Static {
		if k.kinds[s] != 0 {
			add(fmt.Sprintf("states.static[%d]", i), "duplicate state %q", s)
		}
		k.kinds[s] = stateStatic
	}
	for i, s := range k.States.Transition {
		if k.kinds[s] != 0 {
			add(fmt.Sprintf("states.transition[%d]", i), "duplicate state %q", s)
		}
		k.kinds[s] = stateTransition
	}
	staticRef := func(field, s string) {
		switch k.kinds[s] {
		case stateStatic:
		case stateTransition:
			add(field, "%q is a transition state; a static state is needed here", s)
		default:
			add(field, "unknown state %q%s; static states are %s", s, didYouMean(s, k.States.Static), listOrNone(k.States.Static))
		}
	}
	transRef := func(field, s string) {
		switch k.kinds[s] {
		case stateTransition:
		case stateStatic:
			add(field, "%q is a static state; a phase must be a transition state (list it under `states.transition`)", s)
		default:
			add(field, "unknown state %q%s; transition states are %s (list a new one under `states.transition`)", s, didYouMean(s, k.States.Transition), listOrNone(k.States.Transition))
		}
	}
	for _, group := range []struct {
		name   string
		states []string
	}{{"final", k.States.Final}, {"error", k.States.Error}, {"gone", k.States.Gone}} {
		for i, s := range group.states {
			staticRef(fmt.Sprintf("states.%s[%d]", group.name, i), s)
		}
	}
	if k.Initial != "" {
		staticRef("initial", k.Initial)
	}

	checkPhases := func(field string, via []Phase) {
		for i, p := range via {
			f := fmt.Sprintf("%s[%d]", field, i)
			transRef(f, p.State)
			if p.Actor != "" && !slices.Contains(validActors, p.Actor) {
				add(f+".actor", "unknown actor %q%s; actors are %s", p.Actor, didYouMean(string(p.Actor), actorNames()), actorList())
			}
		}
	}
	checkFailure := func(field string, f *Failure, hasOrigin bool) {
		checkPhases(field+".via", f.Via)
		switch {
		case f.Rollback && f.To != "":
			add(field, "a failure either rolls back or goes to a state, not both")
		case f.Rollback && !hasOrigin:
			add(field, "the create action starts from nothing, so its failure cannot roll back: give the create `failure: {to: <static state>}` (an error state, say), or give the kind an `initial:` state for the create to start from and roll back to")
		case f.To != "":
			staticRef(field+".to", f.To)
		case !f.Rollback && !f.Retry:
			add(field, "a failure needs `rollback: true`, `retry: true` or a `to` state")
		}
		if f.Fatal != "" {
			staticRef(field+".fatal", f.Fatal)
		}
	}
	if k.Failure.Rollback || k.Failure.To != "" || k.Failure.Retry || len(k.Failure.Via) > 0 || k.Failure.Fatal != "" {
		checkFailure("failure", &k.Failure, true)
	}

	if k.Create.Name == "" {
		k.Create.Name = "create"
	}
	if k.Initial != "" && len(k.Create.From) == 0 {
		k.Create.From = []string{k.Initial}
	}
	k.compileHold(add, staticRef)
	k.actions = map[string]*Action{}
	for i, a := range k.AllActions() {
		field := "create"
		if i > 0 {
			field = fmt.Sprintf("actions[%d]", i-1)
		}
		if a.Name == "" {
			add(field+".name", "missing action name")
		} else if k.actions[a.Name] != nil {
			add(field+".name", "duplicate action %q", a.Name)
		}
		k.actions[a.Name] = a
		if a.Actor != "" && !slices.Contains(validActors, a.Actor) {
			add(field+".actor", "unknown actor %q%s; actors are %s", a.Actor, didYouMean(string(a.Actor), actorNames()), actorList())
		}
		if i > 0 && len(a.From) == 0 && len(a.ForceFrom) == 0 && !a.FromAny {
			add(field+".from", "action %q has no `from` states (or `from_any: true`)", a.Name)
		}
		for j, s := range a.From {
			staticRef(fmt.Sprintf("%s.from[%d]", field, j), s)
		}
		for j, s := range a.ForceFrom {
			staticRef(fmt.Sprintf("%s.force_from[%d]", field, j), s)
		}
		checkPhases(field+".via", a.Via)
		switch {
		case a.Returns && a.To != "":
			add(field, "action %q both returns and names a `to` state", a.Name)
		case a.Returns && i == 0:
			add(field, "a create action cannot return to where it started")
		case a.Returns && a.FromAny:
			add(field, "action %q returns but may start from transition states", a.Name)
		case !a.Returns && a.To == "":
			add(field+".to", "action %q needs a `to` static state or `returns: true`", a.Name)
		case a.To != "":
			staticRef(field+".to", a.To)
		}
		if a.Failure != nil {
			checkFailure(field+".failure", a.Failure, i > 0 || k.Initial != "")
		} else if len(a.Via) > 0 && !(k.Failure.Rollback || k.Failure.To != "" || k.Failure.Retry) {
			add(field+".failure", "action %q passes through transition states, so it can fail, but neither it nor the kind says what a failure does: give the kind `failure: {rollback: true}` (back to where the action started) or `failure: {to: <static state>}`", a.Name)
		} else if i == 0 && k.Initial == "" && k.Failure.Rollback && len(a.Via) > 0 {
			add(field+".failure", "the create action starts from nothing, so the kind's `failure: {rollback: true}` cannot apply to it: give the create `failure: {to: <static state>}` (an error state, say), or give the kind an `initial:` state for the create to start from and roll back to")
		}
		if a.After > 0 && a.ByUser() {
			add(field+".after", "only system actions start automatically after a delay")
		}
		if a.At != "" && a.Actor != ActorTimer {
			add(field+".at", "only timer actions start at a time")
		}
		if a.Actor == ActorTimer && a.At == "" {
			add(field+".at", "timer action %q needs `at`: the field holding its start time", a.Name)
		}
		if len(a.Where) > 0 && a.At == "" && a.After == 0 {
			add(field+".where", "`where` limits an action that starts by itself (`at` or `after`) to some objects; action %q starts only when asked, so drop `where`", a.Name)
		}
		for f := range a.Where {
			if _, ok := k.Field(f); !ok && len(k.Fields) > 0 {
				add(field+".where."+f, "%q is not a field of %s%s", f, k.Name, didYouMean(f, k.fieldNames()))
			}
		}
	}
	if k.ForceAny {
		for _, a := range k.Actions {
			if !a.ByUser() || a.FromAny {
				continue
			}
			ai := k.actions[a.Name]
			ai.forced = nil
			for _, st := range k.States.Static {
				// A held create is left only by the hold's own actions: force skips status
				// checks, and a held object has no children to check.
				if !k.IsGone(st) && !k.IsFinal(st) && !k.IsHeld(st) && !slices.Contains(a.From, st) && !slices.Contains(a.ForceFrom, st) {
					ai.forced = append(ai.forced, st)
				}
			}
		}
	}
	for mode, names := range k.Deletion {
		if mode != "delete" && mode != "destroy" {
			add("deletion."+mode, "unknown deletion mode %q%s; modes are delete (to the recycle bin) and destroy (permanent)", mode, didYouMean(mode, []string{"delete", "destroy"}))
		}
		for i, n := range names {
			if k.actions[n] == nil {
				add(fmt.Sprintf("deletion.%s[%d]", mode, i), "unknown action %q%s", n, didYouMean(n, k.actionNames()))
			}
		}
	}
	if k.Update != "" && k.actions[k.Update] == nil {
		add("update", "unknown action %q%s", k.Update, didYouMean(k.Update, k.actionNames()))
	}
	k.compileRelations(add)
	if len(errs) > 0 {
		return errs
	}
	return k.checkGraph(l, implied)
}

// checkGraph finds transition states no action passes through and states nothing reaches.
// implied maps the static states that were listed only as final, error or gone states to
// where they were listed.
func (k *Kind) checkGraph(l locator, implied map[string]string) SpecErrors {
	var errs SpecErrors
	used := map[string]bool{}
	for _, a := range k.AllActions() {
		for _, p := range a.Via {
			used[p.State] = true
		}
		for _, p := range k.FailureRule(a).Via {
			used[p.State] = true
		}
	}
	for i, s := range k.States.Transition {
		if !used[s] {
			errs = append(errs, l.err(fmt.Sprintf("states.transition[%d]", i),
				"transition state %q has no exit: no action passes through it", s))
		}
	}

	reached := map[string]bool{}
	var queue []string
	visit := func(s string) {
		if s != "" && !reached[s] {
			reached[s] = true
			queue = append(queue, s)
		}
	}
	if k.Initial != "" {
		visit(k.Initial)
	} else {
		k.walkAction(&k.Create, "", visit)
	}
	visit(k.Hold) // a held create starts there
	if k.Derive != nil && k.Derive.State {
		// Any static state may be derived from the related objects.
		for _, s := range k.States.Static {
			visit(s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, a := range k.AllActions() {
			if ok, _ := a.AllowedFrom(s); ok {
				k.walkAction(a, s, visit)
			}
		}
	}
	for i, s := range k.States.Static {
		if reached[s] {
			continue
		}
		if at, ok := implied[s]; ok {
			others := slices.DeleteFunc(k.allStates(), func(o string) bool { return o == s })
			errs = append(errs, l.err(at, "state %q is unreachable from the create action%s: no action or failure lands in it (name it as an action's `to` or a failure's `to`)", s, didYouMean(s, others)))
			continue
		}
		errs = append(errs, l.err(fmt.Sprintf("states.static[%d]", i), "state %q is unreachable from the create action: no action or failure lands in it (name it as an action's `to` or a failure's `to`, or remove it)", s))
	}
	return errs
}

// walkAction visits every state an action started from `from` can pass through or land in.
func (k *Kind) walkAction(a *Action, from string, visit func(string)) {
	for _, p := range a.Via {
		visit(p.State)
	}
	if a.Returns {
		visit(from)
	} else {
		visit(a.To)
	}
	f := k.FailureRule(a)
	if len(a.Via) == 0 {
		return // instant moves cannot fail
	}
	for _, p := range f.Via {
		visit(p.State)
	}
	switch {
	case f.Rollback:
		visit(from)
	case f.To != "":
		visit(f.To)
	}
	if f.Fatal != "" {
		visit(f.Fatal)
	}
}

func actorList() string { return strings.Join(actorNames(), ", ") }

func actorNames() []string {
	out := make([]string, len(validActors))
	for i, a := range validActors {
		out[i] = string(a)
	}
	return out
}

// actionNames lists the kind's action names, the create action first.
func (k *Kind) actionNames() []string {
	out := make([]string, 0, len(k.Actions)+1)
	for _, a := range k.AllActions() {
		out = append(out, a.Name)
	}
	return out
}

// compileHold checks the kind's hold state and the actions that continue a held create, and
// gives each such action the create's phases, target and failure rule. A kind decoded from
// JSON (GET /v1/kinds) has them already: they must still be the create's.
func (k *Kind) compileHold(add func(field, format string, args ...any), staticRef func(field, s string)) {
	if k.Hold != "" {
		staticRef("hold", k.Hold)
		switch {
		case slices.Contains(k.States.Final, k.Hold) || slices.Contains(k.States.Gone, k.Hold) || slices.Contains(k.States.Error, k.Hold):
			add("hold", "the hold state %q must be an ordinary static state, not a final, error or gone one: a held create waits in it for an action to continue it", k.Hold)
		case k.Hold == k.Initial:
			add("hold", "the hold state %q is the initial state: a held create waits in a state of its own (the create from `initial` already waits for a create request)", k.Hold)
		case k.Hold == k.Create.To:
			add("hold", "the hold state %q is where the create lands: a held create waits in a state of its own, before the create starts", k.Hold)
		}
	}
	continues := 0
	for i := range k.Actions {
		a := &k.Actions[i]
		if !a.ContinuesCreate {
			continue
		}
		continues++
		field := fmt.Sprintf("actions[%d]", i)
		if len(a.Via) == 0 && a.To == "" && !a.Returns {
			a.Via, a.To = slices.Clone(k.Create.Via), k.Create.To
		} else if !slices.Equal(a.Via, k.Create.Via) || a.To != k.Create.To {
			add(field, "action %q continues a held create, so it runs the create's phases to the create's `to`: leave out its `via` and `to`", a.Name)
		}
		if a.Failure == nil && k.Create.Failure != nil {
			f := *k.Create.Failure
			a.Failure = &f
		}
		if k.Hold == "" {
			add(field+".continues_create", "action %q continues a held create, but the kind has no `hold` state for creates to wait in: give the kind `hold: <static state>`", a.Name)
			continue
		}
		if a.FromAny || len(a.ForceFrom) > 0 || !slices.Equal(a.From, []string{k.Hold}) {
			add(field+".from", "action %q continues a held create, so it starts only from the hold state: write `from: [%s]`", a.Name, k.Hold)
		}
		if !a.ByUser() {
			add(field+".actor", "action %q continues a held create: users continue it (leave out `actor`)", a.Name)
		}
		if a.Returns {
			add(field+".returns", "action %q continues a held create: it lands where the create does, so it cannot return", a.Name)
		}
	}
	if k.Hold != "" && continues == 0 {
		add("hold", "creates held in %q have no way on: give an action `continues_create: true` (with `from: [%s]`) that runs the create", k.Hold, k.Hold)
	}
}
