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
