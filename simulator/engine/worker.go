package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// The worker drives time: it completes phases that are due, starts timer and system actions,
// heals stuck phases. Operations accepted before a restart are in the store with their due
// times and resume here; a step commits whole, so nothing of a relation is half done.

// Run drives due phases until ctx ends.
func (e *Engine) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		tickErr := e.Tick(ctx)
		if tickErr != nil && ctx.Err() == nil && e.logf != nil {
			e.logf("worker: %v (retrying)", tickErr)
		}
		wait := time.Second
		// After an error the failing object is still due: retry in a second, not in a loop.
		if next, ok, err := e.store.NextDue(ctx); err == nil && ok && tickErr == nil {
			wait = min(max(next.Sub(e.clock.Now()), time.Millisecond), time.Second)
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
// object that cannot be advanced (its kind is no longer loaded, say) does not hold up the
// others; the errors are returned together.
func (e *Engine) Tick(ctx context.Context) error {
	for range 1000 { // each round may schedule more due work (instant phases)
		due, err := e.store.Due(ctx, e.clock.Now())
		if err != nil {
			return err
		}
		if len(due) == 0 {
			return nil
		}
		var errs []error
		for _, o := range due {
			if err := e.advance(ctx, o); err != nil && !errors.Is(err, store.ErrVersion) && !errors.Is(err, store.ErrNotFound) {
				errs = append(errs, fmt.Errorf("%s %s: %w", o.Kind, o.ID, err))
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	return nil
}

// advance moves a due object on: completes its phase, heals it, or starts its system or timer
// action, with everything that implies for related objects, in one step.
func (e *Engine) advance(ctx context.Context, due store.Scheduled) error {
	k, err := e.reg.Kind(due.Kind)
	if err != nil {
		return err
	}
	defer e.lockObject(due.ID)()
	s := e.newStep(ctx, due.Tenant)
	s.background = true
	// Read it again under the lock: a request may have moved it on since Due listed it, and
	// a stale copy must not draw faults.
	o, err := e.store.Get(ctx, due.Tenant, due.ID)
	if err != nil || o.Due.IsZero() || o.Due.After(s.now) {
		return err
	}
	c := s.track(o, k)
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
	case o.Op.Parked || o.Op.Follows != "":
		o.Due = time.Time{} // waiting for related operations, which wake it
		c.dirty = true
	default:
		s.completePhase(c)
	}
	return s.commit("")
}
