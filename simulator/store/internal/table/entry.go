package table

import (
	"unsafe"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// Entry is one object as the table holds it: the fields its indexes order by, and the rest
// packed (codec.PackObject).
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
// rest of the object packed (codec.PackObject; a store's journal record holds its JSON here)
// and its last event number.
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

// LoadedEntry is the entry of an object a store loads as columns and its packed rest (with no
// spec fields indexed yet: Set indexes what the table indexes when it is asked to).
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

// NewEntry makes the entry of an object packed as data (codec.PackObject; Set stores it).
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

func hasLink(e *Entry, field string) bool {
	_, ok := e.linked[field]
	return ok
}
