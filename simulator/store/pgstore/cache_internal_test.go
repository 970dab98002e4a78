package pgstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// The decision cache holds at most pgCacheMax objects and pgCacheMaxBytes of data, however
// many it is given, and walks a lineage only when it holds every object of it.
func TestPGCacheBounded(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		bytes int
	}{
		{"many small objects", 3 * pgCacheMax, 100},
		{"few large objects", 3 * pgCacheMaxBytes / (256 << 10), 256 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c pgCache
			data := []byte(strings.Repeat("x", tt.bytes))
			for i := range tt.n {
				c.put(codec.Columns{ID: fmt.Sprintf("o%d", i), Tenant: "acme"}, data, 0)
			}
			if held := c.len(); held > pgCacheMax || c.bytes > pgCacheMaxBytes || held*tt.bytes != c.bytes {
				t.Errorf("after %d puts of %d B: %d objects, %d B held; want at most %d and %d B", tt.n, tt.bytes, held, c.bytes, pgCacheMax, pgCacheMaxBytes)
			}
			last := fmt.Sprintf("o%d", tt.n-1)
			if _, ok := c.lineage("acme", last, 0); !ok {
				t.Errorf("the object put last (%s) is not held", last)
			}
		})
	}

	var c pgCache
	c.put(codec.Columns{ID: "p", Tenant: "acme"}, []byte("p"), 0)
	c.put(codec.Columns{ID: "k", Tenant: "acme", ParentID: "p"}, []byte("k"), 0)
	walks := []struct {
		tenant, id string
		depth      int
		want       string // the data walked, or "" for a miss
	}{
		{"acme", "k", 1, "kp"},
		{"acme", "k", 3, "kp"}, // the chain ends at p
		{"other", "k", 0, ""},
		{"acme", "gone", 0, ""},
	}
	for _, w := range walks {
		rows, ok := c.lineage(w.tenant, w.id, w.depth)
		got := ""
		for _, r := range rows {
			got += string(r.data)
		}
		if (w.want != "") != ok || got != w.want {
			t.Errorf("lineage(%q, %q, %d) = %q, %v; want %q", w.tenant, w.id, w.depth, got, ok, w.want)
		}
	}
	c.drop("p")
	if _, ok := c.lineage("acme", "k", 1); ok {
		t.Error("a lineage whose parent was dropped is still walked")
	}
	c.clear()
	if c.len() != 0 || c.bytes != 0 {
		t.Errorf("after clear: %d objects, %d B", c.len(), c.bytes)
	}
}

// What a commit or a read recorded late does not replace a later version of the object: the
// worker's landing of an action's phase may be recorded before the action's own commit.
func TestPGCacheKeepsTheLaterVersion(t *testing.T) {
	var c pgCache
	held := func() string {
		entries, ok := c.lineage("acme", "m", 0)
		if !ok || len(entries) != 1 {
			t.Fatalf("the cache holds %d entries of m (%v)", len(entries), ok)
		}
		return string(entries[0].data)
	}
	c.put(codec.Columns{ID: "m", Tenant: "acme", Version: 4}, []byte("landed"), 0)
	c.put(codec.Columns{ID: "m", Tenant: "acme", Version: 3}, []byte("accepted"), 0)
	if got := held(); got != "landed" {
		t.Fatalf("after version 4, then 3: the cache holds %q, want version 4's", got)
	}
	c.put(codec.Columns{ID: "m", Tenant: "acme", Version: 5}, []byte("acted"), 0)
	if got := held(); got != "acted" {
		t.Errorf("after version 5: the cache holds %q", got)
	}
	if c.bytes != len("acted") {
		t.Errorf("the cache counts %d bytes, want %d", c.bytes, len("acted"))
	}
}

// A read or a commit that began before a drop of its object (another replica's change heard)
// does not put back what it saw; one that began after does. The ring of drops is bounded:
// past it, a put that began before a drop it no longer holds is refused too.
func TestPGCacheDropsStand(t *testing.T) {
	var c pgCache
	m := codec.Columns{ID: "m", Tenant: "acme", Version: 3}
	before := c.mark()
	c.drop("m")
	c.put(m, []byte("read before"), before)
	if _, ok := c.lineage("acme", "m", 0); ok {
		t.Fatal("a read begun before the drop put the object back")
	}
	c.put(m, []byte("read after"), c.mark())
	if _, ok := c.lineage("acme", "m", 0); !ok {
		t.Fatal("a read begun after the drop did not put the object")
	}

	start := c.mark()
	for i := range pgCacheMax + 1 {
		c.drop(fmt.Sprintf("o%d", i))
	}
	if len(c.dropped) > pgCacheMax || len(c.drops) > pgCacheMax {
		t.Errorf("%d drops held, %d in the ring; want at most %d", len(c.dropped), len(c.drops), pgCacheMax)
	}
	c.put(codec.Columns{ID: "other", Tenant: "acme"}, []byte("x"), start)
	if _, ok := c.lineage("acme", "other", 0); ok {
		t.Error("a put begun before drops the ring no longer holds was taken")
	}
	c.clear()
	c.put(m, []byte("read before the clear"), start)
	if _, ok := c.lineage("acme", "m", 0); ok {
		t.Error("a read begun before a clear put the object back")
	}
}
