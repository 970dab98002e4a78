package lifecycle

import (
	"fmt"
	"maps"
	"slices"
)

// compileRelations checks the relation declarations that need only the kind itself.
func (k *Kind) compileRelations(add func(field, format string, args ...any)) {
	var times []string
	for _, f := range k.Fields {
		if f.Type == TypeTime {
			times = append(times, f.Name)
		}
	}
	compileFields(add, "fields", k.Fields, times)
	actionRef := func(field, name string) {
		if k.actions[name] == nil {
			add(field, "unknown action %q%s; actions are %s", name, didYouMean(name, k.actionNames()), listOrNone(k.actionNames()))
		}
	}
	stateRef := func(field, s string) {
		if !k.IsStatic(s) {
			add(field, "%q is not a static state of %s%s", s, k.Name, didYouMean(s, k.States.Static))
		}
	}
	limitedBy := map[string]int{} // action → the propagation that limits it
	for i, p := range k.Propagate {
		at := fmt.Sprintf("propagate[%d]", i)
		if len(p.Start) == 0 && len(p.Land) == 0 {
			add(at, "a propagation needs `start` (actions) or `land` (states)")
		}
		if len(p.Start) > 0 && len(p.Land) > 0 {
			add(at, "a propagation fires on `start` or on `land`, not both")
		}
		for j, a := range p.Start {
			actionRef(fmt.Sprintf("%s.start[%d]", at, j), a)
		}
		for j, s := range p.Land {
			stateRef(fmt.Sprintf("%s.land[%d]", at, j), s)
		}
		for j, s := range p.From {
			stateRef(fmt.Sprintf("%s.from[%d]", at, j), s)
		}
		for j, a := range p.Action {
			actionRef(fmt.Sprintf("%s.actions[%d]", at, j), a)
		}
		n := 0
		for _, b := range []bool{p.To.Children != "", p.To.Descendants != "", p.To.Parent, p.To.Linked != nil} {
			if b {
				n++
			}
		}
		if n != 1 {
			add(at+".to", "pick exactly one of `children: <kind>`, `descendants: <kind>`, `parent: true` or `linked: {kind, field}`")
		}
		if p.To.Parent && k.Parent == nil {
			add(at+".to.parent", "%s has no parent", k.Name)
		}
		effects := 0
		for _, b := range []bool{p.Remove, p.Abort} {
			if b {
				effects++
			}
		}
		if effects > 1 || (effects == 1 && p.Run != "") {
			add(at, "a propagation runs an action, removes or aborts: pick one")
		}
		if len(p.Land) > 0 && p.Run == "" && effects == 0 {
			add(at+".run", "a propagation on a landing needs `run: <action>` (or remove/abort)")
		}
		if p.Wait && p.Follow {
			add(at, "wait and follow are opposite: the originator waits for them, or they follow it")
		}
		if (p.Wait || p.Follow) && len(p.Start) == 0 {
			add(at, "only a propagation on `start` can wait or follow")
		}
		compileLimit(add, at+".limit", p.Limit, p.Wait,
			"a limit on a propagation needs `wait: true`: a queued object starts when a running one lands and tells the "+k.Name+"'s operation it waits for")
		// An operation runs under one limit (its lanes): one limited propagation per action.
		for _, a := range p.Start {
			if j, ok := limitedBy[a]; ok && p.Limit != nil {
				add(at+".limit", "propagate[%d] already limits %s: an operation runs under one limit, so give the related objects one propagation with a limit", j, a)
			} else if p.Limit != nil {
				limitedBy[a] = i
			}
		}
	}
	for i, g := range k.Guards {
		at := fmt.Sprintf("guards[%d]", i)
		if (g.Ancestor == "") == (g.Link == "") {
			add(at, "a guard looks at an `ancestor: <kind>` or a `link: <field>`, one of them")
		}
		if len(g.States) == 0 {
			add(at+".in", "a guard needs `in:`, the states the object must be in")
		}
		for j, a := range g.Actions {
			actionRef(fmt.Sprintf("%s.actions[%d]", at, j), a)
		}
		if g.Link != "" && k.linkTo(g.Link) == "" {
			add(at+".link", "%q is not one of the kind's links", g.Link)
		}
	}
	for i, l := range k.Links {
		at := fmt.Sprintf("links[%d]", i)
		if l.Field == "" || l.Kind == "" {
			add(at, "a link needs `field` and `kind`")
		}
		for j, a := range l.SetBy {
			actionRef(fmt.Sprintf("%s.set_by[%d]", at, j), a)
		}
		for j, a := range l.ClearedBy {
			actionRef(fmt.Sprintf("%s.cleared_by[%d]", at, j), a)
		}
		if l.Delete != "" && l.Delete != LinkClear && l.Delete != LinkRefuse {
			add(at+".delete", "unknown link delete policy %q; policies are clear (the default: removing the linked object clears the field) and refuse (its removal is refused while the field names it)", l.Delete)
		}
		if f, ok := k.Field(l.Field); ok && l.Refuses() && len(l.ClearedBy) == 0 && len(k.RemovingActions()) == 0 && (f.Required || f.Immutable) {
			// The linked object's delete would wait for objects that never go nor let go: for ever.
			why := "required"
			if f.Immutable {
				why = "immutable"
			}
			add(at+".delete", "`delete: refuse` keeps a linked %[1]s from being deleted while a %[2]s's %[3]s names it, but no action of "+
				"%[2]s lands in a `gone` state (a `deletion:` of its own included), no action clears %[3]s and a patch cannot "+
				"(it is %[4]s), so the %[1]s could never be deleted: give %[2]s a deletion mode naming an action into a `gone` "+
				"state (`deletion: {destroy: [ACTION]}`) or an action that clears the link (`cleared_by: [ACTION]`), or leave "+
				"out `delete: refuse` (removing the %[1]s then clears %[3]s)", l.Kind, k.Name, l.Field, why)
		}
	}
	limitedChild := -1 // the child declaration with a limit
	for i, c := range k.Children {
		at := fmt.Sprintf("children[%d]", i)
		if c.Kind == "" {
			add(at+".kind", "missing child kind")
		}
		if c.Each == "" && c.Name == "" {
			add(at+".name", "a single child needs a `name` (it is named <parent>-<name>), or `each: <list field>` for one child per item")
		}
		if c.Each != "" {
			if f, ok := k.Field(c.Each); !ok || f.Type != TypeList {
				add(at+".each", "%q is not a declared list field of %s%s: `each` names a field of `type: list` whose items become the children's specs", c.Each, k.Name, didYouMean(c.Each, k.fieldNames()))
			} else {
				if c.Count != "" && (f.Items == nil || f.Items.sub(c.Count) == nil || f.Items.sub(c.Count).Type != TypeInteger) {
					add(at+".count", "%q is not an integer field of the items of %s: declare it under %s's `items: {type: object, fields: [...]}` with `type: integer`", c.Count, c.Each, c.Each)
				}
				if c.Group != "" && (f.Items == nil || f.Items.Type != TypeObject || f.Items.sub("name") == nil) {
					add(at+".group", "`group` records which item a child came from by the item's `name`, but the items of %s have no `name` field (children would be grouped by position, \"1\", \"2\", which shifts when an item is removed): add `{name: name, type: string, required: true}` to the fields of %s's items", c.Each, c.Each)
				}
			}
		} else {
			if c.Count != "" {
				add(at+".count", "`count` makes that many children per item of a list, so it needs `each: <list field>`: for N children of one kind, declare a list field whose items have a `name` and an integer `count` (`{name: groups, type: list, items: {type: object, fields: [{name: name, type: string, required: true}, {name: count, type: integer}]}}`) and write `each: groups, count: count, group: group`")
			}
			if c.Group != "" {
				add(at+".group", "`group` records which item of the list `each` names a child came from: it needs `each: <list field>`")
			}
		}
		for child, parent := range c.Copy {
			if _, ok := k.Field(parent); !ok && len(k.Fields) > 0 {
				add(at+".copy."+child, "%q is not a field of %s%s", parent, k.Name, didYouMean(parent, k.fieldNames()))
			}
		}
		k.checkLead(add, at, c)
		compileLimit(add, at+".limit", c.Limit, c.Wait,
			"a limit on children needs `wait: true`: the "+k.Name+"'s create holds their queue until every one has landed")
		// The create (and a scale-out) runs under one limit: one limited child declaration.
		if c.Limit != nil {
			if limitedChild >= 0 {
				add(at+".limit", "children[%d] already has a limit: the %s's create runs under one limit, so give one child declaration a limit", limitedChild, k.Name)
			} else {
				limitedChild = i
			}
		}
	}
	if k.Derive != nil {
		k.compileDerive(add)
	}
	for i, name := range k.Invariants {
		if _, ok := builtinFuncs.invariant(name); !ok {
			add(fmt.Sprintf("invariants[%d]", i), "unknown invariant %q%s: invariants are Go checks a family registers (%s); a user kind cannot define one",
				name, didYouMean(name, builtinFuncs.invariantNames()), listOrNone(builtinFuncs.invariantNames()))
		}
	}
	for _, a := range k.AllActions() {
		if a.Derived && k.Derive == nil {
			add("actions."+a.Name+".derived", "action %q lands in the derived state but the kind has no `derive`", a.Name)
		}
	}
	if k.Parent != nil && k.Parent.Delete != "" && !slices.Contains(deletePolicies, k.Parent.Delete) {
		add("parent.delete", "unknown delete policy %q; policies are refuse, cascade, detach", k.Parent.Delete)
	}
	if k.Parent != nil && k.Parent.Delete == DeleteRefuse && len(k.RemovingActions()) == 0 {
		// The parent's delete would wait for children nothing can remove: for ever.
		add("parent.delete", "`delete: refuse` keeps a %[1]s from being deleted while it holds %[2]s objects, but no action of "+
			"%[2]s lands in a `gone` state (a `deletion:` of its own included), so they can never be removed and the %[1]s could "+
			"never be deleted: give %[2]s a deletion mode naming an action into a `gone` state (`deletion: {destroy: [ACTION]}`), "+
			"or write `delete: cascade` (they go with the %[1]s) or `delete: detach` (they stay, without a parent)", k.Parent.Kind, k.Name)
	}
}

// checkLead checks a child declaration's lead (before, not_before) and moved action: they
// shape copied time fields, so they need `copy` from time fields of the kind.
func (k *Kind) checkLead(add func(field, format string, args ...any), at string, c Child) {
	timeField := func(name string) bool {
		f, ok := k.Field(name)
		return (ok && f.Type == TypeTime) || (!ok && len(k.Fields) == 0)
	}
	if (c.Before != 0 || c.NotBefore != "" || c.Moved != "") && len(c.Copy) == 0 {
		add(at, "`before`, `not_before` and `moved` shape the time fields a child copies from its parent, but this declaration has no `copy`: add `copy: {time: <time field of %s>}`", k.Name)
	}
	if c.Before != 0 || c.NotBefore != "" {
		for child, parent := range c.Copy {
			if !timeField(parent) {
				add(at+".copy."+child, "%q is not a time field of %s: `before` and `not_before` move times", parent, k.Name)
			}
		}
	}
	if c.NotBefore != "" && !timeField(c.NotBefore) {
		add(at+".not_before", "%q is not a time field of %s%s", c.NotBefore, k.Name, didYouMean(c.NotBefore, k.fieldNames()))
	}
}

// compileLimit checks a limit (of a propagation or a child declaration) on its own: the
// fields it groups by, the wait its queue needs (a queued object gets its turn only when a
// waited-for one lands; noWait is the refusal without it) and its bounds.
func compileLimit(add func(field, format string, args ...any), at string, l *Limit, wait bool, noWait string) {
	if l == nil {
		return
	}
	switch {
	case l.Outer == "" || l.Inner == "":
		add(at, "a limit needs `outer` and `inner` spec fields")
	case !wait:
		add(at, "%s", noWait)
	}
	// A bound of 0 never lets an object of its outer values run: they and the operation
	// waiting for them would wait for ever.
	bounds := func(field string, g GroupLimit) {
		if g.Inner < 1 || g.PerInner < 1 {
			add(field, "`inner` and `per_inner` must be at least 1: with %d and %d none of the objects would ever run", g.Inner, g.PerInner)
		}
	}
	bounds(at+".default", l.Default)
	for _, outer := range slices.Sorted(maps.Keys(l.Groups)) {
		bounds(at+".groups."+outer, l.Groups[outer])
	}
}

// linkTo returns the kind a link field points at ("" if the kind has no such link).
func (k *Kind) linkTo(field string) string {
	for _, l := range k.Links {
		if l.Field == field {
			return l.Kind
		}
	}
	return ""
}

// checkRelations checks the relation declarations against the other kinds of the registry.
func checkRelations(k *Kind, lookup func(string) *Kind, known []string) SpecErrors {
	var errs SpecErrors
	add := func(field, format string, args ...any) { errs = append(errs, k.loc.err(field, format, args...)) }
	kindRef := func(field, name string) *Kind {
		o := lookup(name)
		if o == nil {
			add(field, "unknown kind %q%s", name, didYouMean(name, known))
		}
		return o
	}
	// A limit groups the related objects by two of their spec fields: when their kind declares
	// fields, these must be among them (a misspelt one would put every object in one lane).
	limitFields := func(field string, o *Kind, l *Limit) {
		if l == nil || len(o.Fields) == 0 {
			return
		}
		for _, f := range []struct{ key, name string }{{"outer", l.Outer}, {"inner", l.Inner}} {
			if _, ok := o.Field(f.name); f.name != "" && !ok {
				add(field+"."+f.key, "%q is not a spec field of %s%s", f.name, o.Name, didYouMean(f.name, o.fieldNames()))
			}
		}
	}
	statesOf := func(field string, o *Kind, states []string) {
		for j, s := range states {
			if !o.HasState(s) {
				add(fmt.Sprintf("%s[%d]", field, j), "%q is not a state of %s%s", s, o.Name, didYouMean(s, o.allStates()))
			}
		}
	}
	for i, c := range k.Children {
		at := fmt.Sprintf("children[%d]", i)
		ck := kindRef(at+".kind", c.Kind)
		if ck == nil {
			continue
		}
		if ck.Parent == nil || ck.Parent.Kind != k.Name {
			add(at+".kind", "%s objects are not children of %s: give %s `parent: {kind: %s}`", ck.Name, k.Name, ck.Name, k.Name)
		}
		if c.ScaleIn != "" && ck.actions[c.ScaleIn] == nil {
			add(at+".scale_in", "unknown action %q of %s%s", c.ScaleIn, ck.Name, didYouMean(c.ScaleIn, ck.actionNames()))
		}
		if c.Moved != "" && ck.actions[c.Moved] == nil {
			add(at+".moved", "unknown action %q of %s%s", c.Moved, ck.Name, didYouMean(c.Moved, ck.actionNames()))
		}
		limitFields(at+".limit", ck, c.Limit)
	}
	for i, p := range k.Propagate {
		at := fmt.Sprintf("propagate[%d]", i)
		name := p.To.Kind(k)
		if name == "" {
			continue
		}
		rk := kindRef(at+".to", name)
		if rk == nil {
			continue
		}
		if p.To.Children != "" && (rk.Parent == nil || rk.Parent.Kind != k.Name) {
			add(at+".to.children", "%s objects are not children of %s", rk.Name, k.Name)
		}
		if p.To.Descendants != "" && !isAncestor(rk, k.Name, lookup) {
			add(at+".to.descendants", "%s objects do not live below %s", rk.Name, k.Name)
		}
		statesOf(at+".in", rk, p.States)
		limitFields(at+".limit", rk, p.Limit)
		if p.Remove || p.Abort {
			continue
		}
		runs := []string{p.Run}
		if p.Run == "" {
			runs = p.Start
		}
		for _, r := range runs {
			if rk.actions[r] == nil {
				add(at+".run", "%s has no action %q%s", rk.Name, r, didYouMean(r, rk.actionNames()))
			}
		}
	}
	for i, g := range k.Guards {
		at := fmt.Sprintf("guards[%d]", i)
		target := g.Ancestor
		if g.Link != "" {
			target = k.linkTo(g.Link)
		}
		gk := lookup(target)
		if gk == nil {
			if target != "" {
				add(at, "unknown kind %q%s", target, didYouMean(target, known))
			}
			continue
		}
		if g.Ancestor != "" && !isAncestor(k, g.Ancestor, lookup) {
			add(at+".ancestor", "%s is not an ancestor of %s", g.Ancestor, k.Name)
		}
		statesOf(at+".in", gk, g.States)
	}
	for i, a := range k.Actions {
		if a.With != "" {
			kindRef(fmt.Sprintf("actions[%d].with", i), a.With)
		}
	}
	for i, l := range k.Links {
		at := fmt.Sprintf("links[%d]", i)
		if lk := kindRef(at+".kind", l.Kind); lk != nil {
			statesOf(at+".in", lk, l.States)
		}
	}
	if k.Derive != nil {
		if dk := kindRef("derive.children", k.Derive.From); dk != nil {
			if dk.Parent == nil || dk.Parent.Kind != k.Name {
				add("derive.children", "%s objects are not children of %s: give %s `parent: {kind: %s}`", dk.Name, k.Name, dk.Name, k.Name)
			}
			checkDerive(k, dk, add)
		}
	}
	return errs
}

// isAncestor reports whether kind name is reached by walking k's parents up.
func isAncestor(k *Kind, name string, lookup func(string) *Kind) bool {
	seen := map[string]bool{}
	for p := k.Parent; p != nil && !seen[p.Kind]; {
		if p.Kind == name {
			return true
		}
		seen[p.Kind] = true
		pk := lookup(p.Kind)
		if pk == nil {
			return false
		}
		p = pk.Parent
	}
	return false
}

// parentCycle reports the kinds of a parent chain that loops back to k, or nil.
func parentCycle(k *Kind, lookup func(string) *Kind) []string {
	chain := []string{k.Name}
	for p := k.Parent; p != nil; {
		if slices.Contains(chain, p.Kind) {
			return append(chain, p.Kind)
		}
		chain = append(chain, p.Kind)
		pk := lookup(p.Kind)
		if pk == nil {
			return nil
		}
		p = pk.Parent
	}
	return nil
}
