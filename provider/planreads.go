package provider

import (
	"context"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// planReadMaxAge is how long a read answers plan-time checks. Terraform plans from a snapshot
// (it refreshes each object once per run), so a read a few seconds old is as good as the one
// the snapshot took; the bound keeps a long apply from warning about a parent as it was
// minutes ago.
const planReadMaxAge = 5 * time.Second

// planReads holds the objects plan-time checks read besides the resource's own: a child's
// parent, an ancestor a guard looks at (a cloudlet two levels up), the object a
// lifecycle_action runs on. The children of one parent read it once per run rather than once
// each: 200 machines planned at once wait for one GET of their cloudspace. Resources record
// the objects they read or changed themselves (Read, the end of a create or an update), which
// are then not read again at all; a deleted object is forgotten.
//
// One lives in each configured provider, that is for one Terraform run (a plan, or an
// apply). It answers only plan-time checks, which are warnings: what an apply does (routes,
// waits, the guards the server enforces) always reads the object fresh. Cached objects are
// shared: callers must not modify them. It is safe for concurrent use.
type planReads struct {
	c   *client.Client
	now func() time.Time

	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
}

type cacheKey struct{ collection, id string }

// cacheEntry is an object read (or being read: done is open) at a time.
type cacheEntry struct {
	done chan struct{}
	obj  *client.Object
	err  error
	at   time.Time
}

func newPlanReads(c *client.Client, now func() time.Time) *planReads {
	return &planReads{c: c, now: now, entries: map[cacheKey]*cacheEntry{}}
}

// get returns the object, read at most planReadMaxAge ago. Concurrent callers for one object
// share one GET; a failed GET is shared by the callers that waited for it, not kept.
func (rc *planReads) get(ctx context.Context, collection, id string) (*client.Object, error) {
	key := cacheKey{collection, id}
	rc.mu.Lock()
	e, ok := rc.entries[key]
	if ok && !e.pending() && (e.err != nil || rc.now().Sub(e.at) > planReadMaxAge) {
		ok = false
	}
	if !ok {
		e = &cacheEntry{done: make(chan struct{})}
		rc.entries[key] = e
		rc.mu.Unlock()
		e.obj, e.err = rc.c.Get(ctx, collection, id)
		e.at = rc.now()
		close(e.done)
		return e.obj, e.err
	}
	rc.mu.Unlock()
	select {
	case <-e.done:
		return e.obj, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put records an object the provider has just read or changed.
func (rc *planReads) put(collection string, o *client.Object) {
	if o == nil || o.ID == "" {
		return
	}
	e := &cacheEntry{done: make(chan struct{}), obj: o, at: rc.now()}
	close(e.done)
	rc.mu.Lock()
	rc.entries[cacheKey{collection, o.ID}] = e
	rc.mu.Unlock()
}

// forget drops an object the provider has deleted.
func (rc *planReads) forget(collection, id string) {
	rc.mu.Lock()
	delete(rc.entries, cacheKey{collection, id})
	rc.mu.Unlock()
}

func (e *cacheEntry) pending() bool {
	select {
	case <-e.done:
		return false
	default:
		return true
	}
}
