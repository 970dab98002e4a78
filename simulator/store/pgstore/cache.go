package pgstore

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// The decision cache (store.CachedLineageGetter): per object, the row (its columns and its
// data: packed, or JSON an earlier build wrote) this process last committed or read of it. An
// action decides from it instead of a round trip; its commit compares the object's version
// and the state of every ancestor it read (FOR SHARE), so a stale entry makes the commit fail
// with store.ErrVersion and the engine decides again from a fresh read, which replaces the
// entry. Nothing answers a read from it.
//
// Other replicas' commits drop their objects' entries when their notification arrives
// (decodeNote), and everything is dropped when changes may have been missed (Lost). A commit
// of this process that failed drops what it named. An entry a notification dropped may come
// back from a read that began before it: that too only costs a refused commit.

const (
	// pgCacheMax bounds the entries of the decision cache.
	pgCacheMax = 8192
	// pgCacheMaxBytes bounds the data it holds.
	pgCacheMaxBytes = 8 << 20
)

// pgCache is the decision cache of a store.
type pgCache struct {
	mu sync.Mutex
	// objs is each object's row as committed or read: its columns hold its tenant and parent
	// (to walk up without decoding) and its version.
	objs  map[string]pgRow
	bytes int
	// seq counts the drops. dropped holds, for each of the last pgCacheMax drops (drops, a
	// ring), the count at its object's latest drop; forgot is the count at the latest drop
	// it no longer holds, or at the latest clear. A read or a commit that began (mark)
	// before a drop of its object puts nothing back (put): what it brings may be what the
	// drop was for.
	seq, forgot uint64
	dropped     map[string]uint64
	drops       []pgDrop
	next        int // where the ring's next drop goes once it is full
	// hits and misses count GetLineageCached's answers from the cache and from the database.
	hits, misses atomic.Int64
}

// pgDrop is a drop of an object, at a count of pgCache.seq.
type pgDrop struct {
	id  string
	seq uint64
}

// mark is the point a read or a commit begins at, for put.
func (c *pgCache) mark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// put records an object's row as a read or a commit that began at since (mark) saw it,
// replacing what the cache held of it unless that is a later version, and makes room by
// dropping entries at random when the cache is full. A commit or a read records what it saw
// once it returns, and the goroutine may run late: the worker's landing of an action's phase
// can be recorded before the action's own commit is (one core, 16 clients), which would leave
// the action's version in the cache, the object seemingly still in its phase. Nor does it
// put back an object dropped since it began (another replica's change of it was heard
// meanwhile), or when it cannot tell.
func (c *pgCache) put(cols codec.Columns, data []byte, since uint64) {
	id := cols.ID
	c.mu.Lock()
	defer c.mu.Unlock()
	if since < c.forgot || c.dropped[id] > since {
		return
	}
	if c.objs == nil {
		c.objs = map[string]pgRow{}
	}
	if old, ok := c.objs[id]; ok {
		if old.cols.Version > cols.Version {
			return
		}
		c.bytes -= len(old.data)
	}
	for id2, old := range c.objs {
		if len(c.objs) < pgCacheMax && c.bytes+len(data) <= pgCacheMaxBytes {
			break
		}
		if id2 != id {
			delete(c.objs, id2)
			c.bytes -= len(old.data)
		}
	}
	c.objs[id] = pgRow{cols: cols, data: data}
	c.bytes += len(data)
}

// drop forgets objects, and that they were dropped now (put).
func (c *pgCache) drop(ids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == nil {
		c.dropped = map[string]uint64{}
	}
	for _, id := range ids {
		if old, ok := c.objs[id]; ok {
			c.bytes -= len(old.data)
			delete(c.objs, id)
		}
		c.seq++
		c.dropped[id] = c.seq
		d := pgDrop{id: id, seq: c.seq}
		if len(c.drops) < pgCacheMax {
			c.drops = append(c.drops, d)
			continue
		}
		old := c.drops[c.next]
		if c.dropped[old.id] == old.seq {
			delete(c.dropped, old.id)
		}
		c.forgot = max(c.forgot, old.seq)
		c.drops[c.next] = d
		c.next = (c.next + 1) % pgCacheMax
	}
}

// clear forgets everything: nothing a read or a commit begun before brings is put back.
func (c *pgCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objs, c.bytes = nil, 0
	c.seq++
	c.forgot, c.dropped, c.drops, c.next = c.seq, nil, nil, 0
}

// lineage returns the rows of a tenant's object and its ancestors, up to depth of them, when
// the cache holds every one (ok false otherwise).
func (c *pgCache) lineage(tenant, id string, depth int) (rows []pgRow, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := 0; n <= depth && id != ""; n++ {
		e, held := c.objs[id]
		if !held || e.cols.Tenant != tenant {
			return nil, false
		}
		rows = append(rows, e)
		id = e.cols.ParentID
	}
	return rows, true
}

// len is how many objects the cache holds.
func (c *pgCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.objs)
}

var _ store.CachedLineageGetter = (*Store)(nil)

// GetLineageCached implements store.CachedLineageGetter: from the decision cache when it holds
// the object and the ancestors asked for, else as GetLineage (whose read fills it).
func (s *Store) GetLineageCached(ctx context.Context, tenant, id string, depth int) ([]*store.Object, bool, error) {
	if rows, ok := s.cache.lineage(tenant, id, depth); ok {
		objs, err := decodeRows(rows)
		if err == nil {
			s.cache.hits.Add(1)
			return objs, true, nil
		}
		s.cache.drop(id)
	}
	s.cache.misses.Add(1)
	objs, err := s.GetLineage(ctx, tenant, id, depth)
	return objs, false, err
}

// CacheStats reports how many GetLineageCached calls the decision cache answered and how many
// it sent to the database, and how many objects it holds.
func (s *Store) CacheStats() (hits, misses int64, held int) {
	return s.cache.hits.Load(), s.cache.misses.Load(), s.cache.len()
}

// cacheCommit records the outcome of a commit of plan p, begun at since (pgCache.mark), in the
// decision cache: what it wrote when it succeeded, else nothing of what it named (it may
// have failed on a stale entry); and in the replica's due work (claim.go).
func (s *Store) cacheCommit(p *pgPlan, err error, since uint64) {
	if err != nil {
		ids := make([]string, len(p.objects))
		for i, o := range p.objects {
			ids[i] = o.id
		}
		s.cache.drop(ids...)
		// The due work it may have left this replica's (an outcome unknown) is read again.
		s.owned.doubt(false, ids...)
		return
	}
	for _, o := range p.objects {
		switch w := o.write; {
		case w == nil:
		case w.Remove:
			s.cache.drop(o.id)
			s.owned.remove(o.id)
		default:
			row := pgRow{cols: codec.ColumnsOf(w.Object), data: o.data}
			s.cache.put(row.cols, row.data, since)
			s.owned.put(row, codec.DueOf(w.Object.Due))
		}
	}
}
