package table

import (
	"math"
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
	// idLen is the length of the ID in idBytes, or longID when it does not fit (ext holds it).
	// idBytes hold the ID when it fits (every ID the server makes does): the bytes a tree
	// compares lie beside the entry's other keys, one cache miss a comparison instead of two,
	// and the ID is no allocation of its own. They are written once, when the entry is made,
	// so the ID (ID) is as immutable as any string. No string header points at them: 16 bytes
	// less an entry, 1.6 MB at 100k objects.
	idLen   uint8
	idBytes [32]byte
	Row
	// ext holds what most entries have not: see entryExt.
	ext *entryExt
	// hist, histLen and histCap are the memory store's log of the object's events (History),
	// a slice in 16 bytes rather than 24: in the entry, not in its ext, so an object of the
	// memory store is no heap object more for the garbage collector to mark. An entry is 176
	// bytes, where a string for the ID and the slices made it 208.
	hist             unsafe.Pointer
	histLen, histCap uint32
}

// entryExt is the part of an entry that only some entries have.
type entryExt struct {
	// linked holds the values of the indexed spec fields.
	linked map[string]string
	// history is the memory store's log of the object's events when it is too long for
	// Entry.hist (4 GiB); the table never reads or changes it, but drops it with the entry.
	history []byte
	// longID is an ID too long for idBytes.
	longID string
}

// longID is Entry.idLen for an ID that ext holds.
const longID = 255

// Row is what a write changes (everything but the ID): the columns the indexes order by, the
// rest of the object packed (codec.PackObject; a SQLite log written by a build before schema
// version 10 holds its JSON here) and its last event number.
type Row struct {
	Tenant, Kind, Parent, State string
	Version                     int64
	Due                         codec.Due // the object's due time
	// Data is a string for its header's 16 bytes (a slice's are 24). Its bytes are never
	// changed.
	Data string
	// Events is the object's last event number (the SQLite store numbers events from it; the
	// table does not read it).
	Events int64
}

// ID returns the entry's object ID.
func (e *Entry) ID() string {
	switch e.idLen {
	case 0:
		return ""
	case longID:
		return e.ext.longID
	}
	return unsafe.String(&e.idBytes[0], int(e.idLen))
}

// setID sets the ID of an entry being made.
func (e *Entry) setID(id string) {
	if len(id) <= len(e.idBytes) {
		e.idLen = uint8(copy(e.idBytes[:], id))
		return
	}
	e.idLen = longID
	e.extra().longID = id
}

// entryOf makes an entry (not stored) with an ID and a row: a new one, or a search's pivot.
func entryOf(id string, r Row) *Entry {
	e := &Entry{Row: r}
	e.setID(id)
	return e
}

// extra returns the entry's ext, made if it has none.
func (e *Entry) extra() *entryExt {
	if e.ext == nil {
		e.ext = &entryExt{}
	}
	return e.ext
}

// links returns the values of the entry's indexed spec fields (nil for none).
func (e *Entry) links() map[string]string {
	if e.ext == nil {
		return nil
	}
	return e.ext.linked
}

// setLinks replaces the values of the entry's indexed spec fields.
func (e *Entry) setLinks(l map[string]string) {
	if l != nil || e.ext != nil {
		e.extra().linked = l
	}
}

// History returns the memory store's log of the object's events (nil for none).
func (e *Entry) History() []byte {
	if e.hist != nil {
		return unsafe.Slice((*byte)(e.hist), e.histCap)[:e.histLen]
	}
	if e.ext == nil {
		return nil
	}
	return e.ext.history
}

// SetHistory replaces the memory store's log of the object's events (under the write lock).
func (e *Entry) SetHistory(h []byte) {
	e.hist, e.histLen, e.histCap = nil, 0, 0
	if e.ext != nil {
		e.ext.history = nil
	}
	switch {
	case cap(h) == 0:
	case cap(h) <= math.MaxUint32:
		e.hist, e.histLen, e.histCap = unsafe.Pointer(unsafe.SliceData(h)), uint32(len(h)), uint32(cap(h))
	default:
		e.extra().history = h
	}
}

// LoadedEntry is the entry of an object a store loads as columns and its packed rest (with no
// spec fields indexed yet: Set indexes what the table indexes when it is asked to).
func LoadedEntry(id string, r Row) Entry { return *entryOf(id, r) }

// newStoredEntry makes the entry Set stores for v.
func newStoredEntry(v *Entry) *Entry {
	e := entryOf(v.ID(), v.Row)
	e.setLinks(v.links())
	return e
}

// NewEntry makes the entry of an object packed as data (codec.PackObject; Set stores it),
// which must not be changed after.
func (t *Table) NewEntry(o *store.Object, data []byte) Entry {
	e := *entryOf(o.ID, Row{Tenant: o.Tenant, Kind: o.Kind, Parent: o.ParentID, State: o.State,
		Version: o.Version, Due: codec.DueOf(o.Due), Data: codec.String(data)})
	for field := range t.links {
		e.link(field, o.Spec)
	}
	return e
}

// link records the value of one indexed spec field.
func (e *Entry) link(field string, spec map[string]any) {
	if v, ok := spec[field].(string); ok {
		x := e.extra()
		if x.linked == nil {
			x.linked = map[string]string{}
		}
		x.linked[field] = v
	}
}

func hasLink(e *Entry, field string) bool {
	_, ok := e.links()[field]
	return ok
}
