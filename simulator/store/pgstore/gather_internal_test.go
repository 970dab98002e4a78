package pgstore

import (
	"slices"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// A group gathers only when commits have lately been in flight several at once: a lone
// client's commit is taken at once, and after a peak of three, the commit that takes a group
// waits for two more and takes all three; after a quiet spell a lone commit goes at once again.
func TestGroupGathersAfterAPeak(t *testing.T) {
	// Long enough for the test to see the gathering, which ends as soon as it has its commits.
	g := pgGroup{gatherWait: time.Minute}
	commit := func() *pgGroupCommit { return &pgGroupCommit{done: make(chan error, 1)} }

	// One commit at a time: no gathering.
	for range 3 {
		c := commit()
		g.arrive(c)
		if got := g.gatherAndTake(); !slices.Equal(got, []*pgGroupCommit{c}) || g.underway() != nil {
			t.Fatalf("a lone commit: took %d commits, gathering %v; want it alone, at once", len(got), g.underway() != nil)
		}
		g.leave()
	}

	// Three in flight at once, then done.
	for range 3 {
		g.arrive(commit())
	}
	if got := g.gatherAndTake(); len(got) != 3 {
		t.Fatalf("took %d of 3 pending commits", len(got))
	}
	for range 3 {
		g.leave()
	}

	first := commit()
	g.arrive(first)
	taken := make(chan []*pgGroupCommit, 1)
	go func() { taken <- g.gatherAndTake() }()
	simtest.Eventually(t, 10*time.Second, "the group gathers", func() bool { return g.underway() != nil })
	rest := []*pgGroupCommit{commit(), commit()}
	for _, c := range rest {
		g.arrive(c)
	}
	if got := <-taken; !slices.Equal(got, append([]*pgGroupCommit{first}, rest...)) {
		t.Errorf("the gathered group took %d commits, want the 3 pending", len(got))
	}
	if g.underway() != nil {
		t.Error("the gathering did not end with the group taken")
	}

	// Fewer than the peak arrive: the group goes after the wait with what it has.
	g.gatherWait = time.Millisecond
	last := commit()
	g.arrive(last)
	if got := g.gatherAndTake(); !slices.Equal(got, []*pgGroupCommit{last}) {
		t.Errorf("a gathering that timed out took %d commits, want the 1 pending", len(got))
	}
	for range 4 { // first, rest and last have their outcomes
		g.leave()
	}

	// A peak older than the window before the current one counts no more: after a quiet
	// spell, a lone commit goes at once again.
	time.Sleep(2*pgPeakWindow + 10*time.Millisecond)
	lone := commit()
	g.arrive(lone)
	g.mu.Lock()
	want := g.wantLocked()
	g.mu.Unlock()
	if got := g.gatherAndTake(); want != 1 || !slices.Equal(got, []*pgGroupCommit{lone}) {
		t.Errorf("a lone commit after a quiet spell gathers for %d commits and took %d, want it alone, at once", want, len(got))
	}
}
