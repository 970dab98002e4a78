package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
)

// feedSize is how many changes the feed remembers per tenant; a reader further behind resyncs.
const feedSize = 16384

// feed records, in commit order, which objects of each tenant changed, so that a reader (the
// dashboard's live stream) can follow a tenant's changes from a position without polling the
// store. Each tenant has its own positions (one tenant's counter says nothing of another's
// activity) and its own lock: a commit takes only its tenant's, for O(changed objects), and
// a reader holds it only to copy the entries it asked for, never to search them.
//
// A reader holds a position as text, FEED-SEQ: the feed's name and the count of the tenant's
// changes it has read. The name is random, one per engine, so a position from another
// replica (whose counters count other events) or from before a restart is told apart: its
// reader resyncs instead of skipping changes.
type feed struct {
	name    string
	mu      sync.Mutex // guards tenants
	tenants map[string]*tenantFeed
}

// newFeedName names a feed: 16 random hex digits.
func newFeedName() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// position is the text of this feed's position seq.
func (f *feed) position(seq uint64) string { return f.name + "-" + strconv.FormatUint(seq, 10) }

// parse returns the count of a position of this feed; ok is false for any other text.
func (f *feed) parse(pos string) (seq uint64, ok bool) {
	name, n, found := strings.Cut(pos, "-")
	if !found || name != f.name {
		return 0, false
	}
	seq, err := strconv.ParseUint(n, 10, 64)
	return seq, err == nil
}

// tenantFeed is one tenant's changes.
type tenantFeed struct {
	mu   sync.Mutex
	seq  uint64
	ring []feedEntry   // entry s is at (s-1) % feedSize; grows up to feedSize
	wake chan struct{} // closed at the next publish
}

// feedEntry is one changed object, or a reset (every object of the tenant may have changed).
type feedEntry struct {
	id    string
	reset bool
}

// of returns a tenant's feed, making it the first time.
func (f *feed) of(tenant string) *tenantFeed {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tenants == nil {
		f.tenants = map[string]*tenantFeed{}
	}
	tf, ok := f.tenants[tenant]
	if !ok {
		tf = &tenantFeed{}
		f.tenants[tenant] = tf
	}
	return tf
}

func (f *feed) publish(tenant string, ids []string) {
	tf := f.of(tenant)
	tf.mu.Lock()
	defer tf.mu.Unlock()
	for _, id := range ids {
		tf.add(feedEntry{id: id})
	}
	tf.wakeAll()
}

// publishReset tells a tenant's readers (every tenant's, for everyone) to read everything again.
func (f *feed) publishReset(tenant string, everyone bool) {
	feeds := []*tenantFeed{f.of(tenant)}
	if everyone {
		f.mu.Lock()
		feeds = feeds[:0]
		for _, tf := range f.tenants {
			feeds = append(feeds, tf)
		}
		f.mu.Unlock()
	}
	for _, tf := range feeds {
		tf.mu.Lock()
		tf.add(feedEntry{reset: true})
		tf.wakeAll()
		tf.mu.Unlock()
	}
}

func (tf *tenantFeed) add(en feedEntry) {
	tf.seq++
	if i := (tf.seq - 1) % feedSize; int(i) < len(tf.ring) {
		tf.ring[i] = en
	} else {
		tf.ring = append(tf.ring, en)
	}
}

func (tf *tenantFeed) wakeAll() {
	if tf.wake != nil {
		close(tf.wake)
		tf.wake = nil
	}
}

// since returns the IDs of a tenant's objects changed after position after (deduplicated, in
// order), the latest position, whether the reader must resync (a reset, or it fell more than
// feedSize changes behind), and a channel closed at the next publish. Under the tenant's lock
// it only copies the entries; it deduplicates them after.
func (f *feed) since(tenant string, after uint64) (ids []string, next uint64, resync bool, wake <-chan struct{}) {
	tf := f.of(tenant)
	tf.mu.Lock()
	if tf.wake == nil {
		tf.wake = make(chan struct{})
	}
	next, wake = tf.seq, tf.wake
	if after > tf.seq || tf.seq-after > feedSize {
		tf.mu.Unlock()
		return nil, next, true, wake // a position from before a restart, or too far behind
	}
	entries := make([]feedEntry, 0, tf.seq-after)
	for s := after + 1; s <= tf.seq; s++ {
		entries = append(entries, tf.ring[(s-1)%feedSize])
	}
	tf.mu.Unlock()
	seen := make(map[string]bool, len(entries))
	for _, en := range entries {
		if en.reset {
			return nil, next, true, wake
		}
		if !seen[en.id] {
			seen[en.id] = true
			ids = append(ids, en.id)
		}
	}
	return ids, next, false, wake
}

// ChangePosition is the position of a tenant's latest change, from which Changes follows.
func (e *Engine) ChangePosition(tenant string) string {
	tf := e.feed.of(tenant)
	tf.mu.Lock()
	defer tf.mu.Unlock()
	return e.feed.position(tf.seq)
}

// Changes waits until a tenant's objects change after position after, and returns the IDs
// of the changed objects (read them to see how: a missing one is gone) and the new position.
// resync says the caller must read everything again: after a reset, when it fell too far
// behind, or for a position this engine did not give (another replica's, one from before a
// restart, or any other text): its changes since are not known here. It returns ctx's error
// when ctx ends first, with the position reached.
func (e *Engine) Changes(ctx context.Context, tenant, after string) (ids []string, next string, resync bool, err error) {
	seq, ok := e.feed.parse(after)
	if !ok {
		return nil, e.ChangePosition(tenant), true, nil
	}
	for {
		ids, next, resync, wake := e.feed.since(tenant, seq)
		if len(ids) > 0 || resync {
			return ids, e.feed.position(next), resync, nil
		}
		seq = next
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, e.feed.position(seq), false, ctx.Err()
		case <-e.draining:
			return nil, e.feed.position(seq), false, context.Canceled
		}
	}
}
