package engine

import (
	"context"
	"slices"
	"sync"
)

// feedSize is how many changes the feed remembers; a reader further behind resyncs.
const feedSize = 16384

// feed records, in commit order, which objects changed, so that a reader (the dashboard's
// live stream) can follow every tenant's changes from a position without polling the store.
type feed struct {
	mu   sync.Mutex
	seq  uint64
	ring [feedSize]feedEntry
	wake chan struct{} // closed at the next publish
}

// feedEntry is one changed object, or a reset (every object of the tenant may have changed).
type feedEntry struct {
	seq      uint64
	tenant   string
	id       string
	reset    bool
	everyone bool
}

func (f *feed) publish(tenant string, ids []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		f.add(feedEntry{tenant: tenant, id: id})
	}
	f.wakeAll()
}

func (f *feed) publishReset(tenant string, everyone bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.add(feedEntry{tenant: tenant, reset: true, everyone: everyone})
	f.wakeAll()
}

func (f *feed) add(en feedEntry) {
	f.seq++
	en.seq = f.seq
	f.ring[f.seq%feedSize] = en
}

func (f *feed) wakeAll() {
	if f.wake != nil {
		close(f.wake)
		f.wake = nil
	}
}

// since returns the IDs of a tenant's objects changed after position after (deduplicated, in
// order), the latest position, whether the reader must resync (a reset, or it fell more than
// feedSize changes behind), and a channel closed at the next publish.
func (f *feed) since(tenant string, after uint64) (ids []string, next uint64, resync bool, wake <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wake == nil {
		f.wake = make(chan struct{})
	}
	if after > f.seq {
		return nil, f.seq, true, f.wake // a position from before a restart
	}
	if f.seq-after > feedSize {
		return nil, f.seq, true, f.wake
	}
	for s := after + 1; s <= f.seq; s++ {
		en := f.ring[s%feedSize]
		if en.tenant != tenant && !en.everyone {
			continue
		}
		if en.reset {
			return nil, f.seq, true, f.wake
		}
		if !slices.Contains(ids, en.id) {
			ids = append(ids, en.id)
		}
	}
	return ids, f.seq, false, f.wake
}

// ChangeSeq is the position of the latest change, from which Changes follows.
func (e *Engine) ChangeSeq() uint64 {
	e.feed.mu.Lock()
	defer e.feed.mu.Unlock()
	return e.feed.seq
}

// Changes waits until a tenant's objects change after position after, and returns the IDs
// of the changed objects (read them to see how: a missing one is gone) and the new position.
// resync says the caller must read everything again (after a reset, or when it fell too far
// behind). It returns ctx's error when ctx ends first, with the position reached.
func (e *Engine) Changes(ctx context.Context, tenant string, after uint64) (ids []string, next uint64, resync bool, err error) {
	for {
		ids, next, resync, wake := e.feed.since(tenant, after)
		if len(ids) > 0 || resync {
			return ids, next, resync, nil
		}
		after = next // only other tenants' changes so far
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, after, false, ctx.Err()
		case <-e.draining:
			return nil, after, false, context.Canceled
		}
	}
}
