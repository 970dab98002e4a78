package engine

import (
	"slices"
	"testing"
)

func TestFeed(t *testing.T) {
	var f feed
	f.publish("acme", []string{"a", "b"})
	f.publish("globex", []string{"g"})
	f.publish("acme", []string{"a"})

	tests := []struct {
		name       string
		tenant     string
		after      uint64
		wantIDs    []string
		wantResync bool
	}{
		{"from the start, deduplicated", "acme", 0, []string{"a", "b"}, false},
		{"after the first", "acme", 1, []string{"b", "a"}, false},
		{"another tenant, with its own positions", "globex", 0, []string{"g"}, false},
		{"up to date", "acme", 3, nil, false},
		{"a position from the future (a restart)", "acme", 99, nil, true},
	}
	for _, tt := range tests {
		ids, _, resync, _ := f.since(tt.tenant, tt.after)
		if !slices.Equal(ids, tt.wantIDs) || resync != tt.wantResync {
			t.Errorf("%s: since(%q, %d) = %v, %v; want %v, %v", tt.name, tt.tenant, tt.after, ids, resync, tt.wantIDs, tt.wantResync)
		}
	}
	// One tenant's counter says nothing of another's activity.
	if _, next, _, _ := f.since("globex", 1); next != 1 {
		t.Errorf("globex's position = %d after acme's changes, want 1", next)
	}

	f.publishReset("acme", false)
	if _, _, resync, _ := f.since("acme", 3); !resync {
		t.Error("acme's reset does not resync acme")
	}
	if ids, _, resync, _ := f.since("globex", 1); resync || ids != nil {
		t.Errorf("acme's reset reaches globex: %v, %v", ids, resync)
	}
	f.publishReset("", true)
	if _, _, resync, _ := f.since("globex", 1); !resync {
		t.Error("a reset of everyone does not resync globex")
	}

	// A reader more than feedSize changes behind resyncs.
	for range feedSize {
		f.publish("acme", []string{"x"})
	}
	if _, _, resync, _ := f.since("acme", 1); !resync {
		t.Error("a reader that fell behind does not resync")
	}
}
