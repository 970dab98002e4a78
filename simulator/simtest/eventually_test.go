package simtest_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// fatalT records a Fatalf instead of ending the test.
type fatalT struct {
	testing.TB
	failed atomic.Bool
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(string, ...any) { f.failed.Store(true) }

// Eventually returns once its condition holds, and fails (without waiting for ever) when it
// never does.
func TestEventually(t *testing.T) {
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n.Add(1) < 3 {
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() { <-done }()
	if d := simtest.Eventually(t, 10*time.Second, "three counts", func() bool { return n.Load() >= 3 }); d < 0 {
		t.Errorf("Eventually took %s", d)
	}
	f := &fatalT{TB: t}
	calls := 0
	simtest.Eventually(f, 10*time.Millisecond, "never", func() bool {
		calls++
		return f.failed.Load() // Fatalf does not stop the loop here: end it once it failed
	})
	if !f.failed.Load() || calls < 2 {
		t.Errorf("Eventually of a condition that never holds: failed %v after %d checks, want a failure", f.failed.Load(), calls)
	}
}
