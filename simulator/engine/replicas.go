package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// Replicas: several engines (lifecyclesim processes) over one shared store. What one commits,
// the others hear of through the store (store.Notifier) and wake their long-polls, change
// feeds and worker for; the clock offset is the store's; the due work is split by claims
// (store.Claimer, in worker.go). A store of one process has none of these capabilities, and
// nothing here runs for it.

// claimTTL is how long a worker's hold on the due objects its replica lands lasts when the
// worker stops claiming (a replica killed or frozen): other replicas take the objects after it.
const claimTTL = 5 * time.Second

// claimedWait is how long the worker waits before it claims again when an object it holds is
// due and was not landed this round (a request held it, or its landing lost a race and the
// object is read again first).
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
		} else {
			e.log.Warn("could not follow the shared store; retrying", slog.Any("err", err))
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
	e.followShared(ctx, c.Clock || c.Lost || c.Poll, c.Config || c.Lost || c.Poll, c.Faults || c.Lost || c.Poll)
	e.Kick() // a due time may have changed
}

// followShared reads again what the store keeps for every replica: the clock, the settings
// and the fault rules, as asked.
func (e *Engine) followShared(ctx context.Context, clock, config, faults bool) {
	report := func(what string, err error) {
		if err != nil && ctx.Err() == nil {
			e.log.Warn("could not read the shared state", slog.String("what", what), slog.Any("err", err))
		}
	}
	if clock {
		report("clock", e.RestoreClock(ctx))
	}
	if config {
		report("settings", e.followConfig(ctx))
	}
	if faults && e.faults.shared != nil {
		report("fault rules", e.faults.load(ctx))
	}
}

// RestoreSettings reads what a store replicas share keeps for all of them besides the clock
// (RestoreClock): the time scale and heal limit, and the fault rules, so that they are in
// force from the first request; Follow keeps them up to date after. Settings saved there
// replace the engine's Options. For a store of one process it does nothing.
func (e *Engine) RestoreSettings(ctx context.Context) error {
	if err := e.followConfig(ctx); err != nil {
		return err
	}
	if e.faults.shared != nil {
		return e.faults.load(ctx)
	}
	return nil
}

// followConfig applies the settings a shared store saved, if any.
func (e *Engine) followConfig(ctx context.Context) error {
	ck, ok := e.store.(store.ConfigKeeper)
	if !ok {
		return nil
	}
	c, ok, err := ck.Config(ctx)
	if err != nil || !ok {
		return err
	}
	if checkConfig(c.TimeScale, c.HealAfter) != nil {
		return fmt.Errorf("the saved time scale %v and heal limit %s are out of bounds: not applied", c.TimeScale, c.HealAfter)
	}
	e.setConfig(c.TimeScale, c.HealAfter)
	return nil
}
