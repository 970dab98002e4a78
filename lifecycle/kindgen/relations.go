package kindgen

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// simpleKind is a small generated kind: one or two static states, a create into first, with
// deletion when deletable.
func (g *gen) simpleKind(name, family, first string, deletable bool) lifecycle.Kind {
	k := lifecycle.Kind{Name: name, Family: family, Collection: name + "s", Description: "A generated kind (" + name + ").",
		DefaultDuration: lifecycle.Duration(time.Second), Failure: lifecycle.Failure{Rollback: true}}
	k.States.Static = []string{first, "SHUT"}
	k.Create = lifecycle.Action{Name: "create", To: first}
	k.Create.Via = g.phases(&k, "create_"+name, 0, 1)
	if len(k.Create.Via) > 0 {
		k.Create.Failure = &lifecycle.Failure{To: "SHUT"}
	}
	k.Actions = []lifecycle.Action{
		{Name: "shut", From: []string{first}, To: "SHUT"},
		{Name: "open", From: []string{"SHUT"}, To: first},
	}
	if deletable {
		k.States.Gone = []string{"GONE"}
		k.Actions = append(k.Actions, lifecycle.Action{Name: "scrap", From: []string{first, "SHUT"}, To: "GONE"})
		k.Deletion = map[string][]string{"destroy": {"scrap"}}
	}
	return k
}

// link gives the subject a link field to a built-in or a generated kind; it returns the
// generated kind, if any.
func (g *gen) link(k *lifecycle.Kind, name string) *lifecycle.Kind {
	var target *lifecycle.Kind
	var ready string
	if g.chance(0.5) {
		builtins := slices.Sorted(maps.Keys(BuiltinTargets))
		g.set.Target = g.pick(builtins)
		ready = BuiltinTargets[g.set.Target]
		g.use(LinkBuiltin)
	} else {
		t := g.simpleKind(name, k.Family, "READY", true)
		target = &t
		g.set.Target = t.Name
		ready = "READY"
		g.use(LinkGenerated)
	}
	field := g.set.Target + "_id"
	f := lifecycle.Field{Name: field, Type: lifecycle.TypeString, Description: "The " + g.set.Target + " this object uses."}
	if g.chance(0.4) {
		f.Required = true
		g.use(Required)
	}
	k.Fields = append(k.Fields, f)
	l := lifecycle.Link{Field: field, Kind: g.set.Target, SetBy: lifecycle.Names{k.Create.Name}}
	if g.chance(0.5) {
		l.States = []string{ready}
		g.use(LinkStates)
	}
	k.Links = append(k.Links, l)
	if g.chance(0.5) {
		var actions lifecycle.Names
		for _, a := range k.Actions {
			if a.ByUser() && a.Name != "remove" && a.Name != "repair" {
				actions = append(actions, a.Name)
			}
		}
		if len(actions) > 0 {
			k.Guards = append(k.Guards, lifecycle.Guard{Link: field, States: []string{ready}, Actions: actions[:1]})
			g.use(GuardLink)
		}
	}
	return target
}

// children gives the subject a list of objects (whose items have defaults), and sometimes
// children made from it (one per item, or count per item) and status fields derived from them.
func (g *gen) children(k *lifecycle.Kind, name string) *lifecycle.Kind {
	if !g.chance(0.6) {
		return nil
	}
	withCount := g.chance(0.4)
	itemFields := []lifecycle.Field{{Name: "name", Type: lifecycle.TypeString, Required: true, MaxLength: 16}}
	size := g.scalar("grade", []lifecycle.FieldType{lifecycle.TypeString, lifecycle.TypeInteger, lifecycle.TypeBool}[g.r.IntN(3)], false)
	if size.Default == nil {
		size.Default = g.defaultOf(&size)
		g.use(Defaults)
	}
	itemFields = append(itemFields, size)
	g.use(ItemDefaults)
	if withCount {
		lo, hi := 1.0, 3.0
		itemFields = append(itemFields, lifecycle.Field{Name: "count", Type: lifecycle.TypeInteger, Min: &lo, Max: &hi, Default: 1})
	}
	list := lifecycle.Field{Name: "parts", Type: lifecycle.TypeList, MaxItems: 4, Description: "The object's parts.",
		Items: &lifecycle.Field{Type: lifecycle.TypeObject, Fields: itemFields}}
	g.use(FieldObjectList)
	g.use(FieldString)
	if withCount {
		// Named items (Tumblebug's subgroup blocks), without a draw of their own so that
		// the seeds keep their kinds.
		list.ItemName = "part"
		g.use(ItemName)
	}
	k.Fields = append(k.Fields, list)
	if !g.chance(0.7) {
		return nil
	}
	child := lifecycle.Kind{Name: name, Family: k.Family, Collection: name + "s", MadeByParent: true,
		Description: "A part of the " + k.Name + ", made by its create.", DefaultDuration: lifecycle.Duration(time.Second),
		Parent: &lifecycle.Parent{Kind: k.Name, Delete: "cascade"}, Failure: lifecycle.Failure{Rollback: true}}
	child.States.Static = []string{"FRESH", "USED"}
	child.Create = lifecycle.Action{Name: "create", To: "FRESH"}
	child.Actions = []lifecycle.Action{{Name: "use", From: []string{"FRESH"}, To: "USED"}}
	child.Fields = append(child.Fields, size)
	decl := lifecycle.Child{Kind: child.Name, Each: list.Name}
	if withCount {
		decl.Count, decl.Group = "count", "group"
		child.Fields = append(child.Fields, lifecycle.Field{Name: "group", Type: lifecycle.TypeString})
		g.use(ChildrenCount)
	}
	child.Fields = append([]lifecycle.Field{{Name: "name", Type: lifecycle.TypeString}}, child.Fields...)
	g.use(ChildrenEach)
	if g.chance(0.3) {
		for _, f := range k.Fields {
			if f.Type == lifecycle.TypeString && f.Name != list.Name && len(f.Enum) == 0 && f.MaxLength == 0 {
				child.Fields = append(child.Fields, lifecycle.Field{Name: "inherited", Type: lifecycle.TypeString})
				decl.Copy = map[string]string{"inherited": f.Name}
				g.use(ChildrenCopy)
				break
			}
		}
	}
	k.Children = append(k.Children, decl)
	g.set.Child = child.Name
	if g.chance(0.6) {
		d := &lifecycle.Derive{From: child.Name}
		all := []lifecycle.Derivation{
			{Function: "count_in", Status: "fresh_parts", In: []string{"FRESH"}},
			{Function: "all_in", Status: "all_fresh", In: []string{"FRESH"}},
			{Function: "any_in", Status: "any_used", In: []string{"USED"}},
			{Function: "count_by_state", Status: "parts_by_state"},
		}
		for _, i := range g.r.Perm(len(all))[:1+g.r.IntN(len(all))] {
			d.Use = append(d.Use, all[i])
		}
		k.Derive = d
		g.use(DerivedStatus)
	}
	return &child
}

// timedChild gives the subject's child declaration (the last of k.Children) a time field
// copied from one of the subject's, sometimes a lead before it (`before`), floored at another
// time field (`not_before`), and a timer action at it that only some children run (`where`);
// and sometimes an action the children run when a copied field moves (`moved`).
func (g *gen) timedChild(k, child *lifecycle.Kind) {
	decl := &k.Children[len(k.Children)-1]
	var times []string
	for _, f := range k.Fields {
		if f.Type == lifecycle.TypeTime {
			times = append(times, f.Name)
		}
	}
	// before and not_before move every copied field, so they need copies of times only.
	if len(times) > 0 && len(decl.Copy) == 0 && g.chance(0.6) {
		from := g.pick(times)
		child.Fields = append(child.Fields, lifecycle.Field{Name: "due", Type: lifecycle.TypeTime,
			Description: "When the part is due (the " + k.Name + "'s " + from + ")."})
		decl.Copy = map[string]string{"due": from}
		g.use(ChildrenCopy)
		if g.chance(0.6) {
			decl.Before = lifecycle.Duration(time.Duration(1+g.r.IntN(3)) * time.Hour)
			g.use(ChildBefore)
		}
		if len(times) > 1 && g.chance(0.6) {
			for _, i := range g.r.Perm(len(times)) {
				if times[i] != from {
					decl.NotBefore = times[i]
					break
				}
			}
			g.use(ChildNotBefore)
		}
		if g.chance(0.6) {
			// Blazar's before_end_lease event: a timer at the copied time that only some
			// children run (the others move with their parent).
			grade, _ := child.Field("grade")
			child.Actions = append(child.Actions, lifecycle.Action{Name: "ring", Actor: lifecycle.ActorTimer, At: "due",
				Where: map[string]any{"grade": g.defaultOf(grade)}, From: []string{"FRESH"}, To: "USED"})
			g.use(AutomaticWhere)
		}
	}
	if len(decl.Copy) > 0 && g.chance(0.6) {
		child.Actions = append(child.Actions, lifecycle.Action{Name: "renew", Actor: lifecycle.ActorSystem,
			From: []string{"FRESH", "USED"}, To: "FRESH"})
		decl.Moved = "renew"
		g.use(ChildMoved)
	}
}

// where limits the subject's timer or self-healing action to objects whose scalar field has
// one value, sometimes.
func (g *gen) where(k *lifecycle.Kind) {
	var auto []int
	for i, a := range k.Actions {
		if a.At != "" || a.After != 0 {
			auto = append(auto, i)
		}
	}
	var fields []*lifecycle.Field
	for i := range k.Fields {
		switch k.Fields[i].Type {
		case lifecycle.TypeString, lifecycle.TypeInteger, lifecycle.TypeBool:
			isLink := slices.ContainsFunc(k.Links, func(l lifecycle.Link) bool { return l.Field == k.Fields[i].Name })
			if !k.Fields[i].Immutable && !isLink {
				fields = append(fields, &k.Fields[i])
			}
		}
	}
	if len(auto) == 0 || len(fields) == 0 || !g.chance(0.5) {
		return
	}
	f := fields[g.r.IntN(len(fields))]
	a := &k.Actions[auto[g.r.IntN(len(auto))]]
	a.Where = map[string]any{f.Name: g.defaultOf(f)}
	g.use(AutomaticWhere)
}

// linkDelete makes the subject's link refuse the removal of the object it names
// (`delete: refuse`), sometimes: when the subject's objects can go (so the object they name
// can go after them) and the target's objects can be removed at all.
func (g *gen) linkDelete(k *lifecycle.Kind) {
	if len(k.Links) == 0 || len(k.RemovingActions()) == 0 {
		return
	}
	l := &k.Links[0]
	if !g.used[LinkGenerated] && !builtinRemovable()[l.Kind] {
		return
	}
	if g.chance(0.5) {
		l.Delete = lifecycle.LinkRefuse
		g.use(LinkDeleteRefuse)
	}
}

// builtinRemovable tells which of the BuiltinTargets have an action into a gone state (a
// DELETE can remove them, so a refusing link has something to refuse).
var builtinRemovable = sync.OnceValue(func() map[string]bool {
	reg := lifecycle.Builtin()
	out := map[string]bool{}
	for name := range BuiltinTargets {
		if k, err := reg.Kind(name); err == nil && len(k.RemovingActions()) > 0 {
			out[name] = true
		}
	}
	return out
})
