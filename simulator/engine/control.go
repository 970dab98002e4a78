package engine

import (
	"context"
	"errors"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Simulator-wide controls: the clock and the heal limit, applied to what is already running.

// AdvanceClock moves the simulated clock forward by d and saves the new offset, so a restart
// keeps the time. d is bounded, and so is the clock's total lead over the wall clock.
func (e *Engine) AdvanceClock(ctx context.Context, d time.Duration) error {
	if d <= 0 || d > MaxClockAdvance {
		return errorf(wire.CodeInvalid, "advance must be a positive duration of at most %s (e.g. 1h), got %s", MaxClockAdvance, d)
	}
	adv, ok := e.clock.(advancer)
	if !ok {
		return errorf(wire.CodeInvalid, "this simulator's clock cannot be moved")
	}
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	if oc, ok := e.clock.(offsetClock); ok {
		if ca, ok := e.store.(store.ClockAdvancer); ok {
			// A shared clock: the store adds d to the offset replicas share.
			off, ok, err := ca.AdvanceClockOffset(ctx, d, MaxClockOffset)
			if err != nil {
				return err
			}
			if !ok {
				return errAdvanceLead(off)
			}
			oc.SetOffset(max(off, oc.Offset()))
			e.Kick()
			return nil
		}
		if oc.Offset()+d > MaxClockOffset {
			return errAdvanceLead(oc.Offset())
		}
		if err := e.store.SetClockOffset(ctx, oc.Offset()+d); err != nil {
			return err
		}
	}
	adv.Advance(d)
	e.Kick()
	return nil
}

// errClockLead refuses an advance that would put the clock, off ahead now, too far ahead.
func errClockLead(off time.Duration) *Error {
	return errorf(wire.CodeInvalid, "the clock may run at most %s ahead of the wall clock; it is %s ahead", MaxClockOffset, off)
}

// errAdvanceLead is errClockLead for a clock advance, with what can be done: advance it the
// rest of the way, or start over on a new store, whose clock starts at the wall clock (the
// offset is kept in the store, and the clock never goes back).
func errAdvanceLead(off time.Duration) *Error {
	const fresh = "start the simulator on a new store, whose clock starts at the wall clock"
	if room := (MaxClockOffset - off).Truncate(time.Second); room > 0 {
		return errorf(wire.CodeInvalid, "%s: advance it by %s at most, or %s", errClockLead(off).Message, room, fresh)
	}
	return errorf(wire.CodeInvalid, "%s: %s", errClockLead(off).Message, fresh)
}

// RestoreClock moves the clock to the offset the store saved, if it is ahead (the clock never
// goes back): at start-up, and when another replica saved a new offset (Follow).
func (e *Engine) RestoreClock(ctx context.Context) error {
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

// Reschedule applies the current heal limit to operations already running: a hung phase is
// healed heal_after after it began (not after the limit in force when it began), and a phase
// scheduled to take heal_after or longer now counts as stuck.
func (e *Engine) Reschedule(ctx context.Context) error {
	_, heal := e.Config()
	due, err := e.store.Due(ctx, store.MaxDue)
	if err != nil {
		return err
	}
	for _, d := range due {
		err := e.withStep(ctx, d.Tenant, d.ID, func(s *step, c *change) {
			op := c.o.Op
			if op == nil || op.Parked || op.Follows != "" || c.o.Due.IsZero() {
				return
			}
			healAt := addTime(op.PhaseStarted, heal)
			if (op.Hung && !c.o.Due.Equal(healAt)) || (!op.Hung && !c.o.Due.Before(healAt)) {
				op.Hung = true
				c.o.Due = healAt
				c.dirty = true
			}
		})
		if err != nil && !errors.Is(err, store.ErrVersion) && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	e.Kick()
	return nil
}

// withStep reads one object under its lock, lets fn change it, and commits.
func (e *Engine) withStep(ctx context.Context, tenant, id string, fn func(*step, *change)) error {
	defer e.lockObject(id)()
	o, err := e.store.Get(ctx, tenant, id)
	if err != nil {
		return err
	}
	k, err := e.reg.Kind(o.Kind)
	if err != nil {
		return err
	}
	s := e.newStep(ctx, tenant)
	fn(s, s.track(o, k))
	return s.commit("")
}
