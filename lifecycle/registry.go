package lifecycle

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Registry holds kinds by name and by collection, and the family functions their specs refer
// to (RegisterDerive, RegisterInvariant).
type Registry struct {
	byName       map[string]*Kind
	byCollection map[string]*Kind
	order        []string
	funcs        *funcs
}

// NewRegistry returns a registry with no kinds and the built-in families' functions.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]*Kind{}, byCollection: map[string]*Kind{}, funcs: newFuncs()}
}

// Add validates cross-kind rules (unique names and collections, known parents and parent
// states) and adds the kinds. Nothing is added when an error is returned.
func (r *Registry) Add(kinds ...*Kind) error {
	var errs SpecErrors
	names := map[string]*Kind{}
	colls := map[string]*Kind{}
	for _, k := range kinds {
		if o := cmpOr(r.byName[k.Name], names[k.Name]); o != nil {
			errs = append(errs, k.loc.err("name", "duplicate kind name: %s is already a kind (%s); rename this one", k.Name, o.file))
		}
		if o := cmpOr(r.byCollection[k.Collection], colls[k.Collection]); o != nil {
			errs = append(errs, k.loc.err("collection", "collection %q is already used by kind %s; choose another URL path segment", k.Collection, o.Name))
		}
		names[k.Name] = k
		colls[k.Collection] = k
	}
	lookup := func(name string) *Kind {
		if k := names[name]; k != nil {
			return k
		}
		return r.byName[name]
	}
	known := slices.Clone(r.order)
	for _, k := range kinds {
		known = append(known, k.Name)
	}
	for _, k := range kinds {
		if k.Parent == nil {
			continue
		}
		p := lookup(k.Parent.Kind)
		if p == nil {
			errs = append(errs, k.loc.err("parent.kind", "unknown parent kind %q%s", k.Parent.Kind, didYouMean(k.Parent.Kind, known)))
			continue
		}
		check := func(field string, states []string) {
			for j, s := range states {
				if !p.IsStatic(s) {
					errs = append(errs, k.loc.err(fmt.Sprintf("%s[%d]", field, j), "%q is not a static state of parent kind %s%s", s, p.Name, didYouMean(s, p.States.Static)))
				}
			}
		}
		check("parent.in", k.Parent.States)
		for i, a := range k.AllActions() {
			field := "create"
			if i > 0 {
				field = fmt.Sprintf("actions[%d]", i-1)
			}
			check(field+".parent_in", a.ParentStates)
		}
		if cycle := parentCycle(k, lookup); cycle != nil {
			errs = append(errs, k.loc.err("parent.kind", "parents form a cycle: %s", strings.Join(cycle, " → ")))
		}
	}
	for _, k := range kinds {
		errs = append(errs, checkRelations(k, lookup, known)...)
	}
	if len(errs) > 0 {
		return errs
	}
	for _, k := range kinds {
		r.byName[k.Name] = k
		r.byCollection[k.Collection] = k
		r.order = append(r.order, k.Name)
	}
	return nil
}

// Kind returns the named kind.
func (r *Registry) Kind(name string) (*Kind, error) {
	if k := r.byName[name]; k != nil {
		return k, nil
	}
	return nil, &UnknownKindError{Kind: name, Known: r.Names()}
}

// ByCollection returns the kind served under a URL collection name.
func (r *Registry) ByCollection(collection string) (*Kind, bool) {
	k, ok := r.byCollection[collection]
	return k, ok
}

// Names returns the kind names, sorted.
func (r *Registry) Names() []string {
	out := slices.Clone(r.order)
	sort.Strings(out)
	return out
}

// Kinds returns every kind, sorted by name.
func (r *Registry) Kinds() []*Kind {
	names := r.Names()
	out := make([]*Kind, len(names))
	for i, n := range names {
		out[i] = r.byName[n]
	}
	return out
}
