package simulator

import (
	"context"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// TestRestartResumesOperations stops a simulator on a SQLite file while operations are in
// flight, without letting them complete, and starts a new one on the same file: the
// operations resume and complete, and nothing accepted is lost.
func TestRestartResumesOperations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	store1, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	clock := engine.NewManualClock(harnessT0)
	h := newTestServer(t, harnessOptions{store: store1, clock: clock, healAfter: 10 * time.Minute})

	acct, cs := h.openvcloud()
	m1 := h.runningMachine(cs.ID, "m1")
	m2 := h.runningMachine(cs.ID, "m2")
	m3 := h.runningMachine(cs.ID, "m3")
	m5 := h.runningMachine(cs.ID, "m5")
	disk := h.create("disks", client.CreateRequest{Name: "d", ParentID: acct.ID})
	h.mustSettle("disks", disk.ID, "CREATED")
	h.act("disks", disk.ID, "attach", map[string]any{"machine_id": m2.ID})
	h.mustSettle("disks", disk.ID, "ASSIGNED")
	startAt := clock.Now().Add(time.Hour)
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: map[string]any{
		"start_date": startAt.Format(time.RFC3339), "end_date": startAt.Add(time.Hour).Format(time.RFC3339)}})
	h.mustSettle("leases", lease.ID, "PENDING")

	// Operations in flight at the stop.
	h.addFault(client.FaultRule{Kind: "machine", Action: "reset", Mode: wire.FaultHang, Count: 1})
	h.act("machines", m1.ID, "stop", nil)
	h.do(http.MethodDelete, objPath("machines", m2.ID)+"?mode=delete", nil)
	h.act("machines", m3.ID, "reboot", nil)
	h.act("machines", m5.ID, "reset", nil) // hangs
	m4 := h.create("machines", client.CreateRequest{Name: "m4", ParentID: cs.ID, Spec: map[string]any{"memory": 512}})
	cl := h.create("clusters", client.CreateRequest{Name: "hadoop"})
	h.advance(time.Second)
	wantAPIError(t, h.do(http.MethodPost, objPath("machines", m1.ID)+"/actions/start", nil), http.StatusConflict, client.CodeBusy)
	type objRef struct{ coll, id string }
	refs := []objRef{{"accounts", acct.ID}, {"cloudspaces", cs.ID}, {"machines", m1.ID}, {"machines", m2.ID},
		{"machines", m3.ID}, {"machines", m4.ID}, {"machines", m5.ID}, {"disks", disk.ID}, {"leases", lease.ID}, {"clusters", cl.ID}}
	before := map[string]client.Object{}
	beforeEvents := map[string][]client.Event{}
	for _, r := range refs {
		before[r.id] = h.get(r.coll, r.id)
		beforeEvents[r.id] = h.events(r.coll, r.id)
	}
	for _, id := range []string{m1.ID, m2.ID, m3.ID, m4.ID, m5.ID, cl.ID} {
		if before[id].Static {
			t.Fatalf("%s is static before the stop; the test wants it mid-transition", id)
		}
	}

	// Stop mid-transition: no more ticks, the server and the store go away.
	h.srv.Close()
	if err := store1.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}

	store2, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = store2.Close() })
	h2 := newTestServer(t, harnessOptions{store: store2, clock: engine.NewManualClock(clock.Now()), healAfter: 10 * time.Minute})

	// Everything is there as it was.
	for _, r := range refs {
		if got := h2.get(r.coll, r.id); !reflect.DeepEqual(got, before[r.id]) {
			t.Errorf("%s after restart = %+v\nwant %+v", r.id, got, before[r.id])
		}
		if got := h2.events(r.coll, r.id); !reflect.DeepEqual(got, beforeEvents[r.id]) {
			t.Errorf("%s events after restart = %+v\nwant %+v", r.id, got, beforeEvents[r.id])
		}
	}
	if l := decodeAs[client.ObjectList](t, h2.do(http.MethodGet, "/v1/machines", nil)); len(l.Items) != 5 {
		t.Errorf("%d machines after restart, want 5", len(l.Items))
	}
	// One action at a time holds across the restart.
	wantAPIError(t, h2.do(http.MethodPost, objPath("machines", m1.ID)+"/actions/start", nil), http.StatusConflict, client.CodeBusy)

	// The new engine completes what the old one accepted.
	for _, tt := range []struct {
		coll, id, want string
	}{
		{"machines", m1.ID, "HALTED"},
		{"machines", m2.ID, "DELETED"},
		{"machines", m3.ID, "RUNNING"},
		{"machines", m4.ID, "RUNNING"},
		{"clusters", cl.ID, "Active"},
	} {
		o := h2.mustSettle(tt.coll, tt.id, tt.want)
		if o.Version <= before[tt.id].Version {
			t.Errorf("%s version %d did not move on from %d", tt.id, o.Version, before[tt.id].Version)
		}
	}
	// The deleted machine's cascade ran in the new process.
	h2.mustSettle("disks", disk.ID, "TOBEDELETED")
	// The hanging reset heals once the limit passes, measured from before the restart.
	if o := h2.get("machines", m5.ID); o.State != "RESETTING" {
		t.Fatalf("m5 = %s, want still RESETTING", o.State)
	}
	h2.advance(10 * time.Minute)
	if o := h2.get("machines", m5.ID); o.State != "RUNNING" || !o.Static {
		t.Errorf("m5 after the heal limit = %s, want healed back to RUNNING", o.State)
	}
	// Timers set before the restart fire after it.
	h2.advance(startAt.Sub(h2.manual.Now()))
	h2.mustSettle("leases", lease.ID, "ACTIVE")

	// No event was lost or renumbered: the old history is a prefix of the new one.
	for _, r := range refs {
		evs := h2.events(r.coll, r.id)
		checkEventLog(t, evs)
		if old := beforeEvents[r.id]; len(evs) < len(old) || !reflect.DeepEqual(evs[:len(old)], old) {
			t.Errorf("%s history after restart does not start with the old one", r.id)
		}
	}
	if got := eventStates(h2.events("clusters", cl.ID)); !slices.Equal(got, []string{"", "Validating", "InfraUpdating",
		"Spawning", "Waiting", "Preparing", "Configuring", "Starting", "Active"}) {
		t.Errorf("cluster history across the restart = %v", got)
	}
}

// TestRestartWithWorker restarts onto a file with operations due in the past: the new
// process's worker completes them on its own.
func TestRestartWithWorker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	store1, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	h := newTestServer(t, harnessOptions{store: store1, clock: engine.NewManualClock(time.Now().Add(-time.Hour))})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.act("machines", m.ID, "stop", nil)
	h.srv.Close()
	if err := store1.Close(); err != nil {
		t.Fatal(err)
	}

	store2, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store2.Close() })
	h2 := newTestServer(t, harnessOptions{store: store2, worker: true})
	waitState(t, h2, "machines", m.ID, "HALTED")
}
