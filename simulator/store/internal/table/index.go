package table

import (
	"github.com/google/btree"
)

// indexes are the trees every entry is in, with their orders.
func (t *Table) indexes() [2]index {
	return [2]index{{t.ordered, lessOrdered}, {t.byKind, lessKind}}
}

// itemTree returns the tree of k in trees (byState, byParent), made if asked to.
func itemTree[K comparable](t *Table, trees map[K]*btree.BTreeG[stateItem], k K, create bool) *btree.BTreeG[stateItem] {
	tree := trees[k]
	if tree == nil && create {
		tree = btree.NewG(tableDegree, t.lessStateItem)
		trees[k] = tree
	}
	return tree
}

// placeItem puts an entry's item in the tree of k, or takes it out; drop removes a tree
// left empty.
func placeItem[K comparable](t *Table, trees map[K]*btree.BTreeG[stateItem], k K, it stateItem, in, drop bool) {
	tree := itemTree(t, trees, k, in)
	putOrDelete(tree, it, in)
	if drop && tree.Len() == 0 {
		delete(trees, k)
	}
}

type index struct {
	tree *btree.BTreeG[ref]
	less func(a, b *Entry) bool
}

// Set stores an object's entry: a new one, or the object's entry changed in place to v.
// Strings the table already holds (the object's ID, its tenant, kind, state and parent's ID)
// are shared, not kept again. It returns the stored entry.
func (t *Table) Set(v Entry) *Entry {
	e, ok := t.Lookup(v.ID())
	if !ok {
		e = newStoredEntry(&v)
		t.count(e)
		t.store(e)
		t.enter(e, t.movesOf(nil, e))
		return e
	}
	// Take the entry out of the indexes whose keys change (while it still sorts as before),
	// change it, and put it back in those.
	m := t.movesOf(e, &v)
	t.leave(e, m)
	if e.Tenant == v.Tenant && e.Kind == v.Kind && e.State == v.State {
		v.Tenant, v.Kind, v.State = e.Tenant, e.Kind, e.State
		if v.Parent == e.Parent {
			v.Parent = e.Parent
		} else {
			t.shareParent(&v)
		}
		e.Row = v.Row
		e.setLinks(v.links())
	} else {
		t.uncount(e)
		e.Row = v.Row
		e.setLinks(v.links())
		t.count(e)
	}
	t.enter(e, m)
	return e
}

// moves names the indexes an entry leaves and enters when it changes.
type moves struct {
	trees              [2]bool // t.indexes()
	state, parent, due bool
	links              []string
}

// movesOf says in which indexes an entry's key differs between a and b; with a or b nil (a new
// entry, a removal) that is every index.
func (t *Table) movesOf(a, b *Entry) moves {
	whole := a == nil || b == nil
	var m moves
	for i, x := range t.indexes() {
		m.trees[i] = whole || !sameKey(x.less, a, b)
	}
	m.state = whole || a.stateKey() != b.stateKey()
	m.parent = whole || a.parentKey() != b.parentKey()
	m.due = whole || a.Due != b.Due || a.Tenant != b.Tenant
	for field := range t.links {
		if whole || hasLink(a, field) != hasLink(b, field) || a.links()[field] != b.links()[field] {
			m.links = append(m.links, field)
		}
	}
	return m
}

// leave takes an entry out of the indexes m names that it is in.
func (t *Table) leave(e *Entry, m moves) { t.place(e, m, false) }

// enter puts an entry into the indexes m names that it belongs in.
func (t *Table) enter(e *Entry, m moves) { t.place(e, m, true) }

func (t *Table) place(e *Entry, m moves, in bool) {
	r := e.ref()
	for i, x := range t.indexes() {
		if m.trees[i] {
			putOrDelete(x.tree, r, in)
		}
	}
	if m.state { // a state's tree stays for reuse: there are few, and actions empty them often
		placeItem(t, t.byState, e.stateKey(), newStateItem(e, r), in, false)
	}
	if m.parent && e.Parent != "" { // a parent's tree goes with its last child
		placeItem(t, t.byParent, e.parentKey(), newStateItem(e, r), in, true)
	}
	if m.due && e.Due.Valid {
		t.placeDue(e, r, in)
	}
	for _, field := range m.links {
		if hasLink(e, field) {
			putOrDelete(t.links[field], r, in)
		}
	}
}

// placeDue puts an entry into its tenant's due tree, or takes it out.
func (t *Table) placeDue(e *Entry, r ref, in bool) {
	tree := t.due[e.Tenant]
	if tree == nil {
		if !in {
			return
		}
		tree = t.tree(lessDue)
		t.due[e.Tenant] = tree
	}
	putOrDelete(tree, r, in)
	if tree.Len() == 0 {
		delete(t.due, e.Tenant)
	}
}

func putOrDelete[T any](tree *btree.BTreeG[T], item T, put bool) {
	if put {
		tree.ReplaceOrInsert(item)
	} else {
		tree.Delete(item)
	}
}

// count adds an entry to its tenant's and its (kind, state)'s tallies, and makes it share
// their strings and its parent's ID.
func (t *Table) count(e *Entry) {
	tn := t.tenants[e.Tenant]
	if tn == nil {
		tn = &tally[string]{key: e.Tenant}
		t.tenants[e.Tenant] = tn
	}
	tn.n++
	ks := t.counts[[2]string{e.Kind, e.State}]
	if ks == nil {
		ks = &tally[[2]string]{key: [2]string{e.Kind, e.State}}
		t.counts[ks.key] = ks
	}
	ks.n++
	e.Tenant, e.Kind, e.State = tn.key, ks.key[0], ks.key[1]
	t.shareParent(e)
}

// shareParent makes an entry share its parent's ID string.
func (t *Table) shareParent(e *Entry) {
	if e.Parent == "" {
		return
	}
	if p, ok := t.Lookup(e.Parent); ok {
		e.Parent = p.ID()
	}
}

// uncount takes an entry out of its tallies.
func (t *Table) uncount(e *Entry) {
	tn := t.tenants[e.Tenant]
	if tn.n--; tn.n == 0 {
		delete(t.tenants, e.Tenant)
	}
	key := [2]string{e.Kind, e.State}
	ks := t.counts[key]
	if ks.n--; ks.n == 0 {
		delete(t.counts, key)
	}
}
