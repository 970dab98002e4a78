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
	"math/rand/v2"
	"slices"
	"strings"

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
	ItemName         Construct = "item-name"          // a list whose items are named (its block's name)
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
	HeldCreate       Construct = "held-create"        // a create may be held, then continued
	AutomaticWhere   Construct = "automatic-where"    // an automatic action only objects with a field's value run
	ChildBefore      Construct = "child-before"       // a child's copied time a lead before the parent's
	ChildNotBefore   Construct = "child-not-before"   // a child's copied time never before another time of the parent
	ChildMoved       Construct = "child-moved"        // an action a child runs when its copied field moves
	LinkDeleteRefuse Construct = "link-delete-refuse" // a link that refuses the removal of the object it names
)

// Constructs lists every construct a draw may use, in a fixed order.
var Constructs = []Construct{
	TransitionStates, InstantActions, MultiHopRoute, InitialState, ErrorState, RepairAction,
	SelfHealing, TimerAction, ReturnsAction, FinalState, UpdateAction, WithDeletion,
	WithoutDeletion, FieldString, FieldInteger, FieldNumber, FieldBool, FieldTime,
	FieldScalarList, FieldObject, FieldObjectList, ItemDefaults, ItemName, Bounds, Enum, Defaults,
	Immutable, Required, LinkBuiltin, LinkGenerated, ChildrenEach, ChildrenCount,
	GuardAncestor, GuardLink, LinkStates, DerivedStatus, ParentKind, ParentInStates, KindFailureRoll,
	KindFailureTo, PhaseDurations, ForcedFrom, ActionParentIn, ScalarListBounds,
	ChildrenCopy, DescribedFields, UpdatableIn, TimeAfter, NoFields, HeldCreate, AutomaticWhere,
	ChildBefore, ChildNotBefore, ChildMoved, LinkDeleteRefuse,
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
	child := g.children(&subject, names[3])
	// Drawn last, so that the draws before them stay what they were.
	if child != nil {
		g.timedChild(&subject, child)
		extra = append(extra, *child)
	}
	g.where(&subject)
	if len(subject.Fields) == 0 {
		g.use(NoFields)
	}
	g.hold(&subject)
	g.linkDelete(&subject)
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

// FixedSeeds are the seeds make test runs through Terraform: together they draw every
// construct (TestFixedSeedsCoverEveryConstruct). Cover(500) gives a new set after a change of
// the generator.
// Seed 29 has a link its create sets with `in:` states, to a generated kind (one the suite can
// shut, to see the create refused); seed 373 a child whose copied time has a lead floored at
// another time, a timer that only some children run, and an action run when the time moves;
// seed 76 a link that refuses the removal of the generated object it names (`delete: refuse`).
var FixedSeeds = []uint64{29, 76, 82, 99, 373}

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
