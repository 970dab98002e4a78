package simulator

import (
	"sync"
	"time"
)

// Clock tells the simulated time. The engine never reads the wall clock directly, so tests
// and time-driven kinds (Blazar leases) move time instead of sleeping.
type Clock interface {
	Now() time.Time
}

// SimClock is the wall clock plus an offset that /v1/sim/clock advances.
type SimClock struct {
	mu     sync.Mutex
	offset time.Duration
	now    func() time.Time
}

// NewSimClock returns a clock running with the wall clock.
func NewSimClock() *SimClock { return &SimClock{now: time.Now} }

// Now implements Clock.
func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now().Add(c.offset).UTC()
}

// Advance moves the clock forward by d.
func (c *SimClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// ManualClock only moves when told to: the clock for deterministic tests.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock returns a clock stopped at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t.UTC()} }

// Now implements Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// advancer is a clock that can be moved forward.
type advancer interface {
	Clock
	Advance(time.Duration)
}
