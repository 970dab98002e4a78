package table

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
