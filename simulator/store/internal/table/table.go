package table

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/google/btree"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// Table holds every object in memory, encoded, with ordered indexes for each way the engine
// and the API look objects up: by ID, by kind, by parent, by kind and state, by due time, and
// by the value of a spec field that links objects. The memory and SQLite stores serve reads
// from it (the SQLite store writes its changes to the file as a journal), so no read or
// scheduling query walks every object: a lookup costs O(log n) plus what it returns, and a
// List stops at its limit.
//
// The caller holds its lock (Lock, RLock): a write lock to apply writes, a read lock to read.
// A write changes entries in place under the write lock; readers copy what they need under the
// read lock. An entry's data is replaced, never changed, so a copy of it can be decoded after
// the lock is released.
//
// Every garbage collection marks what the table holds, so its indexes hold no pointers: an
// entry has a slot in slots, and the ID map and the trees name it by its slot number (see
// ref), which the collector does not scan. Of the table's indexes only slots points at the
// entries (a child's parent ID and the IDs handed out share an entry's ID bytes).
type Table struct {
	mu sync.RWMutex

	// slots holds every entry at its slot (nil for a free one, listed in free).
	slots   []*Entry
	free    []uint32
	byID    idMap
	ordered *btree.BTreeG[ref] // (tenant, id)
	byKind  *btree.BTreeG[ref] // (tenant, kind, id)
	// byParent holds a tree per (tenant, parent) of its children by ID, of stateItems as
	// byState does: a create goes in at the edge of its parent's small tree, where a tree
	// of every child by (tenant, parent, id) made it descend through entries of other
	// parents' children, which at 100k objects are not in the CPU's caches. A tree goes with
	// its last child (parents come and go, unlike states).
	byParent map[[2]string]*btree.BTreeG[stateItem]
	// byState holds a tree per (tenant, kind, state) of its objects by ID: an action moves
	// an object between a big tree (RUNNING) and a small one (STOPPING), and an item keeps the
	// head of its ID inline, so a descent seldom reads an entry. There are as many trees as
	// tenants × kinds × states (all set by configuration); an empty one stays for reuse.
	byState map[stateKey]*btree.BTreeG[stateItem]
	// due holds a tree per tenant of its objects with a due time, by (due, id): a round of
	// the worker takes each tenant's earliest without walking another tenant's backlog
	// (dueRound). A tree goes with its tenant's last scheduled object.
	due map[string]*btree.BTreeG[ref]
	// links index spec fields by value, one tree per field, built the first time a List
	// filters on that field and kept up to date from then on.
	links map[string]*btree.BTreeG[ref] // (tenant, value of the field, id)

	// tenants and counts count objects per tenant (quotas) and per (kind, state) (metrics).
	// They also keep the one copy of each tenant, kind and state string that every entry
	// shares: a table of 100k objects holds a few strings, not 300k, and the garbage
	// collector has that many fewer objects to mark. A tally goes with its last object.
	tenants map[string]*tally[string]
	counts  map[[2]string]*tally[[2]string]

	// pivots hold the entries searches start from, which are not stored: a tree compares
	// refs, so a search borrows a pivot ref (from freePivots) for its pivot while it runs.
	// Searches run under the read lock, many at once, each with its own pivot.
	pivots     [pivotRefs]*Entry
	freePivots chan ref
}

// ref names an entry in a tree: a stored one by its slot, a search's pivot (never stored) by
// its place in table.pivots, from pivotRef on. It is no pointer, so the trees' items are
// not scanned by the garbage collector.
type ref uint32

const (
	pivotRef  ref = 1 << 31 // slots below, pivots from here
	pivotRefs     = 64      // searches at once; more wait for one to end
)

// idMap maps object IDs to slots, in a map whose keys and values hold no pointers: the
// garbage collector does not scan it. An ID too long for an idKey (none the server makes)
// goes to a map of strings.
type idMap struct {
	short map[idKey]uint32
	long  map[string]uint32
}

// idKey is an ID of up to 32 bytes, with its length (an ID may end in zero bytes).
type idKey struct {
	n  uint8
	id [32]byte
}

func newIDMap() idMap { return idMap{short: map[idKey]uint32{}, long: map[string]uint32{}} }

func keyOf(id string) (idKey, bool) {
	var k idKey
	if len(id) > len(k.id) {
		return k, false
	}
	k.n = uint8(copy(k.id[:], id))
	return k, true
}

func (m idMap) get(id string) (uint32, bool) {
	if k, ok := keyOf(id); ok {
		slot, ok := m.short[k]
		return slot, ok
	}
	slot, ok := m.long[id]
	return slot, ok
}

func (m idMap) set(id string, slot uint32) {
	if k, ok := keyOf(id); ok {
		m.short[k] = slot
	} else {
		m.long[id] = slot
	}
}

func (m idMap) delete(id string) {
	if k, ok := keyOf(id); ok {
		delete(m.short, k)
	} else {
		delete(m.long, id)
	}
}

// tally counts the objects that share a key, and holds the key's one copy.
type tally[K comparable] struct {
	key K
	n   int
}

// Entry is one object as the table holds it: the fields its indexes order by, and its JSON.
// A write changes the object's entry in place under the write lock (readers copy what they
// need under the read lock; data is replaced, never changed), so an index whose key the
// write leaves as it was is not touched. A store reads an entry's Row under the table's lock
// and changes it only through Set; History is the store's own.
type Entry struct {
	slot uint32 // in table.slots
	// idBytes hold the ID when it fits (every ID the server makes does), and id points into
	// them: the bytes a tree compares lie beside the entry's other keys, one cache miss a
	// comparison instead of two, and the ID is no allocation of its own. They are written
	// once, when the entry is made, so id is as immutable as any string.
	idBytes [32]byte
	id      string
	Row
	// linked holds the values of the indexed spec fields.
	linked map[string]string
	// History is the in-memory store's log of the object's events (see package memstore);
	// the table never reads or changes it, but drops it with the entry.
	History []byte
}

// Row is what a write changes (everything but the ID): the columns the indexes order by, the
// object's JSON and its last event number.
type Row struct {
	Tenant, Kind, Parent, State string
	Version                     int64
	Due                         codec.Due // the object's due time
	Data                        []byte
	// Events is the object's last event number (the SQLite store numbers events from it; the
	// table does not read it).
	Events int64
}

// ID returns the entry's object ID.
func (e *Entry) ID() string { return e.id }

// LoadedEntry is the entry of an object a store loads as columns (with no spec fields
// indexed yet: Set indexes what the table indexes when it is asked to).
func LoadedEntry(id string, r Row) Entry { return Entry{id: id, Row: r} }

// newStoredEntry makes the entry Set stores for v.
func newStoredEntry(v *Entry) *Entry {
	e := &Entry{Row: v.Row, linked: v.linked}
	if n := copy(e.idBytes[:], v.id); n == len(v.id) && n > 0 {
		e.id = unsafe.String(&e.idBytes[0], n)
	} else {
		e.id = v.id
	}
	return e
}

const tableDegree = 32

// New returns an empty table.
func New() *Table {
	t := &Table{freePivots: make(chan ref, pivotRefs)}
	for i := range pivotRefs {
		t.freePivots <- pivotRef + ref(i)
	}
	t.Clear()
	return t
}

// Lock takes the table's write lock: a store applies writes (Check, Set, Remove, Clear) under it.
func (t *Table) Lock() { t.mu.Lock() }

// Unlock releases the write lock.
func (t *Table) Unlock() { t.mu.Unlock() }

// RLock takes the table's read lock: a store reads entries (Lookup) under it.
func (t *Table) RLock() { t.mu.RLock() }

// RUnlock releases the read lock.
func (t *Table) RUnlock() { t.mu.RUnlock() }

// Clear empties the table.
func (t *Table) Clear() {
	t.slots, t.free = nil, nil
	t.byID = newIDMap()
	t.ordered = t.tree(lessOrdered)
	t.byKind = t.tree(lessKind)
	t.byParent = map[[2]string]*btree.BTreeG[stateItem]{}
	t.byState = map[stateKey]*btree.BTreeG[stateItem]{}
	t.due = map[string]*btree.BTreeG[ref]{}
	t.links = map[string]*btree.BTreeG[ref]{}
	t.tenants = map[string]*tally[string]{}
	t.counts = map[[2]string]*tally[[2]string]{}
}

// tree makes a tree of refs in an order of entries.
func (t *Table) tree(less func(a, b *Entry) bool) *btree.BTreeG[ref] {
	return btree.NewG(tableDegree, func(a, b ref) bool { return less(t.entry(a), t.entry(b)) })
}

// entry returns the entry a ref names.
func (t *Table) entry(r ref) *Entry {
	if r >= pivotRef {
		return t.pivots[r-pivotRef]
	}
	return t.slots[r]
}

func (e *Entry) ref() ref { return ref(e.slot) }

// pivot lends a ref to a search's pivot; the search calls the function it returns when it is
// over.
func (t *Table) pivot(p *Entry) (ref, func()) {
	r := <-t.freePivots
	t.pivots[r-pivotRef] = p
	return r, func() {
		t.pivots[r-pivotRef] = nil
		t.freePivots <- r
	}
}

// Lookup returns the entry of an ID.
func (t *Table) Lookup(id string) (*Entry, bool) {
	slot, ok := t.byID.get(id)
	if !ok {
		return nil, false
	}
	return t.slots[slot], true
}

// The trees' orders.

func lessOrdered(a, b *Entry) bool {
	return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.id, b.id)) < 0
}

func lessKind(a, b *Entry) bool {
	return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.Kind, b.Kind), strings.Compare(a.id, b.id)) < 0
}

// stateKey names the objects of one kind in one state of one tenant.
type stateKey [3]string

func (e *Entry) stateKey() stateKey { return stateKey{e.Tenant, e.Kind, e.State} }

// parentKey names the children of one parent in one tenant.
func (e *Entry) parentKey() [2]string { return [2]string{e.Tenant, e.Parent} }

// stateItem is an entry in its state's or its parent's tree, with the first 24 bytes of its ID as big-endian
// words (zero-padded): two items compare without reading their entries unless those bytes
// are the same. The server's IDs are the kind, a dash and 16 hex digits, so in one kind's
// tree the heads differ for kind names up to 7 bytes long; longer ones share more of the head
// and compare on the entries more often.
type stateItem struct {
	head [3]uint64
	r    ref
}

func newStateItem(e *Entry, r ref) stateItem {
	var b [24]byte
	copy(b[:], e.id)
	return stateItem{r: r, head: [3]uint64{binary.BigEndian.Uint64(b[0:8]),
		binary.BigEndian.Uint64(b[8:16]), binary.BigEndian.Uint64(b[16:24])}}
}

// lessStateItem orders items by ID: the heads order as the IDs do, the IDs decide a tie.
func (t *Table) lessStateItem(a, b stateItem) bool {
	for i := range a.head {
		if a.head[i] != b.head[i] {
			return a.head[i] < b.head[i]
		}
	}
	return t.entry(a.r).id < t.entry(b.r).id
}

func lessDue(a, b *Entry) bool {
	return cmp.Or(cmp.Compare(a.Due.Nanos, b.Due.Nanos), strings.Compare(a.id, b.id)) < 0
}

func lessLink(field string) func(a, b *Entry) bool {
	return func(a, b *Entry) bool {
		return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.linked[field], b.linked[field]),
			strings.Compare(a.id, b.id)) < 0
	}
}

// sameKey reports whether two entries sort alike in an order.
func sameKey(less func(a, b *Entry) bool, a, b *Entry) bool { return !less(a, b) && !less(b, a) }

// NewEntry makes the entry of an object encoded as data (Set stores it).
func (t *Table) NewEntry(o *store.Object, data []byte) Entry {
	e := Entry{id: o.ID, Row: Row{Tenant: o.Tenant, Kind: o.Kind, Parent: o.ParentID, State: o.State,
		Version: o.Version, Due: codec.DueOf(o.Due), Data: data}}
	for field := range t.links {
		e.link(field, o.Spec)
	}
	return e
}

// link records the value of one indexed spec field.
func (e *Entry) link(field string, spec map[string]any) {
	if v, ok := spec[field].(string); ok {
		if e.linked == nil {
			e.linked = map[string]string{}
		}
		e.linked[field] = v
	}
}

// Check verifies every compare-and-set of a batch, against the store as it is before the
// batch: all or nothing. An object is named once a batch (a second write could not be checked
// against the first).
func (t *Table) Check(b store.Batch) error {
	if b.Key != "" && b.KeyAt.IsZero() {
		return fmt.Errorf("%w: an idempotency key without the time it was recorded", store.ErrInvalidBatch)
	}
	named := make(map[string]bool, len(b.Writes))
	for _, w := range b.Writes {
		if named[w.Object.ID] {
			return fmt.Errorf("%w: the batch writes %s twice", store.ErrInvalidBatch, w.Object.ID)
		}
		named[w.Object.ID] = true
		cur, ok := t.Lookup(w.Object.ID)
		switch {
		case w.Expect == 0 && !w.Remove:
			if ok {
				return store.ErrExists
			}
		case !ok || cur.Tenant != w.Object.Tenant:
			return store.ErrNotFound
		case cur.Version != w.Expect:
			return store.ErrVersion
		}
	}
	for _, r := range b.Reads {
		if cur, ok := t.Lookup(r.ID); !ok || cur.Tenant != r.Tenant || cur.State != r.State {
			return store.ErrVersion
		}
	}
	for _, r := range b.Sets {
		if err := t.checkSet(r); err != nil {
			return err
		}
	}
	if b.MaxObjects > 0 {
		if err := t.checkQuota(b); err != nil {
			return err
		}
	}
	return nil
}

// checkSet re-checks a list a decision read (under the write lock).
func (t *Table) checkSet(r store.SetRead) error {
	f := store.Filter{Kind: r.Filter.Kind, ParentID: r.Filter.ParentID, Link: r.Filter.Link}
	if t.needsIndex(f) {
		if err := t.buildIndex(f.Link[0]); err != nil {
			return err
		}
	}
	i := 0
	same := true
	t.visit(r.Tenant, f, func(e *Entry) bool {
		if i >= len(r.IDs) || r.IDs[i] != e.id {
			same = false
			return false
		}
		i++
		return true
	})
	if !same || i != len(r.IDs) {
		return store.ErrVersion
	}
	return nil
}

// checkQuota refuses a batch that takes a tenant past b.MaxObjects.
func (t *Table) checkQuota(b store.Batch) error {
	added := map[string]int{}
	for _, w := range b.Writes {
		switch {
		case w.Remove:
			added[w.Object.Tenant]--
		case w.Expect == 0:
			added[w.Object.Tenant]++
		}
	}
	for tenant, n := range added {
		if n <= 0 {
			continue
		}
		held := 0
		if tn := t.tenants[tenant]; tn != nil {
			held = tn.n
		}
		if held+n > b.MaxObjects {
			return &store.QuotaError{Tenant: tenant, Max: b.MaxObjects, Held: held, Asked: n}
		}
	}
	return nil
}

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
	e, ok := t.Lookup(v.id)
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
		e.Row, e.linked = v.Row, v.linked
	} else {
		t.uncount(e)
		e.Row, e.linked = v.Row, v.linked
		t.count(e)
	}
	t.enter(e, m)
	return e
}

// store gives a new entry a slot.
func (t *Table) store(e *Entry) {
	if n := len(t.free); n > 0 {
		e.slot, t.free = t.free[n-1], t.free[:n-1]
		t.slots[e.slot] = e
	} else {
		e.slot = uint32(len(t.slots))
		t.slots = append(t.slots, e)
	}
	t.byID.set(e.id, e.slot)
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
		if whole || hasLink(a, field) != hasLink(b, field) || a.linked[field] != b.linked[field] {
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
		e.Parent = p.id
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

func hasLink(e *Entry, field string) bool {
	_, ok := e.linked[field]
	return ok
}

// Remove deletes an object. Its slot is free for another entry; the entry itself is never
// used again.
func (t *Table) Remove(id string) {
	e, ok := t.Lookup(id)
	if !ok {
		return
	}
	t.leave(e, t.movesOf(e, nil))
	t.uncount(e)
	t.byID.delete(id)
	t.slots[e.slot] = nil
	t.free = append(t.free, e.slot)
	// A child may still share this entry's ID string (and so keep the entry): let it keep
	// no more than that.
	e.Row, e.linked, e.History = Row{}, nil, nil
}

// get returns the JSON of a tenant's object.
func (t *Table) get(tenant, id string) ([]byte, bool) {
	e, ok := t.Lookup(id)
	if !ok || e.Tenant != tenant {
		return nil, false
	}
	return e.Data, true
}

// list returns the JSON of a tenant's objects that f selects, in ID order, at most f.Limit.
// It walks the index that narrows the search most, which must exist (see needsIndex).
func (t *Table) list(tenant string, f store.Filter, skip func(id string) bool) [][]byte {
	var out [][]byte
	t.visit(tenant, f, func(e *Entry) bool {
		if skip == nil || !skip(e.id) {
			out = append(out, e.Data)
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
		p := &Entry{id: f.After}
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
		var o struct {
			Spec map[string]any `json:"spec"`
		}
		if err := json.Unmarshal(e.Data, &o); err != nil {
			return fmt.Errorf("index spec.%s: %w", field, err)
		}
		// Under the write lock no reader looks at the entry: it can change in place.
		e.link(field, o.Spec)
		if _, ok := e.linked[field]; ok {
			tree.ReplaceOrInsert(e.ref())
		}
	}
	t.links[field] = tree
	return nil
}

// index picks the tree a List walks, where it starts, and where the range f can match ends
// (a List of one parent's children, or of one kind in one state, walks that tree instead).
func (t *Table) index(tenant string, f store.Filter) (*btree.BTreeG[ref], *Entry, func(*Entry) bool) {
	p := &Entry{id: f.After, Row: Row{Tenant: tenant, Kind: f.Kind}}
	switch {
	case f.Link[0] != "":
		field, value := f.Link[0], f.Link[1]
		p.linked = map[string]string{field: value}
		return t.links[field], p, func(e *Entry) bool { return e.Tenant == tenant && e.linked[field] == value }
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
		if v, ok := e.linked[f.Link[0]]; !ok || v != f.Link[1] {
			return false
		}
	}
	return f.After == "" || e.id > f.After
}

// dueBy names every object due at or before now, earliest first.
func (t *Table) dueBy(now time.Time) []store.Scheduled {
	var due []*Entry
	for _, tree := range t.due {
		due = t.dueIn(tree, now, -1, due)
	}
	slices.SortFunc(due, compareDue)
	return scheduled(due)
}

// dueIn appends to out the entries of a due tree due by now, earliest first, at most n of
// them (n < 0: all).
func (t *Table) dueIn(tree *btree.BTreeG[ref], now time.Time, n int, out []*Entry) []*Entry {
	limit := codec.DueOf(now).Nanos
	tree.Ascend(func(r ref) bool {
		e := t.entry(r)
		if e.Due.Nanos > limit || n == 0 {
			return false
		}
		out = append(out, e)
		n--
		return true
	})
	return out
}

// dueRound lists what ClaimDue would pick, without claims: the first n objects due by now
// in turns over tenants, every tenant's earliest batch, then every tenant's next, earliest
// first within a turn; the list is earliest first. It reads at most n objects of each
// tenant's tree: one tenant's 10,000 due objects cost a round what 128 do.
func (t *Table) dueRound(now time.Time, n, batch int) []store.Scheduled {
	type turn struct {
		e *Entry
		n int
	}
	var turns []turn
	var due []*Entry
	for _, tree := range t.due {
		due = t.dueIn(tree, now, n, due[:0])
		for i, e := range due {
			turns = append(turns, turn{e, i / batch})
		}
	}
	slices.SortFunc(turns, func(a, b turn) int { return cmp.Or(cmp.Compare(a.n, b.n), compareDue(a.e, b.e)) })
	due = due[:0]
	for _, tn := range turns[:min(n, len(turns))] {
		due = append(due, tn.e)
	}
	slices.SortFunc(due, compareDue)
	return scheduled(due)
}

func compareDue(a, b *Entry) int {
	return cmp.Or(cmp.Compare(a.Due.Nanos, b.Due.Nanos), strings.Compare(a.id, b.id))
}

// scheduled lists entries as the schedule's callers see them.
func scheduled(due []*Entry) []store.Scheduled {
	out := make([]store.Scheduled, len(due))
	for i, e := range due {
		out[i] = store.Scheduled{ID: e.id, Tenant: e.Tenant, Kind: e.Kind}
	}
	return out
}

// nextDue returns the earliest due time: the earliest of the tenants' (there are few).
func (t *Table) nextDue() (time.Time, bool) {
	var first *Entry
	for _, tree := range t.due {
		if r, ok := tree.Min(); ok && (first == nil || compareDue(t.entry(r), first) < 0) {
			first = t.entry(r)
		}
	}
	if first == nil {
		return time.Time{}, false
	}
	return time.Unix(0, first.Due.Nanos).UTC(), true
}

// kindStateCounts copies the per-(kind, state) counts.
func (t *Table) kindStateCounts() map[[2]string]int {
	out := make(map[[2]string]int, len(t.counts))
	for k, v := range t.counts {
		out[k] = v.n
	}
	return out
}

// The Store's reads, shared by the memory and SQLite stores. A read whose caller has gone
// answers with its context's error, as a database would.

// Get implements store.Store.
func (t *Table) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	data, ok := t.get(tenant, id)
	t.mu.RUnlock()
	if !ok {
		return nil, store.ErrNotFound
	}
	return codec.DecodeObject(data)
}

// List implements store.Store.
func (t *Table) List(ctx context.Context, tenant string, f store.Filter) ([]*store.Object, error) {
	return t.ListSkipping(ctx, tenant, f, nil)
}

// ListSkipping implements store.SkipLister.
func (t *Table) ListSkipping(ctx context.Context, tenant string, f store.Filter, skip func(id string) bool) ([]*store.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	for t.needsIndex(f) { // a Reset between the two locks drops the index again
		t.mu.RUnlock()
		t.mu.Lock()
		err := t.buildIndex(f.Link[0])
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
		t.mu.RLock()
	}
	datas := t.list(tenant, f, skip)
	t.mu.RUnlock()
	return codec.DecodeAll(datas)
}

// Due implements store.Store.
func (t *Table) Due(ctx context.Context, now time.Time) ([]store.Scheduled, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.dueBy(now), nil
}

// DueRound implements store.DueRounder.
func (t *Table) DueRound(ctx context.Context, now time.Time, n, batch int) ([]store.Scheduled, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.dueRound(now, n, max(batch, 1)), nil
}

// NextDue implements store.Store.
func (t *Table) NextDue(context.Context) (time.Time, bool, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	next, ok := t.nextDue()
	return next, ok, nil
}

// CountObjects implements store.Store.
func (t *Table) CountObjects(_ context.Context, tenant string) (int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if tn := t.tenants[tenant]; tn != nil {
		return tn.n, nil
	}
	return 0, nil
}

// Counts implements store.Store.
func (t *Table) Counts(context.Context) (map[[2]string]int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.kindStateCounts(), nil
}
