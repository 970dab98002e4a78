package table

import (
	"fmt"

	"github.com/google/btree"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// packed is an entry's object as a read copies it under the lock, decoded after: its packed
// form and its columns (an entry's data is replaced, never changed).
type packed struct {
	data string
	cols codec.Columns
}

// copyOf copies what decoding an entry's object needs.
func (e *Entry) copyOf() packed {
	return packed{data: e.Data, cols: codec.Columns{ID: e.ID(), Tenant: e.Tenant, Kind: e.Kind, ParentID: e.Parent, State: e.State, Version: e.Version}}
}

// decode decodes a copied entry's object.
func (p packed) decode() (*store.Object, error) {
	return codec.UnpackObject(codec.Bytes(p.data), p.cols)
}

// get returns a tenant's object, packed.
func (t *Table) get(tenant, id string) (packed, bool) {
	e, ok := t.Lookup(id)
	if !ok || e.Tenant != tenant {
		return packed{}, false
	}
	return e.copyOf(), true
}

// list returns a tenant's objects that f selects, packed, in ID order, at most f.Limit.
// It walks the index that narrows the search most, which must exist (see needsIndex).
func (t *Table) list(tenant string, f store.Filter, skip func(id string) bool) []packed {
	var out []packed
	t.visit(tenant, f, func(e *Entry) bool {
		if skip == nil || !skip(e.ID()) {
			out = append(out, e.copyOf())
		}
		return f.Limit <= 0 || len(out) < f.Limit
	})
	return out
}

// visit calls fn for each of a tenant's entries that f selects, in ID order, until it returns
// false (f.Limit is the caller's).
func (t *Table) visit(tenant string, f store.Filter, fn func(*Entry) bool) {
	visit := func(e *Entry) bool {
		if matches(f, e) {
			return fn(e)
		}
		return true
	}
	// A List of one parent's children walks its tree, one of one kind in one state that
	// state's tree (both by ID), any other the index that narrows it most.
	var items *btree.BTreeG[stateItem]
	switch {
	case f.ParentID != "":
		items = t.byParent[[2]string{tenant, f.ParentID}]
	case f.Kind != "" && f.State != "" && f.Link[0] == "":
		items = t.byState[stateKey{tenant, f.Kind, f.State}]
	default:
		tree, p, within := t.index(tenant, f)
		r, done := t.pivot(p)
		tree.AscendGreaterOrEqual(r, func(it ref) bool {
			e := t.entry(it)
			return within(e) && visit(e)
		})
		done()
		return
	}
	if items != nil {
		p := entryOf(f.After, Row{})
		r, done := t.pivot(p)
		items.AscendGreaterOrEqual(newStateItem(p, r), func(it stateItem) bool { return visit(t.entry(it.r)) })
		done()
	}
}

// needsIndex reports whether listing with f must first build a spec field's index.
func (t *Table) needsIndex(f store.Filter) bool {
	_, ok := t.links[f.Link[0]]
	return f.Link[0] != "" && !ok
}

// buildIndex indexes a spec field of every object (once per field).
func (t *Table) buildIndex(field string) error {
	if _, ok := t.links[field]; ok {
		return nil
	}
	tree := t.tree(lessLink(field))
	for _, e := range t.slots {
		if e == nil {
			continue
		}
		spec, err := codec.PackedSpec(codec.Bytes(e.Data))
		if err != nil {
			return fmt.Errorf("index spec.%s of %s: %w", field, e.ID(), err)
		}
		// Under the write lock no reader looks at the entry: it can change in place.
		e.link(field, spec)
		if _, ok := e.links()[field]; ok {
			tree.ReplaceOrInsert(e.ref())
		}
	}
	t.links[field] = tree
	return nil
}

// index picks the tree a List walks, where it starts, and where the range f can match ends
// (a List of one parent's children, or of one kind in one state, walks that tree instead).
func (t *Table) index(tenant string, f store.Filter) (*btree.BTreeG[ref], *Entry, func(*Entry) bool) {
	p := entryOf(f.After, Row{Tenant: tenant, Kind: f.Kind})
	switch {
	case f.Link[0] != "":
		field, value := f.Link[0], f.Link[1]
		p.setLinks(map[string]string{field: value})
		return t.links[field], p, func(e *Entry) bool { return e.Tenant == tenant && e.links()[field] == value }
	case f.Kind != "":
		return t.byKind, p, func(e *Entry) bool { return e.Tenant == tenant && e.Kind == f.Kind }
	default:
		return t.ordered, p, func(e *Entry) bool { return e.Tenant == tenant }
	}
}

// matches is store.Filter.Matches on an entry.
func matches(f store.Filter, e *Entry) bool {
	if f.Kind != "" && e.Kind != f.Kind || f.ParentID != "" && e.Parent != f.ParentID || f.State != "" && e.State != f.State {
		return false
	}
	if f.Link[0] != "" {
		if v, ok := e.links()[f.Link[0]]; !ok || v != f.Link[1] {
			return false
		}
	}
	return f.After == "" || e.ID() > f.After
}
