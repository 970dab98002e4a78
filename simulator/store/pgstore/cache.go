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
	mu    sync.Mutex
	objs  map[string]pgCached
	bytes int
	// hits and misses count GetLineageCached's answers from the cache and from the database.
	hits, misses atomic.Int64
}

// pgCached is one object's entry: its row as committed or read (its columns hold its tenant
// and parent, to walk up without decoding, and its version).
type pgCached pgRow

// put records an object's row, replacing what the cache held of it unless that is a later
// version, and makes room by dropping entries at random when the cache is full. A commit or
// a read records what it saw once it returns, and the goroutine may run late: the worker's
// landing of an action's phase can be recorded before the action's own commit is (one core,
// 16 clients), which would leave the action's version in the cache, the object seemingly
// still in its phase.
func (c *pgCache) put(cols codec.Columns, data []byte) {
	id := cols.ID
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.objs == nil {
		c.objs = map[string]pgCached{}
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
	c.objs[id] = pgCached{cols: cols, data: data}
	c.bytes += len(data)
}

// drop forgets objects.
func (c *pgCache) drop(ids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if old, ok := c.objs[id]; ok {
			c.bytes -= len(old.data)
			delete(c.objs, id)
		}
	}
}

// clear forgets everything.
func (c *pgCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objs, c.bytes = nil, 0
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
		rows = append(rows, pgRow(e))
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

// cacheCommit records the outcome of a commit of plan p in the decision cache: what it wrote
// when it succeeded, else nothing of what it named (it may have failed on a stale entry).
func (s *Store) cacheCommit(p *pgPlan, err error) {
	if err != nil {
		ids := make([]string, len(p.objects))
		for i, o := range p.objects {
			ids[i] = o.id
		}
		s.cache.drop(ids...)
		return
	}
	for _, o := range p.objects {
		switch w := o.write; {
		case w == nil:
		case w.Remove:
			s.cache.drop(o.id)
		default:
			s.cache.put(codec.ColumnsOf(w.Object), o.data)
		}
	}
}
