// Package kindgen draws valid kind files at random from what the kind format allows, so that
// "every kind the format accepts works" can be tested on kinds nobody wrote by hand.
//
// A draw is a Set: one subject kind (the one a conformance suite manages), plus the kinds it
// needs beside it (a parent, the children its create makes, a kind its link points at). Every
// draw is reproducible from the seed of its *rand.Rand, and records which constructs of the
// format it used, so a test can check that a fixed set of seeds covers all of them.
package kindgen

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// Construct names one thing of the kind format a draw can use.
type Construct string

// The constructs a draw may use; Constructs lists them all.
const (
	TransitionStates Construct = "transition-states"  // actions that pass through phases
	InstantActions   Construct = "instant-actions"    // actions with no phase
	MultiHopRoute    Construct = "multi-hop-route"    // a static state only several actions reach
	InitialState     Construct = "initial-state"      // a create that starts from a modelled state
	ErrorState       Construct = "error-state"        // failures land in an error state
	RepairAction     Construct = "repair-action"      // a user action out of the error state
	SelfHealing      Construct = "self-healing"       // a system action that starts `after` a while
	TimerAction      Construct = "timer-action"       // an action a time field starts
	ReturnsAction    Construct = "returns-action"     // an action that lands where it started
	FinalState       Construct = "final-state"        // a state users cannot leave (one-way routes)
	UpdateAction     Construct = "update-action"      // spec changes run an action
	WithDeletion     Construct = "deletion"           // a DELETE runs an action into a gone state
	WithoutDeletion  Construct = "no-deletion"        // a DELETE is refused: destroy forgets
	FieldString      Construct = "field-string"       // a string field
	FieldInteger     Construct = "field-integer"      // an integer field
	FieldNumber      Construct = "field-number"       // a number field
	FieldBool        Construct = "field-bool"         // a bool field
	FieldTime        Construct = "field-time"         // a time field
	FieldScalarList  Construct = "field-scalar-list"  // a list of strings
	FieldObject      Construct = "field-object"       // an object with fields
	FieldObjectList  Construct = "field-object-list"  // a list of objects
	ItemDefaults     Construct = "item-defaults"      // items of a list of objects with defaults
	Bounds           Construct = "bounds"             // min/max, max_length, max_items
	Enum             Construct = "enum"               // a string with an enum
	Defaults         Construct = "defaults"           // a top-level field with a default
	Immutable        Construct = "immutable"          // a field whose change replaces the object
	Required         Construct = "required"           // a field a create must set
	LinkBuiltin      Construct = "link-builtin"       // a link field to a built-in kind
	LinkGenerated    Construct = "link-generated"     // a link field to a generated kind
	ChildrenEach     Construct = "children-each"      // one child per item of a list field
	ChildrenCount    Construct = "children-count"     // count children per item (each + count + group)
	GuardAncestor    Construct = "guard-ancestor"     // a guard on the parent's state
	GuardLink        Construct = "guard-link"         // a guard on the linked object's state
	LinkStates       Construct = "link-in"            // a link the create sets needs its object in some states
	DerivedStatus    Construct = "derived-status"     // status fields derived from children
	ParentKind       Construct = "parent"             // the subject lives under a generated parent
	ParentInStates   Construct = "parent-in"          // the parent must be in some states
	KindFailureRoll  Construct = "failure-rollback"   // the kind's failures roll back
	KindFailureTo    Construct = "failure-to"         // the kind's failures land in a state
	PhaseDurations   Construct = "phase-durations"    // phases with their own duration
	ForcedFrom       Construct = "force-from"         // an action allowed from a state only when forced
	ActionParentIn   Construct = "action-parent-in"   // an action overriding the parent's states
	ScalarListBounds Construct = "scalar-list-bounds" // min_items on a list
	ChildrenCopy     Construct = "children-copy"      // children fields copied from the parent
	DescribedFields  Construct = "field-descriptions" // fields with descriptions
	UpdatableIn      Construct = "updatable-in"       // a field changeable only in some states
	TimeAfter        Construct = "time-after"         // a time field that must be after another
	NoFields         Construct = "no-fields"          // a kind that declares no fields
)

// Constructs lists every construct a draw may use, in a fixed order.
var Constructs = []Construct{
	TransitionStates, InstantActions, MultiHopRoute, InitialState, ErrorState, RepairAction,
	SelfHealing, TimerAction, ReturnsAction, FinalState, UpdateAction, WithDeletion,
	WithoutDeletion, FieldString, FieldInteger, FieldNumber, FieldBool, FieldTime,
	FieldScalarList, FieldObject, FieldObjectList, ItemDefaults, Bounds, Enum, Defaults,
	Immutable, Required, LinkBuiltin, LinkGenerated, ChildrenEach, ChildrenCount,
	GuardAncestor, GuardLink, LinkStates, DerivedStatus, ParentKind, ParentInStates, KindFailureRoll,
	KindFailureTo, PhaseDurations, ForcedFrom, ActionParentIn, ScalarListBounds,
	ChildrenCopy, DescribedFields, UpdatableIn, TimeAfter, NoFields,
}

// BuiltinTargets are the built-in kinds a link may point at: kinds with no parent and no
// required field, so a test can make one from a name alone. The value is the state their
// create lands in.
var BuiltinTargets = map[string]string{
	"account":  "CONFIRMED",
	"image":    "CREATED",
	"node":     "ENABLED",
	"cloudlet": "Ready",
}

// Set is one draw: the subject kind and the kinds it needs, in file order.
type Set struct {
	// Kinds are the generated kinds (a built-in link target is not among them).
	Kinds []lifecycle.Kind
	// Subject is the name of the kind a conformance suite manages; Parent, Child and Target
	// name the generated parent, the generated child kind and the link's target kind (built-in
	// or generated), or are empty.
	Subject, Parent, Child, Target string
	// Used are the constructs the draw used, in Constructs order.
	Used []Construct
}

// Kind returns the generated kind of that name.
func (s *Set) Kind(name string) (*lifecycle.Kind, bool) {
	for i := range s.Kinds {
		if s.Kinds[i].Name == name {
			return &s.Kinds[i], true
		}
	}
	return nil, false
}

// Uses reports whether the draw used c.
func (s *Set) Uses(c Construct) bool { return slices.Contains(s.Used, c) }

// YAML renders the set as a kind file, headed by comment (one line per line of it, may be
// empty).
func (s *Set) YAML(comment string) ([]byte, error) {
	var buf bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(comment), "\n") {
		if line != "" {
			fmt.Fprintf(&buf, "# %s\n", line)
		}
	}
	var doc yaml.Node
	if err := doc.Encode(lifecycle.File{Kinds: s.Kinds}); err != nil {
		return nil, fmt.Errorf("rendering the kinds: %w", err)
	}
	compact(&doc)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("rendering the kinds: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("rendering the kinds: %w", err)
	}
	return buf.Bytes(), nil
}

// compact writes lists of scalars, and mappings of scalars and such lists, on one line, as
// people write kind files, and drops the empty name of a list's items. It returns the node's
// depth: 0 for a scalar, 1 for a list or mapping of scalars, and so on.
func compact(n *yaml.Node) int {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "name" && n.Content[i+1].Kind == yaml.ScalarNode && n.Content[i+1].Value == "" {
				n.Content = slices.Delete(n.Content, i, i+2)
				break
			}
		}
	}
	depth := 0
	for _, c := range n.Content {
		depth = max(depth, compact(c))
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return 0
	case yaml.SequenceNode:
		if depth == 0 {
			n.Style = yaml.FlowStyle
		}
	case yaml.MappingNode:
		if depth <= 1 {
			n.Style = yaml.FlowStyle
		}
	case yaml.DocumentNode:
		return depth
	}
	return depth + 1
}

// FarFuture is the value the generator's time fields are meant to hold in tests: timer actions
// at it never start during a test.
const FarFuture = "2099-01-01T00:00:00Z"

// gen holds one draw in progress.
type gen struct {
	r    *rand.Rand
	used map[Construct]bool
	set  *Set
}

func (g *gen) use(c Construct)            { g.used[c] = true }
func (g *gen) chance(p float64) bool      { return g.r.Float64() < p }
func (g *gen) pick(words []string) string { return words[g.r.IntN(len(words))] }

// ForSeed draws the set of one seed: Generate with a PCG source seeded by it.
func ForSeed(seed uint64) *Set {
	return Generate(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
}

// Generate draws a set of kinds from r. The same sequence of r gives the same set.
func Generate(r *rand.Rand) *Set {
	g := &gen{r: r, used: map[Construct]bool{}, set: &Set{}}
	names := g.names(kindWords, 4)
	subject := lifecycle.Kind{Name: names[0], Family: "gen_" + names[0], Collection: names[0] + "s"}
	subject.Description = "A generated kind (" + names[0] + ")."
	g.set.Subject = subject.Name

	g.stateMachine(&subject)
	g.fields(&subject)

	var extra []lifecycle.Kind
	if g.chance(0.35) {
		parent := g.simpleKind(names[1], subject.Family, "OPEN", true)
		g.set.Parent = parent.Name
		g.use(ParentKind)
		subject.Parent = &lifecycle.Parent{Kind: parent.Name, Delete: g.pick([]string{"cascade", "refuse"})}
		if subject.Deletion == nil {
			// Objects that cannot be deleted would keep a refusing parent for ever (lifecyclesim
			// check refuses it).
			subject.Parent.Delete = "cascade"
		}
		if g.chance(0.5) {
			subject.Parent.States = []string{"OPEN"}
			g.use(ParentInStates)
			if del := g.deletionActionOf(&subject); del != nil && g.chance(0.6) {
				del.IgnoreParent = true
			}
			if len(subject.Actions) > 0 && g.chance(0.4) {
				a := &subject.Actions[g.r.IntN(len(subject.Actions))]
				if a.ByUser() && !a.IgnoreParent {
					a.ParentStates = []string{"OPEN", "SHUT"}
					g.use(ActionParentIn)
				}
			}
		}
		if g.chance(0.6) {
			subject.Guards = append(subject.Guards, lifecycle.Guard{Ancestor: parent.Name, States: []string{"OPEN"}})
			g.use(GuardAncestor)
		}
		extra = append(extra, parent)
	}
	if g.chance(0.55) {
		target := g.link(&subject, names[2])
		if target != nil {
			extra = append(extra, *target)
		}
	}
	if child := g.children(&subject, names[3]); child != nil {
		extra = append(extra, *child)
	}
	if len(subject.Fields) == 0 {
		g.use(NoFields)
	}
	g.set.Kinds = append([]lifecycle.Kind{subject}, extra...)
	for _, c := range Constructs {
		if g.used[c] {
			g.set.Used = append(g.set.Used, c)
		}
	}
	return g.set
}

// Word lists: kind names that are no built-in kind's nor one of the provider's own types,
// state names and action names.
var (
	kindWords   = []string{"gizmo", "kiosk", "beacon", "ferry", "quarry", "lantern", "harbor", "orchard", "relay", "turbine", "silo", "drone", "vault", "forge", "tram", "mill"}
	stateWords  = []string{"IDLE", "ACTIVE", "PARKED", "SEALED", "LIVE", "DORMANT", "READY", "STANDBY", "ONLINE", "DRAINED", "LOCKED", "WARM"}
	actionWords = []string{"wake", "park", "seal", "drain", "lock", "warm", "arm", "tune", "hold", "spin", "load", "prime", "rest", "shift"}
	fieldWords  = []string{"colour", "size", "weight", "label", "ratio", "enabled", "priority", "budget", "note", "owner", "region_code", "level", "speed", "quota"}
)

// names draws n distinct words.
func (g *gen) names(words []string, n int) []string {
	perm := g.r.Perm(len(words))
	out := make([]string, n)
	for i := range out {
		out[i] = words[perm[i]]
	}
	return out
}

// phases draws 0 to max phases for an action, adding their transition states to k.
func (g *gen) phases(k *lifecycle.Kind, action string, minN, maxN int) []lifecycle.Phase {
	n := minN + g.r.IntN(maxN-minN+1)
	var out []lifecycle.Phase
	for i := range n {
		st := strings.ToUpper(action) + "_ING"
		if n > 1 {
			st = fmt.Sprintf("%s_ING_%d", strings.ToUpper(action), i+1)
		}
		p := lifecycle.Phase{State: st}
		if g.chance(0.25) {
			p.Duration = lifecycle.Duration(time.Duration(1+g.r.IntN(3)) * 500 * time.Millisecond)
			g.use(PhaseDurations)
		}
		k.States.Transition = append(k.States.Transition, st)
		out = append(out, p)
	}
	if n > 0 {
		g.use(TransitionStates)
	} else {
		g.use(InstantActions)
	}
	return out
}

// stateMachine draws the subject's states and actions: a create, a chain of actions that
// reaches every ordinary state (some only through several hops), extra edges, an error state
// and its repair, a final state, a gone state for deletion, timer and system actions.
func (g *gen) stateMachine(k *lifecycle.Kind) {
	n := 2 + g.r.IntN(4)
	states := g.names(stateWords, n)
	k.States.Static = append(k.States.Static, states...)
	k.DefaultDuration = lifecycle.Duration(time.Second)

	hasError := g.chance(0.6)
	const errState, finalState, goneState = "FAULTY", "RETIRED", "REMOVED"
	if hasError {
		k.States.Error = []string{errState}
		g.use(ErrorState)
	}
	// The kind's failure rule.
	if hasError && g.chance(0.5) {
		k.Failure = lifecycle.Failure{To: errState}
		g.use(KindFailureTo)
	} else {
		k.Failure = lifecycle.Failure{Rollback: true}
		g.use(KindFailureRoll)
	}

	if g.chance(0.3) {
		k.Initial = "PLANNED"
		k.States.Static = append([]string{"PLANNED"}, k.States.Static...)
		g.use(InitialState)
	}
	k.Create = lifecycle.Action{Name: g.pick([]string{"create", "build", "provision"}), To: states[0]}
	// With an error state the create can fail, so that failures reach it.
	minPhases := 0
	if hasError {
		minPhases = 1
		if k.Failure.Rollback {
			k.Failure.Fatal = errState
		}
	}
	k.Create.Via = g.phases(k, k.Create.Name, minPhases, 2)
	if k.Initial == "" && len(k.Create.Via) > 0 && k.Failure.Rollback {
		// A create from nothing cannot roll back.
		to := states[0]
		if hasError {
			to = errState
		}
		k.Create.Failure = &lifecycle.Failure{To: to}
	}

	used := map[string]bool{k.Create.Name: true}
	actionName := func() string {
		for {
			w := g.pick(actionWords)
			if !used[w] {
				used[w] = true
				return w
			}
			w = fmt.Sprintf("%s_%d", w, g.r.IntN(100))
			if !used[w] {
				used[w] = true
				return w
			}
		}
	}
	addAction := func(a lifecycle.Action, minPhases int) *lifecycle.Action {
		a.Via = g.phases(k, a.Name, minPhases, 2)
		k.Actions = append(k.Actions, a)
		return &k.Actions[len(k.Actions)-1]
	}
	// Every ordinary state is reached from the one before it (or an earlier one), so later
	// states often need several hops.
	hops := map[string]int{states[0]: 0}
	for i := 1; i < n; i++ {
		from := states[i-1]
		if g.chance(0.3) {
			from = states[g.r.IntN(i)]
		}
		a := lifecycle.Action{Name: actionName(), From: []string{from}, To: states[i]}
		if g.chance(0.3) && i > 1 {
			a.From = append(a.From, states[g.r.IntN(i-1)])
			slices.Sort(a.From)
			a.From = slices.Compact(a.From)
		}
		addAction(a, 0)
		hops[states[i]] = hops[from] + 1
		if hops[states[i]] >= 2 {
			g.use(MultiHopRoute)
		}
	}
	// A way back to the first state from some later one, sometimes.
	if n > 1 && g.chance(0.6) {
		addAction(lifecycle.Action{Name: actionName(), From: []string{states[n-1]}, To: states[0]}, 0)
	}
	if g.chance(0.4) {
		from := states[g.r.IntN(n)]
		addAction(lifecycle.Action{Name: actionName(), From: []string{from}, Returns: true}, 1)
		g.use(ReturnsAction)
	}
	if g.chance(0.2) && n > 1 {
		a := addAction(lifecycle.Action{Name: actionName(), From: []string{states[1]}, To: states[0]}, 0)
		a.ForceFrom = []string{states[n-1]}
		if states[n-1] == states[1] {
			a.ForceFrom = nil
		} else {
			g.use(ForcedFrom)
		}
	}
	if g.chance(0.4) {
		k.States.Final = []string{finalState}
		addAction(lifecycle.Action{Name: "retire", From: []string{states[n-1]}, To: finalState}, 0)
		g.use(FinalState)
	}
	if hasError {
		g.use(RepairAction)
		addAction(lifecycle.Action{Name: "repair", From: []string{errState}, To: states[0]}, 0)
		if g.chance(0.4) {
			k.Actions = append(k.Actions, lifecycle.Action{Name: "heal", Actor: lifecycle.ActorSystem,
				After: lifecycle.Duration(time.Hour), From: []string{errState}, To: states[0]})
			g.use(SelfHealing)
		}
	}
	if g.chance(0.3) {
		k.Fields = append(k.Fields, lifecycle.Field{Name: "wake_at", Type: lifecycle.TypeTime,
			Description: "When the timer action starts.", Default: FarFuture})
		a := lifecycle.Action{Name: "alarm", Actor: lifecycle.ActorTimer, At: "wake_at", From: []string{states[0]}, To: states[n-1]}
		k.Actions = append(k.Actions, a)
		g.use(TimerAction)
		g.use(FieldTime)
		g.use(Defaults)
		if g.chance(0.5) {
			k.Fields = append(k.Fields, lifecycle.Field{Name: "snooze_at", Type: lifecycle.TypeTime, After: "wake_at"})
			g.use(TimeAfter)
		}
	}
	if g.chance(0.25) {
		a := addAction(lifecycle.Action{Name: "reconfigure", From: slices.Clone(states), Returns: true}, 1)
		k.Update = a.Name
		g.use(UpdateAction)
	}
	if g.chance(0.6) {
		from := slices.Clone(states)
		if k.Initial != "" {
			from = append([]string{k.Initial}, from...)
		}
		if hasError {
			from = append(from, errState)
		}
		if len(k.States.Final) > 0 {
			from = append(from, finalState)
		}
		k.States.Gone = []string{goneState}
		addAction(lifecycle.Action{Name: "remove", From: from, To: goneState}, 0)
		k.Deletion = map[string][]string{"destroy": {"remove"}}
		g.use(WithDeletion)
	} else {
		g.use(WithoutDeletion)
	}
}

// deletionActionOf is the kind's deletion action, if any.
func (g *gen) deletionActionOf(k *lifecycle.Kind) *lifecycle.Action {
	for i := range k.Actions {
		if k.Actions[i].Name == "remove" {
			return &k.Actions[i]
		}
	}
	return nil
}

// fields draws the subject's scalar, list and object fields.
func (g *gen) fields(k *lifecycle.Kind) {
	n := g.r.IntN(5)
	names := g.names(fieldWords, n)
	types := []lifecycle.FieldType{lifecycle.TypeString, lifecycle.TypeInteger, lifecycle.TypeNumber, lifecycle.TypeBool, lifecycle.TypeTime}
	for _, name := range names {
		f := g.scalar(name, types[g.r.IntN(len(types))], true)
		k.Fields = append(k.Fields, f)
	}
	if g.chance(0.3) {
		f := lifecycle.Field{Name: "tags", Type: lifecycle.TypeList, Items: &lifecycle.Field{Type: lifecycle.TypeString, MaxLength: 32},
			MaxItems: 5}
		g.use(FieldScalarList)
		g.use(Bounds)
		if g.chance(0.4) {
			f.MinItems = 1
			f.Required = true
			g.use(ScalarListBounds)
			g.use(Required)
		}
		k.Fields = append(k.Fields, f)
	}
	if g.chance(0.3) {
		f := lifecycle.Field{Name: "settings", Type: lifecycle.TypeObject, Fields: []lifecycle.Field{
			g.scalar("mode", lifecycle.TypeString, false),
			g.scalar("depth", lifecycle.TypeInteger, false),
		}}
		g.use(FieldObject)
		k.Fields = append(k.Fields, f)
	}
	if len(k.Fields) > 0 && g.chance(0.3) {
		i := g.r.IntN(len(k.Fields))
		if !k.Fields[i].Immutable && k.Fields[i].Type != lifecycle.TypeTime {
			k.Fields[i].UpdatableIn = []string{k.States.Static[0]}
			if k.Initial != "" && len(k.States.Static) > 1 {
				k.Fields[i].UpdatableIn = []string{k.States.Static[1]}
			}
			g.use(UpdatableIn)
		}
	}
}

// scalar draws one scalar field; top says it is a top-level field (which may be immutable).
func (g *gen) scalar(name string, t lifecycle.FieldType, top bool) lifecycle.Field {
	f := lifecycle.Field{Name: name, Type: t}
	if g.chance(0.5) {
		f.Description = "The " + strings.ReplaceAll(name, "_", " ") + " of the object."
		g.use(DescribedFields)
	}
	switch t {
	case lifecycle.TypeString:
		g.use(FieldString)
		if g.chance(0.4) {
			f.Enum = []string{"red", "green", "blue"}
			g.use(Enum)
		} else if g.chance(0.5) {
			f.MaxLength = 8 + g.r.IntN(56)
			g.use(Bounds)
		}
	case lifecycle.TypeInteger:
		g.use(FieldInteger)
		if g.chance(0.7) {
			lo, hi := float64(g.r.IntN(5)), float64(10+g.r.IntN(100))
			f.Min, f.Max = &lo, &hi
			g.use(Bounds)
		}
	case lifecycle.TypeNumber:
		g.use(FieldNumber)
		if g.chance(0.7) {
			lo, hi := 0.5, float64(10+g.r.IntN(100))+0.5
			f.Min, f.Max = &lo, &hi
			g.use(Bounds)
		}
	case lifecycle.TypeBool:
		g.use(FieldBool)
	case lifecycle.TypeTime:
		g.use(FieldTime)
	}
	switch {
	case g.chance(0.3) && top:
		f.Required = true
		g.use(Required)
	case g.chance(0.45):
		f.Default = g.defaultOf(&f)
		g.use(Defaults)
	}
	if top && g.chance(0.25) {
		f.Immutable = true
		g.use(Immutable)
	}
	return f
}

// defaultOf is a valid default value of a scalar field.
func (g *gen) defaultOf(f *lifecycle.Field) any {
	switch f.Type {
	case lifecycle.TypeString:
		if len(f.Enum) > 0 {
			return f.Enum[g.r.IntN(len(f.Enum))]
		}
		return "dflt"
	case lifecycle.TypeInteger:
		if f.Min != nil {
			return int(*f.Min) + 1
		}
		return 7
	case lifecycle.TypeNumber:
		if f.Min != nil {
			return *f.Min + 1
		}
		return 2.5
	case lifecycle.TypeBool:
		return g.chance(0.5)
	case lifecycle.TypeTime:
		return FarFuture
	}
	return nil
}

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

// FixedSeeds are the seeds make test runs through Terraform: together they draw every
// construct (TestFixedSeedsCoverEveryConstruct). Cover(500) gives a new set after a change of
// the generator.
// Seed 11 adds a link its create sets with `in:` states, to a generated kind (one the suite can
// shut, to see the create refused).
var FixedSeeds = []uint64{11, 46, 99, 178, 355}

// Missing lists the constructs none of the seeds' sets uses.
func Missing(seeds []uint64) []Construct {
	used := map[Construct]bool{}
	for _, seed := range seeds {
		for _, c := range ForSeed(seed).Used {
			used[c] = true
		}
	}
	var out []Construct
	for _, c := range Constructs {
		if !used[c] {
			out = append(out, c)
		}
	}
	return out
}

// Cover picks, greedily among seeds 0 to n-1, a few seeds whose sets use every construct
// those seeds use at all.
func Cover(n uint64) []uint64 {
	sets := make([]*Set, n)
	for seed := range n {
		sets[seed] = ForSeed(seed)
	}
	covered := map[Construct]bool{}
	var out []uint64
	for {
		best, gain := -1, 0
		for i, s := range sets {
			g := 0
			for _, c := range s.Used {
				if !covered[c] {
					g++
				}
			}
			if g > gain {
				best, gain = i, g
			}
		}
		if best < 0 {
			slices.Sort(out)
			return out
		}
		out = append(out, uint64(best))
		for _, c := range sets[best].Used {
			covered[c] = true
		}
	}
}
