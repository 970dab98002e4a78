package lifecycle

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Relations are how objects of different kinds live together: children a create makes,
// actions that propagate to related objects, state derived from related objects, guards on
// ancestors and linked objects, what a parent's removal does to its children, and invariants
// across objects. They are data in the spec, so user-defined kinds have them too; what a table
// cannot say is a named function a family registers (RegisterDerive, RegisterInvariant).

// Names is a list of names written in a spec as one name or a list.
type Names []string

// UnmarshalYAML accepts a scalar or a sequence.
func (n *Names) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind == yaml.ScalarNode {
		*n = Names{node.Value}
		return nil
	}
	var xs []string
	if err := node.Decode(&xs); err != nil {
		return err
	}
	*n = xs
	return nil
}

// Child declares objects a create makes together with its object, in the same store
// transaction: one child, one per item of a list field (Each), or Count copies per item.
type Child struct {
	// Kind is the child kind; its parent kind must be this kind.
	Kind string `yaml:"kind" json:"kind"`
	// Name is the child's name suffix (the child is named "<parent>-<name>"); with Each the
	// item's "name" field (or its index) and a counter are used instead.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Each names a list field of the parent: one child per item, the item becoming its spec.
	Each string `yaml:"each,omitempty" json:"each,omitempty"`
	// Count names an integer field of each item: that many children per item (Tumblebug's
	// subgroup count). It is not copied into the children's spec.
	Count string `yaml:"count,omitempty" json:"count,omitempty"`
	// Group names the child spec field that records which item a child came from (the item's
	// name); scaling an item up or down finds its children by it.
	Group string `yaml:"group,omitempty" json:"group,omitempty"`
	// Spec holds fixed spec values of the children.
	Spec map[string]any `yaml:"spec,omitempty" json:"spec,omitempty"`
	// Copy sets child spec fields from parent spec fields (child field: parent field), kept in
	// step when the parent's field changes.
	Copy map[string]string `yaml:"copy,omitempty" json:"copy,omitempty"`
	// Wait makes the parent's create (and a scale) complete only when these children have
	// landed.
	Wait bool `yaml:"wait,omitempty" json:"wait,omitempty"`
	// ScaleIn names the action that ends surplus children when an item's count goes down;
	// they are removed once it lands. Newest children go first.
	ScaleIn string `yaml:"scale_in,omitempty" json:"scale_in,omitempty"`
	// Limit bounds how many of these children's creates run at once (the parent's create and a
	// scale-out provision under it); the rest wait in their initial state, queued. Needs Wait.
	Limit *Limit `yaml:"limit,omitempty" json:"limit,omitempty"`
}

// Selector picks the objects related to one object.
type Selector struct {
	// Children of that kind (parent_id is the object).
	Children string `yaml:"children,omitempty" json:"children,omitempty"`
	// Descendants of that kind, at any depth below the object.
	Descendants string `yaml:"descendants,omitempty" json:"descendants,omitempty"`
	// Parent picks the object's parent.
	Parent bool `yaml:"parent,omitempty" json:"parent,omitempty"`
	// Linked picks objects of Kind whose spec field Field holds the object's ID.
	Linked *LinkRef `yaml:"linked,omitempty" json:"linked,omitempty"`
}

// LinkRef names a kind and the spec field of its objects that holds another object's ID.
type LinkRef struct {
	Kind  string `yaml:"kind" json:"kind"`
	Field string `yaml:"field" json:"field"`
}

// Kind returns the kind the selector picks, given the object's own kind.
func (s Selector) Kind(self *Kind) string {
	switch {
	case s.Children != "":
		return s.Children
	case s.Descendants != "":
		return s.Descendants
	case s.Linked != nil:
		return s.Linked.Kind
	case s.Parent && self.Parent != nil:
		return self.Parent.Kind
	}
	return ""
}

func (s Selector) String() string {
	switch {
	case s.Children != "":
		return "children " + s.Children
	case s.Descendants != "":
		return "descendants " + s.Descendants
	case s.Linked != nil:
		return s.Linked.Kind + " objects linked by " + s.Linked.Field
	case s.Parent:
		return "parent"
	}
	return "nothing"
}

// Propagation carries an action's start, or a landing, over to related objects.
type Propagation struct {
	// Start lists the actions whose start propagates.
	Start Names `yaml:"start,omitempty" json:"start,omitempty"`
	// Land lists the static states whose reaching propagates; From and Action narrow it to
	// landings from those states or by those actions. A failed action's landing counts only
	// when Failed is set.
	Land   Names `yaml:"land,omitempty" json:"land,omitempty"`
	From   Names `yaml:"from,omitempty" json:"from,omitempty"`
	Action Names `yaml:"actions,omitempty" json:"by,omitempty" was:"by"`
	Failed bool  `yaml:"failed,omitempty" json:"failed,omitempty"`
	// To picks the related objects.
	To Selector `yaml:"to" json:"to"`
	// Where keeps related objects whose spec has these values; States those in these states.
	Where  map[string]any `yaml:"where,omitempty" json:"where,omitempty"`
	States Names          `yaml:"in,omitempty" json:"states,omitempty" was:"states"`
	// Run is the action started on each related object ("" runs the action of the same name
	// as the one that started). Objects it is not allowed from are skipped and reported.
	Run string `yaml:"run,omitempty" json:"run,omitempty"`
	// Force starts Run as a forced action.
	Force bool `yaml:"force,omitempty" json:"force,omitempty"`
	// Remove removes the related objects instead (CB-Tumblebug's refine).
	Remove bool `yaml:"remove,omitempty" json:"remove,omitempty"`
	// Abort ends the related objects' running operations where they started (a restarted
	// MobiledgeX CRM reports what it really holds).
	Abort bool `yaml:"abort,omitempty" json:"abort,omitempty"`
	// Wait makes the originating operation complete only when the propagated ones have
	// landed (an MCI action ends when its VMs have).
	Wait bool `yaml:"wait,omitempty" json:"wait,omitempty"`
	// Follow makes the propagated operations land when the originating one does, in the same
	// transaction, and fail when it fails (a Blazar event runs exactly as long as its lease's
	// start).
	Follow bool `yaml:"follow,omitempty" json:"follow,omitempty"`
	// Limit bounds how many propagated operations run at once; the rest are queued.
	Limit *Limit `yaml:"limit,omitempty" json:"limit,omitempty"`
}

// Limit bounds concurrent propagated operations by two levels of spec fields of the related
// objects (CB-Tumblebug: per CSP, how many regions at once and how many VMs per region).
type Limit struct {
	// Outer and Inner name the spec fields grouping the objects (csp, region).
	Outer string `yaml:"outer" json:"outer"`
	Inner string `yaml:"inner" json:"inner"`
	// Groups maps an Outer value to its limits; Default applies to the others.
	Groups  map[string]GroupLimit `yaml:"groups,omitempty" json:"groups,omitempty"`
	Default GroupLimit            `yaml:"default" json:"default"`
}

// GroupLimit is how many Inner groups of one Outer value run at once, and how many objects
// per Inner group.
type GroupLimit struct {
	Inner    int `yaml:"inner" json:"inner"`
	PerInner int `yaml:"per_inner" json:"per_inner"`
}

// For returns the limits of an Outer value.
func (l *Limit) For(outer string) GroupLimit {
	if g, ok := l.Groups[outer]; ok {
		return g
	}
	return l.Default
}

// MatchesStart reports whether the propagation fires when an action starts.
func (p *Propagation) MatchesStart(action string) bool { return slices.Contains(p.Start, action) }

// MatchesLand reports whether the propagation fires on a landing in state, from a static state
// by an action (failed when the action failed).
func (p *Propagation) MatchesLand(state, from, action string, failed bool) bool {
	return slices.Contains(p.Land, state) &&
		(len(p.From) == 0 || slices.Contains(p.From, from)) &&
		(len(p.Action) == 0 || slices.Contains(p.Action, action)) &&
		failed == p.Failed
}

// Picks reports whether a related object in state with spec is one the propagation acts on.
func (p *Propagation) Picks(state string, spec map[string]any) bool {
	if len(p.States) > 0 && !slices.Contains(p.States, state) {
		return false
	}
	for k, v := range p.Where {
		if fmt.Sprint(spec[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// RunAction is the action started on related objects when trigger started or landed.
func (p *Propagation) RunAction(trigger string) string {
	if p.Run != "" {
		return p.Run
	}
	return trigger
}

// Derive computes an object's state and status fields from its children of one kind: with
// the generic derivations of Use, which any kind may name, and with a function its family
// registers for what they cannot say.
type Derive struct {
	// Function is a registered family function's name ("tumblebug.mci_status"); it runs after
	// the derivations of Use.
	Function string `yaml:"function,omitempty" json:"function,omitempty"`
	// From is the child kind whose objects feed the derivations.
	From string `yaml:"children" json:"from" was:"from"`
	// State makes the derived state the object's state whenever no operation runs on it (and
	// the derived state is one of its static states).
	State bool `yaml:"state,omitempty" json:"state,omitempty"`
	// Use lists generic derivations, applied in order.
	Use []Derivation `yaml:"use,omitempty" json:"use,omitempty"`
}

// Derivation is one generic derivation of a kind's state or a status field from its children.
type Derivation struct {
	// Function names the derivation: count_by_state, count_in, all_in, any_in, dominant_state
	// (or a registered family function).
	Function string `yaml:"function" json:"function"`
	// Status is the status field the result is written to. dominant_state without one derives
	// the state only.
	Status string `yaml:"status,omitempty" json:"status,omitempty"`
	// In lists the child states count_in, all_in and any_in look for.
	In []string `yaml:"in,omitempty" json:"in,omitempty"`
	// Order breaks dominant_state's ties: the earlier state wins.
	Order []string `yaml:"order,omitempty" json:"order,omitempty"`
	// Empty is dominant_state's result when there are no children ("" derives nothing).
	Empty string `yaml:"empty,omitempty" json:"empty,omitempty"`
}

// Guard requires an ancestor or a linked object to be in one of some states for actions to
// run. A refusal names the blocking object, its state and the states it must be in.
type Guard struct {
	// Ancestor is the kind of the ancestor (walking parent_id up) the guard looks at...
	Ancestor string `yaml:"ancestor,omitempty" json:"ancestor,omitempty"`
	// ...or Link names the spec field holding the ID of the object it looks at.
	Link string `yaml:"link,omitempty" json:"link,omitempty"`
	// States the object must be in.
	States []string `yaml:"in" json:"states" was:"states"`
	// Actions the guard applies to (the create action included); empty means every user
	// action that does not ignore its parent.
	Actions Names `yaml:"actions,omitempty" json:"actions,omitempty"`
}

// AppliesTo reports whether the guard applies to action a.
func (g *Guard) AppliesTo(a *Action) bool {
	if len(g.Actions) > 0 {
		return slices.Contains(g.Actions, a.Name)
	}
	return !a.IgnoreParent
}

// Link makes actions point an object at another one through a spec field: attaching a disk
// names its machine, which must exist and be in one of States. Actions in ClearedBy remove the
// field again.
type Link struct {
	Field     string   `yaml:"field" json:"field"`
	Kind      string   `yaml:"kind" json:"kind"`
	SetBy     Names    `yaml:"set_by,omitempty" json:"set_by,omitempty"`
	States    []string `yaml:"in,omitempty" json:"states,omitempty" was:"states"`
	ClearedBy Names    `yaml:"cleared_by,omitempty" json:"cleared_by,omitempty"`
}

// Delete policies: what a parent's deletion does to its live children.
const (
	// DeleteRefuse refuses to delete a parent while it has children.
	DeleteRefuse = "refuse"
	// DeleteCascade removes the children with the parent (the default).
	DeleteCascade = "cascade"
	// DeleteDetach keeps the children, without a parent.
	DeleteDetach = "detach"
)

var deletePolicies = []string{DeleteRefuse, DeleteCascade, DeleteDetach}

// DeletePolicy is what the removal of a parent does to objects of kind k.
func (k *Kind) DeletePolicy() string {
	if k.Parent == nil || k.Parent.Delete == "" {
		return DeleteCascade
	}
	return k.Parent.Delete
}

// LinksSetBy returns the links an action sets, and ClearedBy those it clears.
func (k *Kind) LinksSetBy(action string) (sets, clears []Link) {
	for _, l := range k.Links {
		if slices.Contains(l.SetBy, action) {
			sets = append(sets, l)
		}
		if slices.Contains(l.ClearedBy, action) {
			clears = append(clears, l)
		}
	}
	return sets, clears
}

// GuardsFor returns every guard on action a: the parent rule first, then the kind's guards.
func (k *Kind) GuardsFor(a *Action) []Guard {
	var out []Guard
	if need := k.RequiredParentStates(a); need != nil {
		out = append(out, Guard{Ancestor: k.Parent.Kind, States: need})
	}
	for _, g := range k.Guards {
		if g.AppliesTo(a) {
			out = append(out, g)
		}
	}
	return out
}

// View is what family functions see of an object: no store or engine types.
type View struct {
	ID, Kind, Name, State string
	// Action is the running operation's action, "" when the object is static.
	Action string
	// Target is where the running operation lands on success ("" when static or unknown).
	Target string
	Spec   map[string]any
	Status map[string]any
	// Decl is the object's kind, for functions that find related objects through its
	// relations (nil when the caller has none: such functions then find no related objects).
	Decl *Kind
}

// ItemChildren are the children among views that the object's kind makes one per item of a
// list field (`children: [{kind: K, each: FIELD}]`: a lease's reservations, an MCI's VMs),
// found through the relation, so a renamed copy of a kind finds its own.
func (v View) ItemChildren(views []View) []View {
	if v.Decl == nil {
		return nil
	}
	var kinds []string
	for _, c := range v.Decl.Children {
		if c.Each != "" {
			kinds = append(kinds, c.Kind)
		}
	}
	var out []View
	for _, c := range views {
		if slices.Contains(kinds, c.Kind) {
			out = append(out, c)
		}
	}
	return out
}

// StatesOfViews lists the states of views, in order.
func StatesOfViews(views []View) []string {
	out := make([]string, len(views))
	for i, v := range views {
		out[i] = v.State
	}
	return out
}

// StatesOf lists the states of the objects of one kind among views, in order.
func StatesOf(views []View, kind string) []string {
	var out []string
	for _, v := range views {
		if v.Kind == kind {
			out = append(out, v.State)
		}
	}
	return out
}

// Derived is a derive function's result: a state (or "" to keep it) and status fields to set.
type Derived struct {
	State  string
	Status map[string]any
}

// DeriveFunc computes an object's derived state and status from its related objects.
type DeriveFunc func(self View, related []View) Derived

// CountDeriveFunc computes an object's derived state and status from how many of its related
// objects are in each state. A derivation that needs no more than that (the generic ones, an
// MCI's aggregate) should be one: the simulator keeps the counts as children move, so deriving
// costs the same for 10 children as for 10,000.
type CountDeriveFunc func(self View, members map[string]int) Derived

// InvariantFunc checks one object against its children (of every kind); a non-nil error is a
// violation.
type InvariantFunc func(self View, children []View) error

var (
	funcsMu sync.RWMutex
	// The built-in families' functions; initialised with the variables (not in init) so that
	// specs loaded during package initialisation find them.
	derives = map[string]DeriveFunc{
		"blazar.lease_status": deriveLeaseStatus,
	}
	countDerives = map[string]CountDeriveFunc{
		"tumblebug.mci_status": deriveMCIStatus,
	}
	invariants = map[string]InvariantFunc{
		"blazar.lease_consistency": checkLease,
		"tumblebug.mci_aggregate":  checkMCIAggregate,
	}
)

// RegisterDerive registers a derive function under a name specs refer to.
func RegisterDerive(name string, f DeriveFunc) {
	funcsMu.Lock()
	defer funcsMu.Unlock()
	derives[name] = f
}

// RegisterCountDerive registers a derive function of the related objects' counts per state.
func RegisterCountDerive(name string, f CountDeriveFunc) {
	funcsMu.Lock()
	defer funcsMu.Unlock()
	countDerives[name] = f
}

// RegisterInvariant registers an invariant under a name specs refer to.
func RegisterInvariant(name string, f InvariantFunc) {
	funcsMu.Lock()
	defer funcsMu.Unlock()
	invariants[name] = f
}

// DeriveFuncOf returns a registered derive function (a function of counts is given the counts
// of the views).
func DeriveFuncOf(name string) (DeriveFunc, bool) {
	funcsMu.RLock()
	defer funcsMu.RUnlock()
	if f, ok := derives[name]; ok {
		return f, true
	}
	if f, ok := countDerives[name]; ok {
		return f.ofViews(), true
	}
	return nil, false
}

// countDeriveFuncOf returns a derive function registered as a function of counts.
func countDeriveFuncOf(name string) (CountDeriveFunc, bool) {
	funcsMu.RLock()
	defer funcsMu.RUnlock()
	f, ok := countDerives[name]
	return f, ok
}

// deriveNames lists the registered derive functions' names.
func deriveNames() []string {
	return slices.Sorted(slices.Values(append(registered(derives), registered(countDerives)...)))
}

// InvariantOf returns a registered invariant.
func InvariantOf(name string) (InvariantFunc, bool) {
	funcsMu.RLock()
	defer funcsMu.RUnlock()
	f, ok := invariants[name]
	return f, ok
}

// registered lists the names a registry of functions holds, sorted.
func registered[F any](m map[string]F) []string {
	funcsMu.RLock()
	defer funcsMu.RUnlock()
	return slices.Sorted(maps.Keys(m))
}

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
		if _, ok := InvariantOf(name); !ok {
			add(fmt.Sprintf("invariants[%d]", i), "unknown invariant %q%s: invariants are Go checks a family registers (%s); a user kind cannot define one",
				name, didYouMean(name, registered(invariants)), listOrNone(registered(invariants)))
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

// RemovingActions names the actions that remove an object of k: those that land in a gone
// state (a deletion's, a user's or the system's).
func (k *Kind) RemovingActions() []string {
	var out []string
	for _, a := range k.AllActions() {
		if !a.Returns && k.IsGone(a.To) {
			out = append(out, a.Name)
		}
	}
	return out
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

// StartPropagations returns the propagations fired when action starts.
func (k *Kind) StartPropagations(action string) []*Propagation {
	var out []*Propagation
	for i := range k.Propagate {
		if k.Propagate[i].MatchesStart(action) {
			out = append(out, &k.Propagate[i])
		}
	}
	return out
}

// LandPropagations returns the propagations fired by a landing in state, from a static state by
// an action (failed when the action failed).
func (k *Kind) LandPropagations(state, from, action string, failed bool) []*Propagation {
	var out []*Propagation
	for i := range k.Propagate {
		if k.Propagate[i].MatchesLand(state, from, action, failed) {
			out = append(out, &k.Propagate[i])
		}
	}
	return out
}

// DrivenByRelations reports whether an action of a kind is run by a relation (a propagation
// or a scale-in of some kind of the registry): such an action happens only with the change
// that drives it, never on its own.
func (r *Registry) DrivenByRelations(kind, action string) bool {
	for _, k := range r.Kinds() {
		for i := range k.Propagate {
			p := &k.Propagate[i]
			if p.To.Kind(k) != kind || p.Remove || p.Abort {
				continue
			}
			if p.Run == action || (p.Run == "" && slices.Contains(p.Start, action)) {
				return true
			}
		}
		for _, c := range k.Children {
			if c.Kind == kind && c.ScaleIn == action {
				return true
			}
		}
	}
	return false
}

// fieldNames lists the kind's declared spec fields.
func (k *Kind) fieldNames() []string {
	out := make([]string, len(k.Fields))
	for i, f := range k.Fields {
		out[i] = f.Name
	}
	return out
}
