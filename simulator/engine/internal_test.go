package engine

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// IDs keep their form and sort in the order they were made, from many goroutines at once
// and with the wall clock set back: the stores' indexes take new objects at their edge.
func TestIDsSortInOrderMade(t *testing.T) {
	form := regexp.MustCompile(`^machine-[0-9a-f]{16}$`)
	const workers, each = 8, 2000
	made := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				made[w] = append(made[w], newID("machine"))
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, list := range made {
		if !slices.IsSorted(list) {
			t.Errorf("one goroutine's IDs are not in the order it made them: %v", list[:5])
		}
		for _, id := range list {
			if !form.MatchString(id) {
				t.Fatalf("ID %q: want machine- and 16 hex digits", id)
			}
			if seen[id] {
				t.Fatalf("ID %s made twice", id)
			}
			seen[id] = true
		}
	}

	var s idSource
	now := time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)
	first := s.next(now)
	if got := int64(first >> 22); got != now.UnixMilli() {
		t.Errorf("the ID's high bits hold %d, want the clock's milliseconds %d", got, now.UnixMilli())
	}
	back := s.next(now.Add(-time.Hour))            // the clock set back
	later := s.next(now.Add(2 * time.Millisecond)) // 1ms could meet back exactly (first's random bits all ones, later's zero)
	if back <= first || later <= back {
		t.Errorf("IDs made at now, an hour before and 2ms after: %x, %x, %x; want each larger than the last", first, back, later)
	}
}

// 9. Fault rules are capped per tenant and matched per tenant.
func TestHardenFaultRules(t *testing.T) {
	f := NewFaults(1)
	for i := range MaxFaultRules {
		if _, err := f.Add(t.Context(), "a", wire.FaultRule{Mode: wire.FaultFail, Kind: fmt.Sprint("k", i)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := f.Add(t.Context(), "a", wire.FaultRule{Mode: wire.FaultFail})
	if ae := AsError(err); ae.Code != wire.CodeForbidden || !strings.Contains(ae.Message, fmt.Sprint(MaxFaultRules)) {
		t.Errorf("rule %d = %v, want forbidden naming the cap", MaxFaultRules+1, err)
	}
	if _, err := f.Add(t.Context(), "b", wire.FaultRule{Mode: wire.FaultFail, Kind: "k5"}); err != nil {
		t.Errorf("another tenant's first rule = %v", err)
	}
	if r := f.Match(t.Context(), wire.FaultFail, "b", "k5", "", ""); r == nil {
		t.Errorf("b's rule did not match")
	}
	if r := f.Match(t.Context(), wire.FaultFail, "c", "k5", "", ""); r != nil {
		t.Errorf("tenant c matched %+v", r)
	}
	if n := len(f.rules["b"]); n != 1 {
		t.Errorf("b has %d rules in its list, want 1 (lookups read only the caller's rules)", n)
	}
}

func TestSaturatingTime(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := mulDuration(time.Hour, 1e300); got != maxDuration {
		t.Errorf("mulDuration(1h, 1e300) = %v, want the longest duration", got)
	}
	if got := addTime(t0, maxDuration); got.Before(t0) {
		t.Errorf("addTime overflowed to %v", got)
	}
}

// One tenant's thousands of due objects do not hold up another's: the worker's batches take
// turns, so the other tenant's object is in the second batch, not behind all of them.
func TestFairBatches(t *testing.T) {
	var due []store.Scheduled
	for i := range 200 {
		due = append(due, store.Scheduled{ID: fmt.Sprintf("a%d", i), Tenant: "a"})
	}
	due = append(due, store.Scheduled{ID: "b0", Tenant: "b"}, store.Scheduled{ID: "c0", Tenant: "c"}, store.Scheduled{ID: "b1", Tenant: "b"})
	var got []string
	next := 0 // tenant a's objects stay in their order
	for _, b := range fairBatches(due, 64) {
		for _, d := range b {
			if d.Tenant != b[0].Tenant {
				t.Fatalf("a batch mixes tenants: %v", b)
			}
			if d.Tenant == "a" {
				if d.ID != fmt.Sprintf("a%d", next) {
					t.Fatalf("tenant a's object %s comes where a%d was due", d.ID, next)
				}
				next++
			}
		}
		got = append(got, fmt.Sprintf("%s×%d", b[0].Tenant, len(b)))
	}
	want := []string{"a×64", "b×2", "c×1", "a×64", "a×64", "a×8"}
	if !slices.Equal(got, want) {
		t.Errorf("batches %v, want %v", got, want)
	}
}

// roundsOnly is a store that lists rounds of what is due; the worker must not list all of it.
type roundsOnly struct {
	*memstore.Store
	t *testing.T
}

func (s roundsOnly) Due(ctx context.Context, now time.Time) ([]store.Scheduled, error) {
	s.t.Error("the worker listed every due object (Due) of a store.DueRounder")
	return s.Store.Due(ctx, now)
}

// The worker takes one round of what is due from a store that lists rounds (the stores whose
// objects are in memory), in tenant turns, without reading the rest of a backlog: with 10,000
// lease timers firing at once, each round of 128 landings read all 10,000 (about a fifth of
// the firing's CPU). Another tenant's object due later than the backlog is in the round.
func TestWorkerListsOneRound(t *testing.T) {
	ctx := t.Context()
	t0 := storetest.T0
	ms := memstore.New()
	var batch store.Batch
	for i := range 3 * tickRound {
		o := storetest.NewObject(fmt.Sprintf("a%04d", i), "a", "machine")
		o.Due = t0
		batch.Writes = append(batch.Writes, store.Write{Object: o})
	}
	b := storetest.NewObject("b", "b", "machine")
	b.Due = t0.Add(time.Second)
	batch.Writes = append(batch.Writes, store.Write{Object: b})
	if err := ms.Commit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	e := New(roundsOnly{ms, t}, nil, NewManualClock(t0.Add(time.Minute)), Options{})
	due, err := e.due(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != tickRound {
		t.Errorf("the worker listed %d due objects, want a round's %d", len(due), tickRound)
	}
	if !slices.ContainsFunc(due, func(d store.Scheduled) bool { return d.ID == "b" }) {
		t.Errorf("tenant b's object, due after tenant a's %d, is not in the round", 3*tickRound)
	}
}

// A step lists objects as it sees them: those it holds as it holds them (the store does not
// decode them again: store.SkipLister), the others from the store.
func TestStepListsWhatItHoldsAsItHoldsIt(t *testing.T) {
	ctx := t.Context()
	ms := memstore.New()
	var batch store.Batch
	for _, id := range []string{"d1", "d2", "d3"} {
		o := storetest.NewObject(id, "acme", "disk")
		o.ParentID = "m"
		batch.Writes = append(batch.Writes, store.Write{Object: o})
	}
	if err := ms.Commit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	e := New(ms, lifecycle.Builtin(), NewManualClock(storetest.T0), Options{})
	s := e.newStep(ctx, "acme")
	d1, err := s.load("d1")
	if err != nil {
		t.Fatal(err)
	}
	d1.o.State, d1.dirty = "ASSIGNED", true
	d3, err := s.load("d3")
	if err != nil {
		t.Fatal(err)
	}
	d3.remove = true
	tests := []struct {
		f    store.Filter
		want []string
	}{
		{store.Filter{ParentID: "m"}, []string{"d1:ASSIGNED", "d2:CREATED"}},
		{store.Filter{ParentID: "m", State: "CREATED"}, []string{"d2:CREATED"}},
		{store.Filter{Kind: "disk", State: "ASSIGNED"}, []string{"d1:ASSIGNED"}},
	}
	for _, tt := range tests {
		got, err := s.list(tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.o.ID+":"+c.o.State)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("list(%+v) = %v, want %v", tt.f, ids, tt.want)
		}
	}
	if d2 := s.objs["d2"]; d2 == nil || d2.o == d1.o {
		t.Errorf("d2, listed from the store, is not held by the step")
	}
}

// CreateFamily answers the children its commit made as the store holds them (what a list
// reads back), and says when its answer is not its own commit's (a retry with the key).
func TestCreateFamily(t *testing.T) {
	ctx := t.Context()
	reg := lifecycle.Builtin()
	k, err := reg.Kind("lease")
	if err != nil {
		t.Fatal(err)
	}
	now := storetest.T0
	e := New(memstore.New(), reg, NewManualClock(now), Options{})
	req := wire.CreateRequest{Name: "l", Spec: map[string]any{"end_date": now.Add(2 * time.Hour).Format(time.RFC3339),
		"reservations": []any{map[string]any{"resource_type": "physical:host", "min": 1, "max": 2}}}}
	o, kids, ok, err := e.CreateFamily(ctx, "", k, req, "key-1")
	if err != nil || !ok {
		t.Fatalf("CreateFamily = %v, %v", ok, err)
	}
	listed, err := e.List(ctx, "", ListOptions{ParentID: o.ID})
	if err != nil {
		t.Fatal(err)
	}
	summary := func(objs []*store.Object) []string {
		var out []string
		for _, c := range objs {
			out = append(out, fmt.Sprintf("%s %s %s v%d %v %s", c.ID, c.Name, c.State, c.Version, c.Spec, c.UpdatedAt.Format(time.RFC3339Nano)))
		}
		slices.Sort(out)
		return out
	}
	if got, want := summary(kids), summary(listed); len(got) != 4 || !slices.Equal(got, want) {
		t.Errorf("CreateFamily's children:\n%s\nlisted:\n%s\nwant the same 4 (a reservation, three events)", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	again, kids, ok, err := e.CreateFamily(ctx, "", k, req, "key-1")
	if err != nil || ok || kids != nil || again.ID != o.ID {
		t.Errorf("a retry with the key = %v, %d children, ok %v, %v; want the first lease, no children, not ok", again.ID, len(kids), ok, err)
	}
}
