package table

import (
	"cmp"
	"encoding/binary"
	"strings"
)

// The trees' orders.

func lessOrdered(a, b *Entry) bool {
	return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.ID(), b.ID())) < 0
}

func lessKind(a, b *Entry) bool {
	return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.Kind, b.Kind), strings.Compare(a.ID(), b.ID())) < 0
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
	copy(b[:], e.ID())
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
	return t.entry(a.r).ID() < t.entry(b.r).ID()
}

func lessDue(a, b *Entry) bool {
	return cmp.Or(cmp.Compare(a.Due.Nanos, b.Due.Nanos), strings.Compare(a.ID(), b.ID())) < 0
}

func lessLink(field string) func(a, b *Entry) bool {
	return func(a, b *Entry) bool {
		return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.links()[field], b.links()[field]),
			strings.Compare(a.ID(), b.ID())) < 0
	}
}

// sameKey reports whether two entries sort alike in an order.
func sameKey(less func(a, b *Entry) bool, a, b *Entry) bool { return !less(a, b) && !less(b, a) }
