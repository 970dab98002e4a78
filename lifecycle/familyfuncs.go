package lifecycle

import (
	"maps"
	"slices"
	"sync"
)

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

// funcs are family functions by the names specs give them: derive functions (of the related
// objects, or of their counts per state) and invariants. Every Registry holds a set of its
// own, starting with the built-in families', so a test registers into its own registry and
// no registration is seen by another.
type funcs struct {
	mu           sync.RWMutex
	derives      map[string]DeriveFunc
	countDerives map[string]CountDeriveFunc
	invariants   map[string]InvariantFunc
}

// builtinFuncs are the built-in families' functions, the only ones a kind file may name (a
// user kind cannot define one): a kind is checked against them when it is compiled.
// Initialised with the variable (not in init) so that specs loaded during package
// initialisation find them.
var builtinFuncs = newFuncs()

// newFuncs returns the built-in families' functions, in maps of their own.
func newFuncs() *funcs {
	return &funcs{
		derives: map[string]DeriveFunc{
			"blazar.lease_status": deriveLeaseStatus,
		},
		countDerives: map[string]CountDeriveFunc{
			"tumblebug.mci_status": deriveMCIStatus,
		},
		invariants: map[string]InvariantFunc{
			"blazar.lease_consistency": checkLease,
			"tumblebug.mci_aggregate":  checkMCIAggregate,
		},
	}
}

// derive returns a derive function (a function of counts is given the counts of the views).
func (fs *funcs) derive(name string) (DeriveFunc, bool) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	if f, ok := fs.derives[name]; ok {
		return f, true
	}
	if f, ok := fs.countDerives[name]; ok {
		return f.ofViews(), true
	}
	return nil, false
}

// countDerive returns a derive function registered as a function of counts.
func (fs *funcs) countDerive(name string) (CountDeriveFunc, bool) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	f, ok := fs.countDerives[name]
	return f, ok
}

// invariant returns an invariant.
func (fs *funcs) invariant(name string) (InvariantFunc, bool) {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	f, ok := fs.invariants[name]
	return f, ok
}

// deriveNames lists the derive functions' names, sorted.
func (fs *funcs) deriveNames() []string {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	return slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(fs.derives)), slices.Collect(maps.Keys(fs.countDerives))...)))
}

// invariantNames lists the invariants' names, sorted.
func (fs *funcs) invariantNames() []string {
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	return slices.Sorted(maps.Keys(fs.invariants))
}

// RegisterDerive registers a derive function of r under a name its kinds' specs refer to
// (the built-in families' are registered in every registry).
func (r *Registry) RegisterDerive(name string, f DeriveFunc) {
	r.funcs.mu.Lock()
	defer r.funcs.mu.Unlock()
	r.funcs.derives[name] = f
}

// RegisterCountDerive registers a derive function of r of the related objects' counts per
// state.
func (r *Registry) RegisterCountDerive(name string, f CountDeriveFunc) {
	r.funcs.mu.Lock()
	defer r.funcs.mu.Unlock()
	r.funcs.countDerives[name] = f
}

// RegisterInvariant registers an invariant of r under a name its kinds' specs refer to.
func (r *Registry) RegisterInvariant(name string, f InvariantFunc) {
	r.funcs.mu.Lock()
	defer r.funcs.mu.Unlock()
	r.funcs.invariants[name] = f
}

// Invariant returns r's invariant of that name.
func (r *Registry) Invariant(name string) (InvariantFunc, bool) { return r.funcs.invariant(name) }

// Derivation returns the function computing the derived state and status d declares, with r's
// functions: the derivations of Use in order, then the family function. A later derivation's
// state wins over an earlier one's. ok is false when d names a function r does not have.
func (r *Registry) Derivation(d *Derive) (DeriveFunc, bool) { return d.fn(r.funcs) }

// CountDerivation returns d as a function of its children's counts per state, when every
// derivation it uses needs no more than those counts (the generic ones, and family functions
// registered with RegisterCountDerive). A caller that keeps the counts as children move then
// derives at a cost independent of how many children there are.
func (r *Registry) CountDerivation(d *Derive) (CountDeriveFunc, bool) { return d.countFn(r.funcs) }
