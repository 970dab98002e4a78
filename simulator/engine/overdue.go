package engine

import (
	"context"
	"errors"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// OverdueAfter is how late, on the simulator's clock, a phase's end may be before the object
// counts as overdue: the worker advances due objects within milliseconds, so an object past
// it is one the worker is behind on or cannot advance (set aside, a failing store).
const OverdueAfter = 5 * time.Second

// maxOverdueChecked bounds the objects Overdue reads: past it the count stops there.
const maxOverdueChecked = 1000

// Overdue counts the objects (of every tenant) in a transition whose current phase was due
// more than OverdueAfter ago, at most maxOverdueChecked (for the metrics).
func (e *Engine) Overdue(ctx context.Context) (int, error) {
	due, err := e.store.Due(ctx, e.clock.Now().Add(-OverdueAfter))
	if err != nil {
		return 0, err
	}
	n := 0
	for i, d := range due {
		if i == maxOverdueChecked {
			break
		}
		o, err := e.store.Get(ctx, d.Tenant, d.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if o.Op != nil { // a static object's timer action is due, not a phase
			n++
		}
	}
	return n, nil
}
