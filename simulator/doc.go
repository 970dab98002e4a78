// Package simulator is lifecyclesim: an HTTP API (labstack/echo) serving objects whose
// lifecycles follow the state machines of package lifecycle. Transitions take time, one action
// runs at a time per object, every state change is an atomic compare-and-set in the store,
// failures follow each kind's rule, stuck transitions are healed, and faults can be injected.
package simulator
