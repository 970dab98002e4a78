package reliability

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// deployMachine makes a cloudspace and a machine in it on sim (a replica with no worker),
// both landed.
func deployMachine(t *testing.T, sim *simtest.Sim) (space, machine *client.Object) {
	t.Helper()
	account := createAccount(t, sim)
	space, err := sim.Client.Create(t.Context(), "cloudspaces", client.CreateRequest{Name: "net", ParentID: account})
	if err != nil {
		t.Fatal(err)
	}
	sim.Advance(t, time.Hour)
	machine, err = sim.Client.Create(t.Context(), "machines", client.CreateRequest{Name: "vm", ParentID: space.ID,
		Spec: map[string]any{"image_id": "img"}})
	if err != nil {
		t.Fatal(err)
	}
	sim.Advance(t, time.Hour)
	return space, machine
}

// deaf is a replica's store that hears nothing of what other replicas commit: its decision
// cache (store.CachedLineageGetter) keeps what this replica last committed or read, however
// stale, as it would between another replica's commit and its notification.
type deaf struct{ *landings }

func (deaf) Changes(ctx context.Context) (<-chan store.Changes, error) {
	ch := make(chan store.Changes)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch, nil
}

// A replica decides an action from its decision cache, but a stale entry never lets a wrong
// decision commit: the parent or the object changed on another replica, the commit refuses
// the decision (the parent's state FOR SHARE, the object's version), and the action is
// decided again from a fresh read, with the answer a replica without a cache gives. A
// refusal decided from a stale entry is decided again too.
func TestReplicasStaleDecisionCache(t *testing.T) {
	stores, _ := openReplicaStores(t, 2)
	a, b := startStill(t, stores[0]), startStill(t, deaf{stores[1]})

	space, machine := deployMachine(t, a)

	// act runs an action on sim and returns the status and the state answered (or the error's
	// message).
	act := func(sim *simtest.Sim, collection, id, action string) (int, string) {
		t.Helper()
		st, body, err := call(http.MethodPost, sim.URL+"/v1/"+collection+"/"+id+"/actions/"+action, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		var answer struct {
			State string `json:"state"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &answer); err != nil {
			t.Fatalf("%s %s: %v in %s", action, id, err, body)
		}
		if st/100 == 2 {
			return st, answer.State
		}
		return st, answer.Error.Message
	}
	// state reads an object on A (never from a cache).
	state := func(id string) string {
		t.Helper()
		o, err := a.Client.Get(t.Context(), "machines", id)
		if err != nil {
			t.Fatal(err)
		}
		return o.State
	}
	want := func(what string, st int, got string, wantSt int, wantIn string) {
		t.Helper()
		if st != wantSt || !strings.Contains(got, wantIn) {
			t.Fatalf("%s: answered %d %q, want %d with %q", what, st, got, wantSt, wantIn)
		}
	}
	// fromCache runs f and checks that B decided from its cache first.
	fromCache := func(f func()) {
		t.Helper()
		before, _, _ := stores[1].CacheStats()
		f()
		if after, _, _ := stores[1].CacheStats(); after <= before {
			t.Fatalf("B did not decide from its cache (hits %d, then %d)", before, after)
		}
	}

	// B reads the machine and its cloudspace to stop it; its own worker lands the stop, so what
	// B holds of the machine is current, and of the cloudspace DEPLOYED.
	st, got := act(b, "machines", machine.ID, "stop")
	want("B stops the machine", st, got, http.StatusAccepted, "STOPPING")
	b.Advance(t, time.Hour)
	if s := state(machine.ID); s != "HALTED" {
		t.Fatalf("the machine is %s after B landed its stop, want HALTED", s)
	}

	// The parent changes on A: B holds it DEPLOYED, it is DISABLED. A start decided from that
	// would pass the guard; the commit's check of the parent refuses it, and B decides again.
	st, got = act(a, "cloudspaces", space.ID, "disable")
	want("A disables the cloudspace", st, got, http.StatusAccepted, "DISABLING")
	a.Advance(t, time.Hour)
	fromCache(func() {
		st, got = act(b, "machines", machine.ID, "start")
		want("B starts the machine in a disabled cloudspace", st, got, http.StatusUnprocessableEntity, "but it is DISABLED")
	})
	if s := state(machine.ID); s != "HALTED" {
		t.Fatalf("the machine is %s after a refused start, want HALTED", s)
	}

	// The parent changes back: B holds it DISABLED (what its second read saw). A refusal
	// decided from that is decided again, and the start goes through.
	st, got = act(a, "cloudspaces", space.ID, "enable")
	want("A enables the cloudspace", st, got, http.StatusAccepted, "ENABLING")
	a.Advance(t, time.Hour)
	fromCache(func() {
		st, got = act(b, "machines", machine.ID, "start")
		want("B starts the machine in a deployed cloudspace", st, got, http.StatusAccepted, "STARTING")
	})
	b.Advance(t, time.Hour)
	if s := state(machine.ID); s != "RUNNING" {
		t.Fatalf("the machine is %s after B landed its start, want RUNNING", s)
	}

	// The object changes on A: B holds it RUNNING, it is HALTED. A stop decided from that
	// would be accepted; the commit's version check refuses it, and B decides again.
	st, got = act(a, "machines", machine.ID, "stop")
	want("A stops the machine", st, got, http.StatusAccepted, "STOPPING")
	a.Advance(t, time.Hour)
	fromCache(func() {
		st, got = act(b, "machines", machine.ID, "stop")
		want("B stops the halted machine", st, got, http.StatusUnprocessableEntity, "HALTED")
	})
	if s := state(machine.ID); s != "HALTED" {
		t.Fatalf("the machine is %s after a refused stop, want HALTED", s)
	}
	events, err := a.Client.Events(t.Context(), "machines", machine.ID)
	if err != nil {
		t.Fatal(err)
	}
	stops := 0
	for _, e := range events {
		if e.To == "STOPPING" {
			stops++
		}
	}
	if stops != 2 {
		t.Errorf("the machine's history has %d stops, want 2 (B's first and A's): %+v", stops, events)
	}
}

// lineageReads is a replica's store that counts its reads of an object with its ancestors
// from the database (what an action decides from when not from the decision cache).
type lineageReads struct {
	*landings
	n atomic.Int64
}

func (s *lineageReads) GetLineage(ctx context.Context, tenant, id string, depth int) ([]*store.Object, error) {
	s.n.Add(1)
	return s.landings.GetLineage(ctx, tenant, id, depth)
}

// An action that its replica's cache finds busy with a phase that is over waits for the
// landing without reading the object again (at 64 clients on PostgreSQL, one action in two
// found its phase due and read it from the database, to find the same): the landing moves it
// on in the cache too, and the action is accepted from there.
func TestReplicasOverdueWaitsFromCache(t *testing.T) {
	stores, _ := openReplicaStores(t, 1)
	counted := &lineageReads{landings: stores[0]}
	a := startStill(t, counted)
	_, machine := deployMachine(t, a)
	if _, err := a.Client.Act(t.Context(), "machines", machine.ID, "stop", client.ActionRequest{}); err != nil {
		t.Fatal(err)
	}
	// The stop's phase is over; the worker has not landed it.
	clock, ok := a.Clock().(*engine.ManualClock)
	if !ok {
		t.Fatalf("the clock is a %T", a.Clock())
	}
	clock.Advance(time.Hour)

	reads := counted.n.Load()
	started := make(chan error, 1)
	go func() {
		_, err := a.Client.Act(context.WithoutCancel(t.Context()), "machines", machine.ID, "start", client.ActionRequest{})
		started <- err
	}()
	waitWatching(t, a, machine.ID)
	if err := a.Engine.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatalf("the start after the stop landed: %v", err)
	}
	if n := counted.n.Load() - reads; n != 0 {
		t.Errorf("the start read the machine from the database %d times, want 0 (it waited for the landing)", n)
	}
}
