package table

import "hash/maphash"

// idMap maps object IDs to slots by a 64-bit hash of the ID, in a map whose keys and values
// hold no pointers (the garbage collector does not scan it) and take 12 bytes, where keys
// holding the IDs (up to 32 bytes and a length) made a map of 100k objects 4-5 MB larger. The
// entry at a slot says whether it is the ID's: an ID whose hash another one holds already (two
// of 100k IDs share one about once in 10^9 tables) goes to a map of strings.
type idMap struct {
	byHash map[uint64]uint32
	other  map[string]uint32
	hash   func(id string) uint64
}

func newIDMap() idMap {
	seed := maphash.MakeSeed()
	return idMap{byHash: map[uint64]uint32{}, other: map[string]uint32{},
		hash: func(id string) uint64 { return maphash.String(seed, id) }}
}

// get returns the slot of id; slots are the table's (each slot the map holds has its entry).
func (m idMap) get(id string, slots []*Entry) (uint32, bool) {
	if slot, ok := m.byHash[m.hash(id)]; ok && slots[slot].ID() == id {
		return slot, true
	}
	if len(m.other) == 0 {
		return 0, false
	}
	slot, ok := m.other[id]
	return slot, ok
}

// set maps a new id to its slot.
func (m idMap) set(id string, slot uint32, slots []*Entry) {
	h := m.hash(id)
	if cur, ok := m.byHash[h]; ok && slots[cur].ID() != id {
		m.other[id] = slot
		return
	}
	m.byHash[h] = slot
}

func (m idMap) delete(id string, slots []*Entry) {
	h := m.hash(id)
	if cur, ok := m.byHash[h]; ok && slots[cur].ID() == id {
		delete(m.byHash, h)
		return
	}
	delete(m.other, id)
}

// tally counts the objects that share a key, and holds the key's one copy.
type tally[K comparable] struct {
	key K
	n   int
}
