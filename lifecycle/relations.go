package lifecycle

import (
	"fmt"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// Relations are how objects of different kinds live together: children a create makes,
// actions that propagate to related objects, state derived from related objects, guards on
// ancestors and linked objects, what a parent's removal does to its children, and invariants
// across objects. They are data in the spec, so user-defined kinds have them too; what a table
// cannot say is a named function a family registers (Registry.RegisterDerive,
// Registry.RegisterInvariant).

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
	// Before makes the copied (time) fields that long before the parent's (Blazar's
	// before_end_lease event, an hour before end_date: minutes_before_end_lease). When the
	// parent's field moves, the child's moves by as much, keeping its lead, as Blazar does.
	Before Duration `yaml:"before,omitempty" json:"before,omitempty"`
	// NotBefore names a time field of the parent the copied times are never earlier than (a
	// lease shorter than Before has its before_end_lease event at its start_date).
	NotBefore string `yaml:"not_before,omitempty" json:"not_before,omitempty"`
	// Moved names an action a child runs when a copied field of its moves, if the action is
	// allowed from the child's state (a done before_end_lease event is UNDONE again, to run at
	// its new time).
	Moved string `yaml:"moved,omitempty" json:"moved,omitempty"`
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

// Copied is the value the child field copied from the parent's field from takes, given the
// parent's spec: the parent's value, or for a child with a lead (Before, NotBefore) that time
// moved earlier. ok is false when the parent has no value.
func (c *Child) Copied(parent map[string]any, from string) (v any, ok bool) {
	v, ok = parent[from]
	if !ok || (c.Before == 0 && c.NotBefore == "") {
		return v, ok
	}
	t, isTime := TimeValue(v)
	if !isTime {
		return v, ok
	}
	return c.notBefore(parent, t.Add(-time.Duration(c.Before))), true
}

// MovedValue is the value a copied child field takes when the parent's field from changes from
// old to the parent's current spec: the parent's new value, or for a child with a lead the
// child's time moved by as much as the parent's (Blazar keeps the before_end_lease event's
// lead over end_date), never before NotBefore.
func (c *Child) MovedValue(parent, old map[string]any, from string, child any) any {
	v := parent[from]
	if c.Before == 0 && c.NotBefore == "" {
		return v
	}
	now, ok1 := TimeValue(v)
	was, ok2 := TimeValue(old[from])
	kid, ok3 := TimeValue(child)
	if !ok1 || !ok2 || !ok3 {
		v, _ = c.Copied(parent, from)
		return v
	}
	return c.notBefore(parent, kid.Add(now.Sub(was)))
}

// notBefore is t, or the parent's NotBefore time when t is earlier, as the spec's RFC 3339.
func (c *Child) notBefore(parent map[string]any, t time.Time) string {
	if nb, ok := TimeValue(parent[c.NotBefore]); ok && t.Before(nb) {
		t = nb
	}
	return t.UTC().Format(time.RFC3339Nano)
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
// field again. Delete says what removing the linked object does while the field names it:
// clear the field (the default) or refuse the removal (a Sahara cluster template in use by a
// cluster).
type Link struct {
	Field     string   `yaml:"field" json:"field"`
	Kind      string   `yaml:"kind" json:"kind"`
	SetBy     Names    `yaml:"set_by,omitempty" json:"set_by,omitempty"`
	States    []string `yaml:"in,omitempty" json:"states,omitempty" was:"states"`
	ClearedBy Names    `yaml:"cleared_by,omitempty" json:"cleared_by,omitempty"`
	Delete    string   `yaml:"delete,omitempty" json:"delete,omitempty"`
}

// Link delete policies: what removing a linked object does while a link names it.
const (
	// LinkClear clears the link field of the objects naming it (the default).
	LinkClear = "clear"
	// LinkRefuse refuses the removal while an object's link names it.
	LinkRefuse = DeleteRefuse
)

// Refuses reports whether the link refuses the removal of the object it names.
func (l Link) Refuses() bool { return l.Delete == LinkRefuse }

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

// DrivenByRelations reports whether an action of a kind is run by a relation (a propagation,
// a scale-in or a moved child of some kind of the registry): such an action happens only with the change
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
			if c.Kind == kind && (c.ScaleIn == action || c.Moved == action) {
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
