package engine

import (
	"sync"
	"time"
)

// Clock tells the simulated time. The engine never reads the wall clock directly, so tests
// and time-driven kinds (Blazar leases) move time instead of sleeping.
type Clock interface {
	Now() time.Time
}

// SimClock is the wall clock plus an offset that /v1/sim/clock advances. It never goes
// backwards, even when the host's clock does.
type SimClock struct {
	mu     sync.Mutex
	offset time.Duration
	last   time.Time
	now    func() time.Time
}

// NewSimClock returns a clock running with the wall clock.
func NewSimClock() *SimClock { return &SimClock{now: time.Now} }

// Now implements Clock.
func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.now().Add(c.offset).UTC(); t.After(c.last) {
		c.last = t
	}
	return c.last
}

// Advance moves the clock forward by d (negative d is ignored).
func (c *SimClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += max(d, 0)
}

// Offset returns how far the clock is ahead of the wall clock.
func (c *SimClock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// SetOffset restores a saved offset; the clock still never goes backwards.
func (c *SimClock) SetOffset(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = d
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

// Advance moves the clock forward by d (negative d is ignored).
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(max(d, 0))
}

// advancer is a clock that can be moved forward.
type advancer interface {
	Clock
	Advance(time.Duration)
}

// offsetClock is a clock whose lead over the wall clock is kept in the store.
type offsetClock interface {
	Offset() time.Duration
	SetOffset(time.Duration)
}
