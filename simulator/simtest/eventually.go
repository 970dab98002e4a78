package simtest

import (
	"testing"
	"time"
)

// eventuallyPoll is how often Eventually checks its condition.
const eventuallyPoll = 2 * time.Millisecond

// Eventually is the one way this repository's tests wait for something another goroutine or
// process does: it checks cond every few milliseconds until it holds and returns how long that
// took, and fails the test (naming what) if it does not hold within the bound. The bound is
// a generous limit against a hang, never a measurement: tests that measure report the
// duration it returns.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	began := time.Now()
	for !cond() {
		if time.Since(began) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(eventuallyPoll)
	}
	return time.Since(began)
}
