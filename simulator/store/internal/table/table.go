package table

import (
	"sync"

	"github.com/google/btree"
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
	slot, ok := t.byID.get(id, t.slots)
	if !ok {
		return nil, false
	}
	return t.slots[slot], true
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
	t.byID.set(e.ID(), e.slot, t.slots)
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
	t.byID.delete(id, t.slots)
	t.slots[e.slot] = nil
	t.free = append(t.free, e.slot)
	// A child may still share this entry's ID string (and so keep the entry): let it keep
	// no more than that.
	e.Row = Row{}
	e.SetHistory(nil)
	if e.ext != nil {
		e.ext.linked = nil
	}
}
