package engine

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// A landing is an operation a step ended: it landed in a static state (succeeded, failed,
// healed, aborted) or was preempted. Once the step commits, each is counted
// (Options.OnTransition) and logged at info, one line each, so a CI log shows what every
// object did. A step that loses a compare-and-set and starts over reports nothing of the
// attempt that lost.
type landing struct {
	tenant, kind, id, action, opID string
	// from is the static state the operation started from, phase the transition state it
	// ended in, to where it landed.
	from, phase, to string
	actor, outcome  string
}

// Outcomes of an operation, as landings report them.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
)

// ends says how c's running operation ends when it lands next (healed, aborted, preempted);
// without it a landing is a plain success or failure.
func (s *step) ends(c *change, outcome string) { c.outcome = outcome }

// recordLanding records that op, c's operation, ends in state to, moved there by actor.
func (s *step) recordLanding(c *change, op *store.Operation, to, actor string, failed bool) {
	outcome := outcomeSucceeded
	if failed {
		outcome = outcomeFailed
	}
	s.landings = append(s.landings, landing{tenant: c.o.Tenant, kind: c.k.Name, id: c.o.ID, action: op.Action, opID: op.ID,
		from: op.From, phase: c.o.State, to: to, actor: actor, outcome: cmp.Or(c.outcome, outcome)})
	c.outcome = ""
}

// reportLandings counts and logs a committed step's landings.
func (e *Engine) reportLandings(ctx context.Context, ls []landing) {
	for _, l := range ls {
		e.onDone(l.kind, l.action, l.outcome)
	}
	if len(ls) == 0 || !e.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	for _, l := range ls {
		e.log.LogAttrs(ctx, slog.LevelInfo, "transition landed",
			slog.String("tenant", l.tenant), slog.String("kind", l.kind), slog.String("id", l.id),
			slog.String("from", l.from), slog.String("to", l.to), slog.String("phase", l.phase),
			slog.String("action", l.action), slog.String("actor", l.actor), slog.String("outcome", l.outcome),
			slog.String("operation_id", l.opID))
	}
}
