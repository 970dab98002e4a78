package engine

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// The worker drives time: it completes phases that are due, starts timer and system actions,
// heals stuck phases. Operations accepted before a restart are in the store with their due
// times and resume here; a step commits whole, so nothing of a relation is half done.

// Run drives due phases until ctx ends. Over a store other processes share, it also follows
// their changes (Follow).
func (e *Engine) Run(ctx context.Context) error {
	following := make(chan struct{})
	go func() {
		defer close(following)
		e.Follow(ctx)
	}()
	defer func() { <-following }()
	_, claiming := e.store.(store.Claimer)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		tickErr := e.Tick(ctx)
		// Objects that failed are set aside, each with a backoff of its own (isolate logged
		// them): the worker goes on at its pace. Any other error (the schedule could not be
		// read) is retried in a second, not in a loop.
		isolatedOnly := tickErr == nil || onlyIsolated(tickErr)
		if !isolatedOnly && ctx.Err() == nil {
			e.log.Warn("worker round failed; retrying", slog.Any("err", tickErr))
		}
		wait := time.Second
		if next, ok, err := e.store.NextDue(ctx); err == nil && ok && isolatedOnly {
			now := e.clock.Now()
			wait = min(max(next.Sub(now), time.Millisecond), time.Second)
			switch {
			case claiming && !next.After(now):
				// What is left due was not landed this round (a request here held it, or its
				// landing lost a race and the store reads it again first): the request's commit
				// wakes the worker, else it looks again shortly; do not spin on it.
				wait = claimedWait
			case !next.After(now) && e.isolated.unrecorded(now):
				// What is left due may be an object set aside whose due time the store would
				// not move: poll, not spin.
				wait = isolatePoll
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-e.kick:
			// Go 1.23+ timers: Reset needs no drain, and draining after a Stop that lost
			// the race with expiry would block for ever.
			timer.Stop()
		case <-timer.C:
		}
	}
}

// Tick advances every object that is due now. Tests call it after moving a manual clock. An
// object that cannot be advanced (its kind is no longer loaded, the store refuses it) does not
// hold up the others: it is set aside with a backoff of its own (isolate.go), and the errors
// are returned together.
//
// The worker is fair to tenants: the due objects are taken in batches of one tenant's, the
// tenants' batches in turn, and the schedule is read again after a round's budget, so one
// tenant's 10,000 landings delay another tenant's transition by one round at most, not by all
// of them. A batch is one step: the landings of an MCI's VMs due together write the MCI once.
//
// The same holds when several replicas share one schedule (a store.Claimer: PostgreSQL):
// each round, a replica's worker claims a round's worth of due objects in tenant turns (FOR
// UPDATE SKIP LOCKED, in a short transaction of its own), so replicas split the backlog
// without one tenant's queue ahead of another's on any of them. The landing is still the
// compare-and-set commit, so an object whose claim lapsed while its holder was at work does
// not land twice.
func (e *Engine) Tick(ctx context.Context) error {
	for range 1000 { // each round may schedule more due work (instant phases)
		due, err := e.due(ctx)
		if err != nil {
			return err
		}
		due = e.notSetAside(due)
		if len(due) == 0 {
			return nil
		}
		var errs []error
		budget := tickRound
		for _, b := range fairBatches(due, tickBatch) {
			if err := e.advanceBatch(ctx, b); err != nil {
				errs = append(errs, err)
			}
			if budget -= len(b); budget <= 0 {
				break
			}
			// On one core (GOMAXPROCS=1, a pinned server) requests wait for the worker to
			// yield: let them in between batches, not once per 10 ms preemption.
			runtime.Gosched()
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	return nil
}

// notSetAside leaves out of due the objects the worker set aside until later (isolate).
func (e *Engine) notSetAside(due []store.Scheduled) []store.Scheduled {
	if e.IsolatedObjects() == 0 {
		return due
	}
	now := e.clock.Now()
	out := due[:0:0]
	for _, d := range due {
		if !e.isolated.skip(d.ID, now) {
			out = append(out, d)
		}
	}
	return out
}

// due lists one round's worth of what is due now, in tenant turns: over a shared schedule
// (a store.Claimer) claimed for this engine; from a store.DueRounder without reading the
// rest of the backlog; else from all that is due.
func (e *Engine) due(ctx context.Context) ([]store.Scheduled, error) {
	switch s := e.store.(type) {
	case store.Claimer:
		return s.ClaimDue(ctx, e.clock.Now(), tickRound, tickBatch, claimTTL)
	case store.DueRounder:
		return s.DueRound(ctx, e.clock.Now(), tickRound, tickBatch)
	}
	return e.store.Due(ctx, e.clock.Now())
}

const (
	// tickBatch is how many due objects of one tenant one step advances.
	tickBatch = 64
	// tickRound is how many due objects the worker advances before it reads the schedule
	// again (a tenant's object that became due meanwhile waits for one round at most: about
	// 10 ms of landings).
	tickRound = 128
)

// fairBatches splits due objects (earliest first) into batches of one tenant's, at most n
// each, the tenants taking turns: batch 1 of every tenant, then batch 2, and so on.
func fairBatches(due []store.Scheduled, n int) [][]store.Scheduled {
	var tenants []string
	byTenant := map[string][]store.Scheduled{}
	for _, d := range due {
		if _, ok := byTenant[d.Tenant]; !ok {
			tenants = append(tenants, d.Tenant)
		}
		byTenant[d.Tenant] = append(byTenant[d.Tenant], d)
	}
	var out [][]store.Scheduled
	for more := true; more; {
		more = false
		for _, t := range tenants {
			q := byTenant[t]
			if len(q) == 0 {
				continue
			}
			k := min(n, len(q))
			out = append(out, q[:k:k])
			byTenant[t] = q[k:]
			more = more || len(q) > k
		}
	}
	return out
}

// advanceBatch advances a batch of one tenant's due objects in one step. Objects whose lock a
// request holds are left for the next round. When the step's commit loses a race, or fails
// otherwise, each object is advanced on its own, so one contended or failing object does not
// hold up the rest; an object whose own step fails is set aside (isolate).
func (e *Engine) advanceBatch(ctx context.Context, batch []store.Scheduled) error {
	locked, unlock := e.tryLockObjects(batch)
	defer unlock()
	s := e.newStep(ctx, locked[0].Tenant)
	s.background = true
	failed := map[string]error{}
	for _, due := range locked {
		if err := e.advance(s, due); err != nil {
			failed[due.ID] = err
		}
	}
	lost := func(err error) bool { return errors.Is(err, store.ErrVersion) || errors.Is(err, store.ErrNotFound) }
	err := s.commit("")
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return err // shutting down: nothing is set aside
	case len(locked) > 1:
		clear(failed)
		for _, due := range locked {
			due.Object = nil // the batch lost a race: read each object again
			one := e.newStep(ctx, due.Tenant)
			one.background = true
			if err := e.advance(one, due); err != nil {
				failed[due.ID] = err
			} else if err := one.commit(""); err != nil && !lost(err) {
				failed[due.ID] = err
			}
		}
	case lost(err):
		// Still due: retried next round.
	default:
		failed[locked[0].ID] = err
	}
	if ctx.Err() != nil {
		return errors.Join(slices.Collect(maps.Values(failed))...)
	}
	var errs []error
	for _, due := range locked {
		if err, ok := failed[due.ID]; ok {
			errs = append(errs, e.isolate(ctx, due, err))
		} else if e.IsolatedObjects() > 0 {
			e.isolated.clear(due.ID)
		}
	}
	return errors.Join(errs...)
}

// tryLockObjects locks the first object's stripe and every other stripe of the batch it can
// take without waiting (a request holding one may wait for a stripe the batch holds: waiting
// for more than one could deadlock). It returns the objects whose stripes it holds.
func (e *Engine) tryLockObjects(batch []store.Scheduled) ([]store.Scheduled, func()) {
	held := map[*sync.Mutex]bool{}
	first := e.stripe(batch[0].ID)
	first.Lock()
	held[first] = true
	out := []store.Scheduled{batch[0]}
	for _, d := range batch[1:] {
		m := e.stripe(d.ID)
		if !held[m] {
			if !m.TryLock() {
				continue
			}
			held[m] = true
		}
		out = append(out, d)
	}
	return out, func() {
		for m := range held {
			m.Unlock()
		}
	}
}

// advance moves a due object on in step s: completes its phase, heals it, or starts its system
// or timer action, with everything that implies for related objects.
func (e *Engine) advance(s *step, due store.Scheduled) error {
	if _, err := e.reg.Kind(due.Kind); err != nil {
		return err
	}
	// Read it again under the lock (or as the step has it: an earlier object of the batch may
	// have moved it): a request may have moved it on since Due listed it, and a stale copy
	// must not draw faults. A claim's copy (store.Scheduled.Object) was read by the claim,
	// which only takes an object whose phase is due: it is used as read.
	c, err := s.loadDue(due)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	o, k := c.o, c.k
	if o.Due.IsZero() || o.Due.After(s.now) {
		return nil
	}
	clearWorkerError(c)
	switch {
	case o.CascadeFrom != "":
		// A landing recorded by a version before relations, whose propagations were not
		// applied yet: apply them now.
		from := o.CascadeFrom
		o.CascadeFrom = ""
		o.Due = e.staticDue(o, k)
		c.dirty = true
		for _, p := range k.LandPropagations(o.State, from, "", false) {
			s.propagate(c, p, p.Run, false, "landed in "+o.State)
		}
	case o.Op == nil:
		s.startAutomatic(c)
	case o.Op.Hung:
		s.heal(c)
	case o.Op.Parked || o.Op.Follows != "" || o.Op.Held:
		o.Due = time.Time{} // waiting for related operations, which wake it
		c.dirty = true
	default:
		s.completePhase(c)
	}
	return nil
}
