package simulator

import (
	"strings"
	"testing"
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
