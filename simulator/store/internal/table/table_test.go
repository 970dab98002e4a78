package table

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// The ID map finds each ID's slot by its hash, and tells IDs that share a hash apart by the
// entry at the slot: with every ID hashed alike (all collide), each is still found, and one
// removed is gone whichever of them held the hash.
func TestIDMap(t *testing.T) {
	ids := []string{"", "a", "a\x00", "a\x00\x00", strings.Repeat("a", 32), strings.Repeat("a", 32) + "\x00",
		strings.Repeat("a", 33), strings.Repeat("a", 33) + "b"}
	for _, tt := range []struct {
		name string
		hash func(m idMap) func(string) uint64
	}{
		{"hashed", func(m idMap) func(string) uint64 { return m.hash }},
		{"all colliding", func(idMap) func(string) uint64 { return func(string) uint64 { return 7 } }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newIDMap()
			m.hash = tt.hash(m)
			slots := make([]*Entry, len(ids))
			for i, id := range ids {
				slots[i] = entryOf(id, Row{})
				m.set(id, uint32(i), slots)
			}
			for i, id := range ids {
				if got, ok := m.get(id, slots); !ok || got != uint32(i) {
					t.Errorf("get(%q) = %d, %v, want %d, true", id, got, ok, i)
				}
			}
			if _, ok := m.get("b", slots); ok {
				t.Error(`get("b") found an ID never set`)
			}
			for i, id := range ids[:len(ids)/2] {
				m.delete(id, slots)
				slots[i] = nil // as Table.Remove frees the slot
			}
			for i, id := range ids {
				_, ok := m.get(id, slots)
				if want := i >= len(ids)/2; ok != want {
					t.Errorf("after deleting the first half, get(%q) found = %v, want %v", id, ok, want)
				}
			}
			// A new ID takes the hash the first (deleted) one held.
			slots[0] = entryOf("new", Row{})
			m.set("new", 0, slots)
			for i, id := range append([]string{"new"}, ids[len(ids)/2:]...) {
				want := uint32(0)
				if i > 0 {
					want = uint32(len(ids)/2 + i - 1)
				}
				if got, ok := m.get(id, slots); !ok || got != want {
					t.Errorf("after adding new: get(%q) = %d, %v, want %d, true", id, got, ok, want)
				}
			}
		})
	}
}

// A parent's children are listed from its own tree, in ID order from After; a child that moves
// to another parent moves between trees, and a parent's tree goes with its last child (parents
// come and go: the table must not keep a tree for each one it ever saw).
func TestTableParentTrees(t *testing.T) {
	tb := New()
	put := func(id, parent string) {
		o := storetest.NewObject(id, "acme", "machine")
		o.ParentID = parent
		tb.Set(tb.NewEntry(o, []byte(`{"id":"`+id+`"}`)))
	}
	ids := func(f store.Filter) []string {
		var out []string
		for _, p := range tb.list("acme", f, nil) {
			out = append(out, p.cols.ID)
		}
		return out
	}
	for _, id := range []string{"m3", "m1", "m5", "m2", "m4"} {
		put(id, "cs1")
	}
	put("m6", "cs2")
	put("top", "") // no parent: in no parent's tree
	if got := ids(store.Filter{ParentID: "cs1", After: "m2", Limit: 2}); !slices.Equal(got, []string{"m3", "m4"}) {
		t.Errorf("cs1's children after m2, 2 of them = %v, want [m3 m4]", got)
	}
	put("m3", "cs2") // moves
	if got := ids(store.Filter{ParentID: "cs1"}); !slices.Equal(got, []string{"m1", "m2", "m4", "m5"}) {
		t.Errorf("cs1's children after m3 moved = %v", got)
	}
	if got := ids(store.Filter{ParentID: "cs2", Kind: "machine"}); !slices.Equal(got, []string{"m3", "m6"}) {
		t.Errorf("cs2's machines = %v, want [m3 m6]", got)
	}
	if got := ids(store.Filter{ParentID: "cs2", Kind: "cloudspace"}); len(got) != 0 {
		t.Errorf("cs2's cloudspaces = %v, want none", got)
	}
	if len(tb.byParent) != 2 {
		t.Errorf("%d parent trees, want 2 (cs1, cs2; none for no parent)", len(tb.byParent))
	}
	for _, id := range []string{"m3", "m6"} {
		tb.Remove(id)
	}
	if _, ok := tb.byParent[[2]string{"acme", "cs2"}]; ok || len(tb.byParent) != 1 {
		t.Errorf("cs2's tree outlived its last child: %d trees", len(tb.byParent))
	}
	if got := ids(store.Filter{ParentID: "cs2"}); len(got) != 0 {
		t.Errorf("children of cs2 after all went = %v", got)
	}
	if got := ids(store.Filter{ParentID: "acme", Limit: 1}); len(got) != 0 {
		t.Errorf("children of a parent never seen = %v", got)
	}
}

// An entry takes a 176-byte block: every byte of it is held once per object.
func TestEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(Entry{}); got > 176 {
		t.Errorf("an entry takes %d bytes, want at most 176", got)
	}
}

// An ID too long for an entry's own bytes is kept beside it: found, listed in order among the
// others and as a parent, and removed like any other.
func TestTableLongIDs(t *testing.T) {
	tb := New()
	long := "machine-" + strings.Repeat("f", 40)
	for _, id := range []string{"machine-1", long, "machine-z"} {
		o := storetest.NewObject(id, "acme", "machine")
		if id != long {
			o.ParentID = long
		}
		tb.Set(tb.NewEntry(o, nil))
	}
	if e, ok := tb.Lookup(long); !ok || e.ID() != long {
		t.Fatalf("Lookup(long ID) = %v, %v", e, ok)
	}
	var got []string
	for _, p := range tb.list("acme", store.Filter{Kind: "machine"}, nil) {
		got = append(got, p.cols.ID)
	}
	if want := []string{"machine-1", long, "machine-z"}; !slices.Equal(got, want) {
		t.Errorf("list = %v, want %v", got, want)
	}
	if n := len(tb.list("acme", store.Filter{ParentID: long}, nil)); n != 2 {
		t.Errorf("children of the long ID: %d, want 2", n)
	}
	tb.Remove(long)
	if _, ok := tb.Lookup(long); ok {
		t.Error("Lookup(long ID) found it after Remove")
	}
}
