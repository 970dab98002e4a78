package table

import (
	"slices"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// The ID map keeps short IDs as fixed-size keys: an ID and the same ID with zero bytes after
// it are different IDs, and long IDs are kept whole.
func TestIDMap(t *testing.T) {
	ids := []string{"", "a", "a\x00", "a\x00\x00", strings.Repeat("a", 32), strings.Repeat("a", 32) + "\x00",
		strings.Repeat("a", 33), strings.Repeat("a", 33) + "b"}
	m := newIDMap()
	for i, id := range ids {
		m.set(id, uint32(i))
	}
	for i, id := range ids {
		if got, ok := m.get(id); !ok || got != uint32(i) {
			t.Errorf("get(%q) = %d, %v, want %d, true", id, got, ok, i)
		}
	}
	for _, id := range ids[:len(ids)/2] {
		m.delete(id)
	}
	for i, id := range ids {
		_, ok := m.get(id)
		if want := i >= len(ids)/2; ok != want {
			t.Errorf("after deleting the first half, get(%q) found = %v, want %v", id, ok, want)
		}
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
