// Package engine runs lifecyclesim's state machines over a store: it accepts creates,
// actions, patches and deletes with one atomic compare-and-set each (accept.go), moves phases
// along when they are due and starts timer and system actions (worker.go, phases.go),
// carries out relations between objects (relations.go), commits each move in one store
// transaction (step.go), checks cross-object invariants (invariants.go), heals stuck
// transitions, injects faults (faults.go), runs on an injected clock (clock.go), and wakes
// long-polls and the dashboard's change feed (hub.go, feed.go). Simulator controls (clock
// advance, time scale, reset) are in control.go and reset.go.
//
// The engine knows nothing of HTTP: its errors are *Error values carrying wire codes, and
// the HTTP layer maps each code to its status in one place. It imports package lifecycle,
// store and wire (and the standard library), never echo, Prometheus, the HTTP layer or the
// client; metrics reach it as callbacks in Options.
package engine
