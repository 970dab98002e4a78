package engine

import (
	"context"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// Replicas: several engines (lifecyclesim processes) over one shared store. What one commits,
// the others hear of through the store (store.Notifier) and wake their long-polls, change
// feeds and worker for; the clock offset is the store's; the due work is split by claims
// (store.Claimer, in worker.go). A store of one process has none of these capabilities, and
// nothing here runs for it.

// claimTTL is how long a worker's claim on a due object holds when the worker does not land
// it (a replica killed holding claims): other replicas take the object after it.
const claimTTL = 5 * time.Second

// claimedWait is how long the worker waits before it claims again when every due object is
// claimed by other replicas (they wake it sooner when they land them).
const claimedWait = 50 * time.Millisecond

// followRetry is the wait before following a shared store's changes again after it failed.
const followRetry = time.Second

// Follow wakes this engine's long-polls, change feeds and worker for the changes other
// processes commit to a shared store (a store.Notifier), and keeps its clock at the offset
// they save, until ctx ends. Run calls it; an engine driven without Run (a test that ticks
// by hand) may call it itself. For a store of one process it returns at once.
func (e *Engine) Follow(ctx context.Context) {
	n, ok := e.store.(store.Notifier)
	if !ok {
		return
	}
	for ctx.Err() == nil {
		ch, err := n.Changes(ctx)
		if err == nil {
			// What was committed before the store listened was not heard: the clock, say.
			e.applyChanges(ctx, store.Changes{Lost: true})
			for c := range ch {
				e.applyChanges(ctx, c)
			}
		} else if e.logf != nil {
			e.logf("follow the shared store: %v (retrying)", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(followRetry):
		}
	}
}

// applyChanges wakes what waits on changes another process committed.
func (e *Engine) applyChanges(ctx context.Context, c store.Changes) {
	byTenant := map[string][]string{}
	for _, o := range c.Objects {
		e.hub.notify(o.ID)
		byTenant[o.Tenant] = append(byTenant[o.Tenant], o.ID)
	}
	for tenant, ids := range byTenant {
		e.feed.publish(tenant, ids)
	}
	if c.Lost || c.Poll {
		e.hub.notifyAll()
	}
	if c.Lost {
		e.feed.publishReset("", true)
	}
	if c.Clock || c.Lost || c.Poll {
		if err := e.followClock(ctx); err != nil && ctx.Err() == nil && e.logf != nil {
			e.logf("read the shared clock: %v", err)
		}
	}
	e.Kick() // a due time may have changed
}

// followClock moves the clock to the offset the store holds, if it is ahead (the clock never
// goes back).
func (e *Engine) followClock(ctx context.Context) error {
	oc, ok := e.clock.(offsetClock)
	if !ok {
		return nil
	}
	d, err := e.store.ClockOffset(ctx)
	if err != nil {
		return err
	}
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	if d = min(max(d, 0), MaxClockOffset); d > oc.Offset() {
		oc.SetOffset(d)
	}
	return nil
}
