package simulator

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/btree"
)

// table holds every object in memory, encoded, with ordered indexes for each way the engine
// and the API look objects up: by ID, by kind, by parent, by kind and state, by due time, and
// by the value of a spec field that links objects. Both stores serve reads from it (the SQLite
// store writes its changes to the file as a journal), so no read or scheduling query walks
// every object: a lookup costs O(log n) plus what it returns, and a List stops at its limit.
//
// The caller holds mu: a write lock to apply writes, a read lock to read. An entry's data is
// never changed in place (a write replaces the entry), so it can be decoded after the lock is
// released.
type table struct {
	mu sync.RWMutex

	byID     map[string]*entry
	ordered  *btree.BTreeG[*entry] // (tenant, id)
	byKind   *btree.BTreeG[*entry] // (tenant, kind, id)
	byParent *btree.BTreeG[*entry] // (tenant, parent, id)
	byState  *btree.BTreeG[*entry] // (tenant, kind, state, id)
	due      *btree.BTreeG[*entry] // (due, id), objects with a due time only
	// links index spec fields by value, one tree per field, built the first time a List
	// filters on that field and kept up to date from then on.
	links map[string]*btree.BTreeG[*entry] // (tenant, value of the field, id)

	tenants map[string]int    // objects per tenant (quotas)
	counts  map[[2]string]int // objects per (kind, state) (metrics)
}

// entry is one object as the table holds it: the fields its indexes order by, and its JSON.
type entry struct {
	id, tenant, kind, parent, state string
	version                         int64
	due                             sql.NullInt64 // dueColumn of the object's due time
	data                            []byte
	// events is the object's last event number (the SQLite store numbers events from it).
	events int64
	// linked holds the values of the indexed spec fields.
	linked map[string]string
}

const tableDegree = 32

func newTable() *table {
	t := &table{}
	t.clear()
	return t
}

// clear empties the table.
func (t *table) clear() {
	t.byID = map[string]*entry{}
	t.ordered = btree.NewG(tableDegree, lessOrdered)
	t.byKind = btree.NewG(tableDegree, lessKind)
	t.byParent = btree.NewG(tableDegree, lessParent)
	t.byState = btree.NewG(tableDegree, lessState)
	t.due = btree.NewG(tableDegree, lessDue)
	t.links = map[string]*btree.BTreeG[*entry]{}
	t.tenants = map[string]int{}
	t.counts = map[[2]string]int{}
}

// The trees' orders.

func lessOrdered(a, b *entry) bool {
	return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.id, b.id)) < 0
}

func lessKind(a, b *entry) bool {
	return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.kind, b.kind), strings.Compare(a.id, b.id)) < 0
}

func lessParent(a, b *entry) bool {
	return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.parent, b.parent), strings.Compare(a.id, b.id)) < 0
}

func lessState(a, b *entry) bool {
	return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.kind, b.kind),
		strings.Compare(a.state, b.state), strings.Compare(a.id, b.id)) < 0
}

func lessDue(a, b *entry) bool {
	return cmp.Or(cmp.Compare(a.due.Int64, b.due.Int64), strings.Compare(a.id, b.id)) < 0
}

func lessLink(field string) func(a, b *entry) bool {
	return func(a, b *entry) bool {
		return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.linked[field], b.linked[field]),
			strings.Compare(a.id, b.id)) < 0
	}
}

// sameKey reports whether two entries sort alike in an order.
func sameKey(less func(a, b *entry) bool, a, b *entry) bool { return !less(a, b) && !less(b, a) }

func linkTree(field string) *btree.BTreeG[*entry] { return btree.NewG(tableDegree, lessLink(field)) }

// newEntry makes the entry of an object encoded as data.
func (t *table) newEntry(o *Object, data []byte) *entry {
	e := &entry{id: o.ID, tenant: o.Tenant, kind: o.Kind, parent: o.ParentID, state: o.State,
		version: o.Version, due: dueColumn(o.Due), data: data}
	if p, ok := t.byID[o.ParentID]; ok {
		e.parent = p.id // one copy of the parent's ID for all its children
	}
	for field := range t.links {
		e.link(field, o.Spec)
	}
	return e
}

// link records the value of one indexed spec field.
func (e *entry) link(field string, spec map[string]any) {
	if v, ok := spec[field].(string); ok {
		if e.linked == nil {
			e.linked = map[string]string{}
		}
		e.linked[field] = v
	}
}

// check verifies every compare-and-set of a batch: all or nothing.
func (t *table) check(b Batch) error {
	inserted := map[string]bool{}
	for _, w := range b.Writes {
		cur, ok := t.byID[w.Object.ID]
		switch {
		case w.Expect == 0 && !w.Remove:
			if ok || inserted[w.Object.ID] {
				return ErrExists
			}
			inserted[w.Object.ID] = true
		case !ok || cur.tenant != w.Object.Tenant:
			return ErrNotFound
		case cur.version != w.Expect:
			return ErrVersion
		}
	}
	return nil
}

// put stores (or replaces) an entry. A tree whose key the change leaves as it was replaces
// the entry in one descent.
func (t *table) put(e *entry) {
	old, ok := t.byID[e.id]
	if ok {
		decrement(t.tenants, old.tenant)
		decrement(t.counts, [2]string{old.kind, old.state})
	}
	t.byID[e.id] = e
	for _, x := range []struct {
		tree *btree.BTreeG[*entry]
		less func(a, b *entry) bool
	}{{t.ordered, lessOrdered}, {t.byKind, lessKind}, {t.byParent, lessParent}, {t.byState, lessState}} {
		if ok && !sameKey(x.less, old, e) {
			x.tree.Delete(old)
		}
		x.tree.ReplaceOrInsert(e)
	}
	if ok && old.due.Valid && (!e.due.Valid || !sameKey(lessDue, old, e)) {
		t.due.Delete(old)
	}
	if e.due.Valid {
		t.due.ReplaceOrInsert(e)
	}
	for field, tree := range t.links {
		if ok && hasLink(old, field) && (!hasLink(e, field) || !sameKey(lessLink(field), old, e)) {
			tree.Delete(old)
		}
		if hasLink(e, field) {
			tree.ReplaceOrInsert(e)
		}
	}
	t.tenants[e.tenant]++
	t.counts[[2]string{e.kind, e.state}]++
}

func hasLink(e *entry, field string) bool {
	_, ok := e.linked[field]
	return ok
}

// remove deletes an object.
func (t *table) remove(id string) {
	if old, ok := t.byID[id]; ok {
		t.unindex(old)
		delete(t.byID, id)
	}
}

func (t *table) unindex(e *entry) {
	t.ordered.Delete(e)
	t.byKind.Delete(e)
	t.byParent.Delete(e)
	t.byState.Delete(e)
	if e.due.Valid {
		t.due.Delete(e)
	}
	for field, tree := range t.links {
		if _, ok := e.linked[field]; ok {
			tree.Delete(e)
		}
	}
	decrement(t.tenants, e.tenant)
	decrement(t.counts, [2]string{e.kind, e.state})
}

func decrement[K comparable](m map[K]int, k K) {
	if m[k] <= 1 {
		delete(m, k)
	} else {
		m[k]--
	}
}

// apply applies one checked write; data is the object's JSON (nil for a removal).
func (t *table) apply(w Write, data []byte) {
	if w.Remove {
		t.remove(w.Object.ID)
		return
	}
	t.put(t.newEntry(w.Object, data))
}

// get returns the JSON of a tenant's object.
func (t *table) get(tenant, id string) ([]byte, bool) {
	e, ok := t.byID[id]
	if !ok || e.tenant != tenant {
		return nil, false
	}
	return e.data, true
}

// list returns the JSON of a tenant's objects that f selects, in ID order, at most f.Limit.
// It walks the index that narrows the search most; the caller holds the write lock when f
// filters on a spec field whose index does not exist yet (see needsIndex).
func (t *table) list(tenant string, f Filter) [][]byte {
	tree, pivot, within := t.index(tenant, f)
	var out [][]byte
	tree.AscendGreaterOrEqual(pivot, func(e *entry) bool {
		if !within(e) {
			return false
		}
		if e.id != f.After && f.matches(e) {
			out = append(out, e.data)
		}
		return f.Limit <= 0 || len(out) < f.Limit
	})
	return out
}

// needsIndex reports whether listing with f must first build a spec field's index.
func (t *table) needsIndex(f Filter) bool {
	_, ok := t.links[f.Link[0]]
	return f.Link[0] != "" && !ok
}

// buildIndex indexes a spec field of every object (once per field).
func (t *table) buildIndex(field string) error {
	if _, ok := t.links[field]; ok {
		return nil
	}
	tree := linkTree(field)
	for _, e := range t.byID {
		var o struct {
			Spec map[string]any `json:"spec"`
		}
		if err := json.Unmarshal(e.data, &o); err != nil {
			return fmt.Errorf("index spec.%s: %w", field, err)
		}
		// Under the write lock no reader looks at the entry: it can change in place.
		e.link(field, o.Spec)
		if _, ok := e.linked[field]; ok {
			tree.ReplaceOrInsert(e)
		}
	}
	t.links[field] = tree
	return nil
}

// index picks the tree a List walks, where it starts, and where the range f can match ends.
func (t *table) index(tenant string, f Filter) (*btree.BTreeG[*entry], *entry, func(*entry) bool) {
	p := &entry{tenant: tenant, kind: f.Kind, parent: f.ParentID, state: f.State, id: f.After}
	switch {
	case f.ParentID != "":
		return t.byParent, p, func(e *entry) bool { return e.tenant == tenant && e.parent == f.ParentID }
	case f.Link[0] != "":
		field, value := f.Link[0], f.Link[1]
		p.linked = map[string]string{field: value}
		return t.links[field], p, func(e *entry) bool { return e.tenant == tenant && e.linked[field] == value }
	case f.Kind != "" && f.State != "":
		return t.byState, p, func(e *entry) bool { return e.tenant == tenant && e.kind == f.Kind && e.state == f.State }
	case f.Kind != "":
		return t.byKind, p, func(e *entry) bool { return e.tenant == tenant && e.kind == f.Kind }
	default:
		return t.ordered, p, func(e *entry) bool { return e.tenant == tenant }
	}
}

// matches is Filter.Matches on an entry.
func (f Filter) matches(e *entry) bool {
	if f.Kind != "" && e.kind != f.Kind || f.ParentID != "" && e.parent != f.ParentID || f.State != "" && e.state != f.State {
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
func (t *table) dueBy(now time.Time) []Scheduled {
	var out []Scheduled
	limit := dueColumn(now).Int64
	t.due.Ascend(func(e *entry) bool {
		if e.due.Int64 > limit {
			return false
		}
		out = append(out, Scheduled{ID: e.id, Tenant: e.tenant, Kind: e.kind, Due: time.Unix(0, e.due.Int64).UTC()})
		return true
	})
	return out
}

// nextDue returns the earliest due time.
func (t *table) nextDue() (time.Time, bool) {
	e, ok := t.due.Min()
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(0, e.due.Int64).UTC(), true
}

// kindStateCounts copies the per-(kind, state) counts.
func (t *table) kindStateCounts() map[[2]string]int {
	out := make(map[[2]string]int, len(t.counts))
	for k, v := range t.counts {
		out[k] = v
	}
	return out
}

// The Store's reads, shared by both stores. A read whose caller has gone answers with its
// context's error, as a database would.

// Get implements Store.
func (t *table) Get(ctx context.Context, tenant, id string) (*Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	data, ok := t.get(tenant, id)
	t.mu.RUnlock()
	if !ok {
		return nil, ErrNotFound
	}
	return decodeObject(data)
}

// List implements Store.
func (t *table) List(ctx context.Context, tenant string, f Filter) ([]*Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	if t.needsIndex(f) {
		t.mu.RUnlock()
		t.mu.Lock()
		err := t.buildIndex(f.Link[0])
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
		t.mu.RLock()
	}
	datas := t.list(tenant, f)
	t.mu.RUnlock()
	return decodeAll(datas)
}

// Due implements Store.
func (t *table) Due(ctx context.Context, now time.Time) ([]Scheduled, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.dueBy(now), nil
}

// NextDue implements Store.
func (t *table) NextDue(context.Context) (time.Time, bool, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	next, ok := t.nextDue()
	return next, ok, nil
}

// CountObjects implements Store.
func (t *table) CountObjects(_ context.Context, tenant string) (int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.tenants[tenant], nil
}

// Counts implements Store.
func (t *table) Counts(context.Context) (map[[2]string]int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.kindStateCounts(), nil
}

// Matches reports whether an object passes the filter (tenant aside).
func (f Filter) Matches(o *Object) bool {
	if f.Kind != "" && o.Kind != f.Kind {
		return false
	}
	if f.ParentID != "" && o.ParentID != f.ParentID {
		return false
	}
	if f.State != "" && o.State != f.State {
		return false
	}
	if f.Link[0] != "" {
		if v, _ := o.Spec[f.Link[0]].(string); v != f.Link[1] {
			return false
		}
	}
	return f.After == "" || o.ID > f.After
}

// decodeObject decodes an object's JSON.
func decodeObject(data []byte) (*Object, error) {
	var o Object
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return &o, nil
}

// decodeAll decodes objects' JSON (outside the lock).
func decodeAll(datas [][]byte) ([]*Object, error) {
	out := make([]*Object, len(datas))
	for i, d := range datas {
		o, err := decodeObject(d)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// encodeWrites encodes the objects a batch stores (nil for removals).
func encodeWrites(b Batch) ([][]byte, error) {
	datas := make([][]byte, len(b.Writes))
	for i, w := range b.Writes {
		if w.Remove {
			continue
		}
		d, err := json.Marshal(w.Object)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", w.Object.ID, err)
		}
		datas[i] = d
	}
	return datas, nil
}
