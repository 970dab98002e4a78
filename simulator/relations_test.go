package simulator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Relations through the HTTP API: every harness checks the kinds' invariants after every
// commit (Blazar's consistency table, the MCI aggregate) and fails the test on a violation.

// children lists the objects of a collection under a parent, by name.
func (h *harness) children(coll, parentID string) []client.Object {
	h.t.Helper()
	r := h.do(http.MethodGet, "/v1/"+coll+"?parent_id="+parentID, nil)
	wantStatus(h.t, r, "GET /v1/"+coll, http.StatusOK)
	items := decodeAs[client.ObjectList](h.t, r).Items
	slices.SortFunc(items, func(a, b client.Object) int { return strings.Compare(a.Name, b.Name) })
	return items
}

// statesOf lists objects' states in order.
func statesOf(objs []client.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.State
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// forEachStore runs a test on the in-memory store and on a SQLite file: every relation
// mechanism commits through the same Store.Commit of both.
func forEachStore(t *testing.T, test func(t *testing.T, opt harnessOptions)) {
	t.Run("memory", func(t *testing.T) { test(t, harnessOptions{}) })
	t.Run("sqlite", func(t *testing.T) {
		s, _ := openTestSQLite(t)
		test(t, harnessOptions{store: s})
	})
}

// ---- Blazar -------------------------------------------------------------------------------

func leaseSpec(start, end time.Time, reservations ...map[string]any) map[string]any {
	res := make([]any, len(reservations))
	for i, r := range reservations {
		res[i] = r
	}
	return map[string]any{"start_date": start.Format(time.RFC3339), "end_date": end.Format(time.RFC3339), "reservations": res}
}

var (
	hostReservation     = map[string]any{"resource_type": "physical:host", "min": 1, "max": 2}
	instanceReservation = map[string]any{"resource_type": "virtual:instance", "amount": 3, "vcpus": 2, "memory_mb": 4096, "disk_gb": 20}
)

// leaseFamily reads a lease with its reservations and its events by type.
func (h *harness) leaseFamily(id string) (lease client.Object, reservations []string, events map[string]client.Object) {
	h.t.Helper()
	lease = h.get("leases", id)
	reservations = statesOf(h.children("reservations", id))
	events = map[string]client.Object{}
	for _, e := range h.children("events", id) {
		events[e.Spec["event_type"].(string)] = e
	}
	return lease, reservations, events
}

func TestBlazarLeaseMakesReservationsAndEvents(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	start, end := harnessT0.Add(time.Hour), harnessT0.Add(3*time.Hour)
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: leaseSpec(start, end, hostReservation, instanceReservation)})
	res := h.children("reservations", lease.ID)
	if len(res) != 2 || res[0].Name != "l-1" || res[1].Name != "l-2" {
		t.Fatalf("reservations = %+v, want l-1 and l-2", res)
	}
	if res[0].Spec["resource_type"] != "physical:host" || res[1].Spec["amount"] != 3.0 || res[0].State != "pending" {
		t.Errorf("reservations = %+v, want the request's items, pending", res)
	}
	evs := h.children("events", lease.ID)
	if len(evs) != 3 {
		t.Fatalf("events = %+v", evs)
	}
	for _, e := range evs {
		want := map[string]string{"start_lease": start.Format(time.RFC3339), "end_lease": end.Format(time.RFC3339),
			"before_end_lease": end.Add(-time.Hour).Format(time.RFC3339)}[e.Spec["event_type"].(string)]
		if e.State != "UNDONE" || e.Spec["time"] != want {
			t.Errorf("event %s = %s at %v, want UNDONE at %s", e.Name, e.State, e.Spec["time"], want)
		}
	}
	// Reservations and events are made only by their lease, and go only with it.
	r := h.do(http.MethodPost, "/v1/reservations", client.CreateRequest{Name: "r", ParentID: lease.ID, Spec: hostReservation})
	if d := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid); !strings.Contains(d.Message, "made by their lease") {
		t.Errorf("POST reservation: %q", d.Message)
	}
	wantAPIError(t, h.do(http.MethodPost, "/v1/events", client.CreateRequest{Name: "e", ParentID: lease.ID}), http.StatusBadRequest, client.CodeInvalid)
	r = h.do(http.MethodDelete, objPath("reservations", res[0].ID), nil)
	if d := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid); !strings.Contains(d.Message, "go with their lease") {
		t.Errorf("DELETE reservation: %q", d.Message)
	}
	wantAPIError(t, h.do(http.MethodPost, objPath("reservations", res[0].ID)+"/actions/release", nil), http.StatusBadRequest, client.CodeInvalid)
}

func TestBlazarTimersDriveLeaseReservationsAndEvents(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		start, end := harnessT0.Add(time.Hour), harnessT0.Add(3*time.Hour)
		lease := h.create("leases", client.CreateRequest{Name: "l", Spec: leaseSpec(start, end, hostReservation, instanceReservation)})
		h.mustSettle("leases", lease.ID, "PENDING")

		h.advance(start.Sub(h.manual.Now()))
		l, res, evs := h.leaseFamily(lease.ID)
		if l.State != "STARTING" || evs["start_lease"].State != "IN_PROGRESS" || evs["end_lease"].State != "UNDONE" || !slices.Equal(res, repeat("pending", 2)) {
			t.Fatalf("at start_date: lease %s, reservations %v, start %s, end %s; want STARTING, pending, IN_PROGRESS, UNDONE",
				l.State, res, evs["start_lease"].State, evs["end_lease"].State)
		}
		h.mustSettle("leases", lease.ID, "ACTIVE")
		l, res, evs = h.leaseFamily(lease.ID)
		if evs["start_lease"].State != "DONE" || !slices.Equal(res, repeat("active", 2)) {
			t.Fatalf("ACTIVE lease: reservations %v, start_lease %s; want active, DONE", res, evs["start_lease"].State)
		}
		// The lease, its reservations and the event moved in one commit: one timestamp.
		if !evs["start_lease"].UpdatedAt.Equal(l.UpdatedAt) {
			t.Errorf("start_lease done at %v, lease active at %v: not one commit", evs["start_lease"].UpdatedAt, l.UpdatedAt)
		}

		h.advance(end.Sub(h.manual.Now()))
		l, _, evs = h.leaseFamily(lease.ID)
		if l.State != "TERMINATING" || evs["end_lease"].State != "IN_PROGRESS" {
			t.Fatalf("at end_date: lease %s, end_lease %s; want TERMINATING, IN_PROGRESS", l.State, evs["end_lease"].State)
		}
		h.mustSettle("leases", lease.ID, "TERMINATED")
		_, res, evs = h.leaseFamily(lease.ID)
		if !slices.Equal(res, repeat("deleted", 2)) || evs["start_lease"].State != "DONE" || evs["end_lease"].State != "DONE" {
			t.Errorf("TERMINATED lease: reservations %v, events %s/%s", res, evs["start_lease"].State, evs["end_lease"].State)
		}
		// The reservations' histories name the lease that moved them.
		resv := h.children("reservations", lease.ID)[0]
		hist := h.events("reservations", resv.ID)
		checkEventLog(t, hist)
		if got := eventStates(hist); !slices.Equal(got, []string{"", "pending", "active", "deleted"}) {
			t.Errorf("reservation went %v", got)
		}
		if !strings.Contains(hist[1].Message, lease.ID) || hist[1].Actor != "system" {
			t.Errorf("activation event = %+v, want the system naming the lease", hist[1])
		}
	})
}

func TestBlazarFailedStart(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		start, end := harnessT0.Add(time.Hour), harnessT0.Add(3*time.Hour)
		h.addFault(client.FaultRule{Kind: "lease", Action: "start", Mode: wire.FaultFail, Count: 1, Message: "no hosts"})
		lease := h.create("leases", client.CreateRequest{Name: "l", Spec: leaseSpec(start, end, hostReservation)})
		h.advance(start.Sub(h.manual.Now()))
		h.mustSettle("leases", lease.ID, "ERROR")
		_, res, evs := h.leaseFamily(lease.ID)
		if !slices.Equal(res, []string{"error"}) || evs["start_lease"].State != "ERROR" || evs["end_lease"].State != "UNDONE" {
			t.Errorf("failed start: reservations %v, events %s/%s; want error, ERROR/UNDONE", res, evs["start_lease"].State, evs["end_lease"].State)
		}
		// An ERROR lease may be terminated (status.py); the end event runs with it.
		h.act("leases", lease.ID, "terminate", nil)
		h.mustSettle("leases", lease.ID, "TERMINATED")
		_, res, evs = h.leaseFamily(lease.ID)
		if !slices.Equal(res, []string{"deleted"}) || evs["end_lease"].State != "DONE" {
			t.Errorf("terminated: reservations %v, end_lease %s", res, evs["end_lease"].State)
		}
	})
}

// TestBlazarFailedCreate: a lease whose create fails is ERROR with its reservations in error
// (not pending), so terminating it keeps the consistency table the harness checks.
func TestBlazarFailedCreate(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	h.addFault(client.FaultRule{Kind: "lease", Action: "create", Mode: wire.FaultFail, Count: 1, Message: "no capacity"})
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: leaseSpec(harnessT0.Add(time.Hour), harnessT0.Add(3*time.Hour), hostReservation)})
	h.mustSettle("leases", lease.ID, "ERROR")
	if _, res, _ := h.leaseFamily(lease.ID); !slices.Equal(res, []string{"error"}) {
		t.Errorf("failed create: reservations %v, want error", res)
	}
	h.act("leases", lease.ID, "terminate", nil)
	h.mustSettle("leases", lease.ID, "TERMINATED")
	if _, res, evs := h.leaseFamily(lease.ID); !slices.Equal(res, []string{"deleted"}) || evs["end_lease"].State != "DONE" {
		t.Errorf("terminated: reservations %v, end_lease %s; want deleted, DONE", res, evs["end_lease"].State)
	}
}

func TestBlazarDates(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	now := h.manual.Now()
	bad := []struct {
		name  string
		spec  map[string]any
		field string
	}{
		{"not RFC 3339", map[string]any{"start_date": "tomorrow", "end_date": now.Add(time.Hour).Format(time.RFC3339)}, "spec.start_date"},
		{"end before start", leaseSpec(now.Add(2*time.Hour), now.Add(time.Hour)), "spec.end_date"},
		{"end missing", map[string]any{"start_date": now.Format(time.RFC3339)}, "spec.end_date"},
		{"unknown field", map[string]any{"end_date": now.Add(time.Hour).Format(time.RFC3339), "colour": "red"}, "spec.colour"},
		{"bad reservation", leaseSpec(now, now.Add(time.Hour), map[string]any{"resource_type": "physical:host", "min": 0}), "spec.reservations[0].min"},
		{"unknown resource type", leaseSpec(now, now.Add(time.Hour), map[string]any{"resource_type": "gpu"}), "spec.reservations[0].resource_type"},
		{"year out of range", map[string]any{"end_date": "99999-01-01T00:00:00Z"}, "spec.end_date"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			d := wantAPIError(t, h.do(http.MethodPost, "/v1/leases", client.CreateRequest{Name: "l", Spec: tt.spec}), http.StatusBadRequest, client.CodeInvalid)
			if !strings.Contains(d.Message, tt.field) || !strings.Contains(string(d.Details), tt.field) {
				t.Errorf("error %q %s does not name %s", d.Message, d.Details, tt.field)
			}
		})
	}

	// A start in the past, or none, means now: the lease starts as soon as it is created.
	past := h.create("leases", client.CreateRequest{Name: "past", Spec: leaseSpec(now.Add(-48*time.Hour), now.Add(time.Hour))})
	if past.Spec["start_date"] != now.Format(time.RFC3339) {
		t.Errorf("a past start_date became %v, want now %s", past.Spec["start_date"], now.Format(time.RFC3339))
	}
	noStart := h.create("leases", client.CreateRequest{Name: "nostart", Spec: map[string]any{"end_date": now.Add(time.Hour).Format(time.RFC3339)}})
	h.mustSettle("leases", noStart.ID, "ACTIVE") // CREATING, PENDING, then STARTING at once

	// Moving the end of an active lease moves its end_lease event; its start cannot move.
	later := now.Add(5 * time.Hour).Format(time.RFC3339)
	r := h.do(http.MethodPatch, objPath("leases", noStart.ID), client.PatchRequest{Spec: map[string]any{"end_date": later}})
	wantStatus(t, r, "PATCH end_date", http.StatusAccepted)
	if o := decodeAs[client.Object](t, r); o.State != "UPDATING" {
		t.Errorf("PATCH end_date: lease %s, want UPDATING", o.State)
	}
	h.mustSettle("leases", noStart.ID, "ACTIVE")
	_, _, evs := h.leaseFamily(noStart.ID)
	if evs["end_lease"].Spec["time"] != later {
		t.Errorf("end_lease time = %v, want %s", evs["end_lease"].Spec["time"], later)
	}
	r = h.do(http.MethodPatch, objPath("leases", noStart.ID), client.PatchRequest{Spec: map[string]any{"start_date": later}})
	if d := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition); !strings.Contains(d.Message, "start_date") || !strings.Contains(d.Message, "PENDING") {
		t.Errorf("PATCH start_date of a started lease: %q", d.Message)
	}
	r = h.do(http.MethodPatch, objPath("leases", noStart.ID), client.PatchRequest{Spec: map[string]any{"end_date": now.Add(-time.Hour).Format(time.RFC3339)}})
	wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid)
	r = h.do(http.MethodPatch, objPath("leases", noStart.ID), client.PatchRequest{Spec: map[string]any{"reservations": []any{hostReservation}}})
	if d := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid); !strings.Contains(d.Message, "cannot change after create") {
		t.Errorf("PATCH reservations: %q", d.Message)
	}
	// The moved end_date is when it ends.
	h.advance(4 * time.Hour)
	if o := h.get("leases", noStart.ID); o.State != "ACTIVE" {
		t.Errorf("lease before its new end_date is %s", o.State)
	}
	h.advance(time.Hour)
	h.mustSettle("leases", noStart.ID, "TERMINATED")
}

// TestBlazarBeforeEndLease: the lease's third event, as Blazar's manager makes it, runs by
// itself an hour before end_date (never before start_date) without moving the lease or its
// reservations; a prolong moves it by as much as end_date, keeping its lead, and sets a done
// one UNDONE again.
func TestBlazarBeforeEndLease(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		start, end := harnessT0.Add(time.Hour), harnessT0.Add(3*time.Hour)
		lease := h.create("leases", client.CreateRequest{Name: "l", Spec: leaseSpec(start, end, hostReservation)})
		short := h.create("leases", client.CreateRequest{Name: "short", Spec: leaseSpec(start, start.Add(30*time.Minute), hostReservation)})
		at := func(id string) string {
			t.Helper()
			_, _, evs := h.leaseFamily(id)
			return fmt.Sprint(evs["before_end_lease"].Spec["time"])
		}
		if got, want := at(lease.ID), end.Add(-time.Hour).Format(time.RFC3339); got != want {
			t.Errorf("before_end_lease at %s, want %s (an hour before end_date)", got, want)
		}
		if got, want := at(short.ID), start.Format(time.RFC3339); got != want {
			t.Errorf("a 30-minute lease's before_end_lease at %s, want its start_date %s", got, want)
		}

		h.advance(start.Sub(h.manual.Now()))
		h.mustSettle("leases", lease.ID, "ACTIVE")
		h.mustSettle("leases", short.ID, "ACTIVE")
		if _, _, evs := h.leaseFamily(lease.ID); evs["before_end_lease"].State != "UNDONE" {
			t.Fatalf("before_end_lease of a started lease is %s before its time, want UNDONE", evs["before_end_lease"].State)
		}
		// A short lease keeps its shorter lead (Blazar keeps end_date - time): 30 minutes.
		wantStatus(t, h.do(http.MethodPatch, objPath("leases", short.ID), client.PatchRequest{Spec: map[string]any{"end_date": start.Add(150 * time.Minute).Format(time.RFC3339)}}),
			"PATCH end_date", http.StatusAccepted)
		h.mustSettle("leases", short.ID, "ACTIVE")
		if got, want := at(short.ID), start.Add(2*time.Hour).Format(time.RFC3339); got != want {
			t.Errorf("the short lease's before_end_lease after a prolong at %s, want %s (30 minutes before its new end)", got, want)
		}
		// Its time: it runs on its own; the lease and its reservations stay as they are.
		h.advance(end.Add(-time.Hour).Sub(h.manual.Now()))
		l, res, evs := h.leaseFamily(lease.ID)
		if evs["before_end_lease"].State != "IN_PROGRESS" || l.State != "ACTIVE" || !slices.Equal(res, []string{"active"}) || evs["end_lease"].State != "UNDONE" {
			t.Fatalf("at end_date - 1h: before_end_lease %s, lease %s, reservations %v, end_lease %s; want IN_PROGRESS, ACTIVE, active, UNDONE",
				evs["before_end_lease"].State, l.State, res, evs["end_lease"].State)
		}
		ev := h.mustSettle("events", evs["before_end_lease"].ID, "DONE")
		if l := h.get("leases", lease.ID); l.State != "ACTIVE" || l.Operation != nil {
			t.Fatalf("lease after before_end_lease: %s (%+v), want ACTIVE and idle", l.State, l.Operation)
		}

		// A prolong by an hour (set --prolong-for 1h) moves it an hour, UNDONE again; it runs again.
		later := end.Add(time.Hour)
		wantStatus(t, h.do(http.MethodPatch, objPath("leases", lease.ID), client.PatchRequest{Spec: map[string]any{"end_date": later.Format(time.RFC3339)}}),
			"PATCH end_date", http.StatusAccepted)
		h.mustSettle("leases", lease.ID, "ACTIVE")
		if ev = h.get("events", ev.ID); ev.State != "UNDONE" || ev.Spec["time"] != end.Format(time.RFC3339) {
			t.Fatalf("before_end_lease after a prolong: %s at %v, want UNDONE at %s", ev.State, ev.Spec["time"], end.Format(time.RFC3339))
		}
		if got := eventStates(h.events("events", ev.ID)); !slices.Equal(got, []string{"", "UNDONE", "IN_PROGRESS", "DONE", "DONE", "UNDONE"}) {
			t.Errorf("before_end_lease went %v", got)
		}

		h.advance(end.Sub(h.manual.Now()))
		h.mustSettle("events", ev.ID, "DONE")
		h.advance(later.Sub(h.manual.Now()))
		h.mustSettle("leases", lease.ID, "TERMINATED")
		if _, _, evs := h.leaseFamily(lease.ID); evs["start_lease"].State != "DONE" || evs["end_lease"].State != "DONE" || evs["before_end_lease"].State != "DONE" {
			t.Errorf("TERMINATED lease's events: %s/%s/%s, want all DONE", evs["start_lease"].State, evs["end_lease"].State, evs["before_end_lease"].State)
		}
	})
}

// TestBlazarTwoEventLeasesKeepTwo: a lease stored by a simulator whose lease made two events
// (before before_end_lease) keeps its two after a restart on the new kinds, as Blazar leaves a
// lease without one alone: it moves, starts and ends as before, consistent at every commit.
func TestBlazarTwoEventLeasesKeepTwo(t *testing.T) {
	old := lifecycle.NewRegistry()
	files, err := filepath.Glob("../lifecycle/specs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("specs: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "blazar.yaml" {
			var kept []string
			for _, line := range strings.Split(string(data), "\n") {
				if !strings.Contains(line, "name: before_end_lease") {
					kept = append(kept, line)
				}
			}
			if len(kept) == strings.Count(string(data), "\n")+1 {
				t.Fatal("blazar.yaml has no before_end_lease child to leave out")
			}
			data = []byte(strings.Join(kept, "\n"))
		}
		kinds, err := lifecycle.Parse(f, data)
		if err != nil {
			t.Fatal(err)
		}
		if err := old.Add(kinds...); err != nil {
			t.Fatal(err)
		}
	}
	st, path := openTestSQLite(t)
	clock := engine.NewManualClock(harnessT0)
	h := newTestServer(t, harnessOptions{store: st, clock: clock, reg: old})
	start, end := harnessT0.Add(time.Hour), harnessT0.Add(3*time.Hour)
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: leaseSpec(start, end, hostReservation)})
	h.mustSettle("leases", lease.ID, "PENDING")
	if n := len(h.children("events", lease.ID)); n != 2 {
		t.Fatalf("the old kinds made %d events, want 2", n)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reopened.Close() })
	h2 := newTestServer(t, harnessOptions{store: reopened, clock: clock})
	later := end.Add(time.Hour)
	wantStatus(t, h2.do(http.MethodPatch, objPath("leases", lease.ID), client.PatchRequest{Spec: map[string]any{"end_date": later.Format(time.RFC3339)}}),
		"PATCH end_date", http.StatusAccepted)
	h2.mustSettle("leases", lease.ID, "PENDING")
	h2.advance(later.Sub(clock.Now()))
	h2.mustSettle("leases", lease.ID, "TERMINATED")
	_, res, evs := h2.leaseFamily(lease.ID)
	if len(evs) != 2 || evs["start_lease"].State != "DONE" || evs["end_lease"].State != "DONE" || evs["end_lease"].Spec["time"] != later.Format(time.RFC3339) || !slices.Equal(res, []string{"deleted"}) {
		t.Errorf("the two-event lease after a restart, a prolong and its end: events %+v, reservations %v; want start_lease and end_lease DONE (end at %s), deleted",
			evs, res, later.Format(time.RFC3339))
	}
	// A new lease on the same simulator gets three.
	if n := len(h2.children("events", h2.create("leases", client.CreateRequest{Name: "new", Spec: leaseSpec(clock.Now(), clock.Now().Add(time.Hour), hostReservation)}).ID)); n != 3 {
		t.Errorf("a new lease has %d events, want 3", n)
	}
}

func TestBlazarDeleteRemovesReservationsAndEvents(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		lease := h.create("leases", client.CreateRequest{Name: "l", Spec: leaseSpec(harnessT0.Add(time.Hour), harnessT0.Add(2*time.Hour), hostReservation)})
		h.mustSettle("leases", lease.ID, "PENDING")
		res, evs := h.children("reservations", lease.ID), h.children("events", lease.ID)
		wantStatus(t, h.do(http.MethodDelete, objPath("leases", lease.ID), nil), "DELETE lease", http.StatusAccepted)
		if _, exists := h.settle("leases", lease.ID); exists {
			t.Fatal("lease still exists")
		}
		for _, o := range append(res, evs...) {
			coll := map[string]string{"reservation": "reservations", "event": "events"}[o.Kind]
			wantAPIError(t, h.do(http.MethodGet, objPath(coll, o.ID), nil), http.StatusNotFound, client.CodeNotFound)
			hist := h.events(coll, o.ID)
			if last := hist[len(hist)-1]; !strings.Contains(last.Message, "removed with its lease") {
				t.Errorf("%s's last event = %+v, want its removal with the lease", o.Name, last)
			}
		}
	})
}

// ---- CB-Tumblebug -------------------------------------------------------------------------

func mciSpec(groups ...map[string]any) map[string]any {
	items := make([]any, len(groups))
	for i, g := range groups {
		items[i] = g
	}
	return map[string]any{"subgroups": items}
}

func subgroup(name string, count int, csp, region string) map[string]any {
	return map[string]any{"name": name, "count": count, "csp": csp, "region": region, "spec": "t3.small", "image": "ubuntu22.04"}
}

// mciStatus reads an MCI's aggregated status fields.
func mciStatus(t *testing.T, o client.Object) (text, targetAction string, counts map[string]any) {
	t.Helper()
	text, _ = o.Status["text"].(string)
	targetAction, _ = o.Status["target_action"].(string)
	counts, _ = o.Status["status_count"].(map[string]any)
	return text, targetAction, counts
}

func TestMCIProvisionsItsVMs(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(subgroup("web", 2, "aws", "us-east-1"), subgroup("db", 1, "gcp", "asia-northeast3"))})
	vms := h.children("vms", mci.ID)
	names := make([]string, len(vms))
	for i, vm := range vms {
		names[i] = vm.Name
	}
	if !slices.Equal(names, []string{"infra-db-1", "infra-web-1", "infra-web-2"}) {
		t.Fatalf("VMs = %v", names)
	}
	if vms[0].Spec["csp"] != "gcp" || vms[0].Spec["region"] != "asia-northeast3" || vms[0].Spec["subgroup"] != "db" || vms[1].Spec["csp"] != "aws" {
		t.Errorf("VM specs = %v / %v, want their subgroup's csp and region", vms[0].Spec, vms[1].Spec)
	}
	if !slices.Equal(statesOf(vms), repeat("Creating", 3)) || mci.State != "Preparing" {
		t.Errorf("at create: MCI %s, VMs %v", mci.State, statesOf(vms))
	}
	if _, action, _ := mciStatus(t, mci); action != "create" {
		t.Errorf("creating MCI's target_action = %q, want create", action)
	}
	o := h.mustSettle("mcis", mci.ID, "Running")
	text, action, counts := mciStatus(t, o)
	if text != "Running:3 (R:3/3)" || action != "None" || counts["count_total"] != 3.0 || counts["count_running"] != 3.0 || o.Status["target_status"] != "None" {
		t.Errorf("MCI status = %q, target %q, counts %v", text, action, counts)
	}
	// The MCI lands only when every VM has.
	if got := statesOf(h.children("vms", mci.ID)); !slices.Equal(got, repeat("Running", 3)) {
		t.Errorf("VMs of a Running MCI: %v", got)
	}
	// VMs are made only by their MCI.
	wantAPIError(t, h.do(http.MethodPost, "/v1/vms", client.CreateRequest{Name: "vm", ParentID: mci.ID}), http.StatusBadRequest, client.CodeInvalid)
}

func TestMCIActionsRunOnItsVMs(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(subgroup("web", 3, "aws", "us-east-1"))})
		h.mustSettle("mcis", mci.ID, "Running")

		o := h.act("mcis", mci.ID, "suspend", nil)
		if o.State != "Suspending" || !slices.Equal(statesOf(h.children("vms", mci.ID)), repeat("Suspending", 3)) {
			t.Fatalf("suspending: MCI %s, VMs %v", o.State, statesOf(h.children("vms", mci.ID)))
		}
		if _, action, _ := mciStatus(t, o); action != "suspend" || o.Status["target_status"] != "Suspended" {
			t.Errorf("target = %v/%v, want suspend/Suspended", action, o.Status["target_status"])
		}
		// One action at a time: the MCI refuses another while it runs.
		wantAPIError(t, h.do(http.MethodPost, objPath("mcis", mci.ID)+"/actions/terminate", nil), http.StatusConflict, client.CodeBusy)
		o = h.mustSettle("mcis", mci.ID, "Suspended")
		if text, _, _ := mciStatus(t, o); text != "Suspended:3 (R:0/3)" {
			t.Errorf("suspended MCI status %q", text)
		}

		// A VM-level action moves the aggregate.
		vms := h.children("vms", mci.ID)
		h.act("vms", vms[0].ID, "resume", nil)
		h.mustSettle("vms", vms[0].ID, "Running")
		o = h.get("mcis", mci.ID)
		if text, _, _ := mciStatus(t, o); text != "Partial-Suspended:2 (R:1/3)" || o.State != "Suspended" || o.Status["partial"] != true {
			t.Errorf("after one VM resumed: MCI %s %q partial %v, want Suspended Partial-Suspended:2 (R:1/3)", o.State, text, o.Status["partial"])
		}

		// Resume on Partial-Suspended resumes the suspended VMs; the running one is skipped and
		// reported.
		o = h.act("mcis", mci.ID, "resume", nil)
		prop, _ := o.Status["propagation"].(map[string]any)
		skipped, _ := prop["skipped"].([]any)
		if len(skipped) != 1 || skipped[0].(map[string]any)["id"] != vms[0].ID {
			t.Errorf("propagation = %v, want the running VM skipped", prop)
		}
		o = h.mustSettle("mcis", mci.ID, "Running")
		if text, _, _ := mciStatus(t, o); text != "Running:3 (R:3/3)" {
			t.Errorf("resumed MCI %q", text)
		}
		for _, vm := range h.children("vms", mci.ID) {
			hist := h.events("vms", vm.ID)
			checkEventLog(t, hist)
		}

		// Terminate reaches every VM.
		h.act("mcis", mci.ID, "terminate", nil)
		o = h.mustSettle("mcis", mci.ID, "Terminated")
		if got := statesOf(h.children("vms", mci.ID)); !slices.Equal(got, repeat("Terminated", 3)) {
			t.Errorf("VMs of a terminated MCI: %v", got)
		}
		// No VM is added to a Terminated MCI.
		r := h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: mciSpec(subgroup("web", 5, "aws", "us-east-1"))})
		wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	})
}

func TestMCIPartialFailureRefineAndForce(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		h.addFault(client.FaultRule{Kind: "vm", Action: "create", Mode: wire.FaultFail, Count: 1, Message: "quota exceeded"})
		mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(subgroup("web", 3, "aws", "us-east-1"))})
		o := h.mustSettle("mcis", mci.ID, "Running")
		text, _, counts := mciStatus(t, o)
		if text != "Partial-Running:2 (R:2/3)" || counts["count_failed"] != 1.0 {
			t.Errorf("MCI with a failed VM: %q %v", text, counts)
		}
		// refine removes the Failed VM.
		h.act("mcis", mci.ID, "refine", nil)
		o = h.mustSettle("mcis", mci.ID, "Running")
		if text, _, _ := mciStatus(t, o); text != "Running:2 (R:2/2)" || len(h.children("vms", mci.ID)) != 2 {
			t.Errorf("refined MCI %q with %d VMs", text, len(h.children("vms", mci.ID)))
		}

		// Every VM failing gives a Failed MCI, which only a forced terminate leaves.
		h.addFault(client.FaultRule{Kind: "vm", Action: "create", Mode: wire.FaultFail, Probability: 1})
		bad := h.create("mcis", client.CreateRequest{Name: "bad", Spec: mciSpec(subgroup("web", 2, "azure", "koreacentral"))})
		o = h.mustSettle("mcis", bad.ID, "Failed")
		if text, _, _ := mciStatus(t, o); text != "Failed:2 (R:0/2)" {
			t.Errorf("failed MCI %q", text)
		}
		d := wantAPIError(t, h.do(http.MethodPost, objPath("mcis", bad.ID)+"/actions/terminate", nil), http.StatusUnprocessableEntity, client.CodeInvalidTransition)
		if !strings.Contains(d.Message, "force") {
			t.Errorf("terminate of a Failed MCI: %q", d.Message)
		}
		wantStatus(t, h.do(http.MethodPost, objPath("mcis", bad.ID)+"/actions/terminate", client.ActionRequest{Force: true}), "forced terminate", http.StatusAccepted)
		h.mustSettle("mcis", bad.ID, "Terminated")
		if got := statesOf(h.children("vms", bad.ID)); !slices.Equal(got, repeat("Terminated", 2)) {
			t.Errorf("VMs after a forced terminate: %v", got)
		}
	})
}

func TestMCIUndefinedThroughAFault(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(subgroup("web", 1, "aws", "us-east-1"), subgroup("db", 2, "aws", "us-west-2"))})
	h.mustSettle("mcis", mci.ID, "Running")
	vms := h.children("vms", mci.ID)
	// The simulator loses track of a VM (the CSP stops answering).
	r := h.do(http.MethodPost, "/v1/sim/system/vms/"+vms[0].ID+"/lose_track", nil)
	wantStatus(t, r, "lose_track", http.StatusAccepted)
	if o := decodeAs[client.Object](t, r); o.State != "Undefined" {
		t.Errorf("VM after lose_track: %s", o.State)
	}
	o := h.get("mcis", mci.ID)
	if text, _, counts := mciStatus(t, o); text != "Partial-Running:2 (R:2/3)" || counts["count_undefined"] != 1.0 {
		t.Errorf("MCI with an Undefined VM: %q %v", text, counts)
	}
	// User actions are not system actions, and system actions are not user actions.
	wantAPIError(t, h.do(http.MethodPost, "/v1/sim/system/vms/"+vms[1].ID+"/suspend", nil), http.StatusBadRequest, client.CodeInvalid)
	wantAPIError(t, h.do(http.MethodPost, objPath("vms", vms[1].ID)+"/actions/lose_track", nil), http.StatusBadRequest, client.CodeInvalid)
	h.act("mcis", mci.ID, "refine", nil)
	if got := len(h.children("vms", mci.ID)); got != 2 {
		t.Errorf("refine left %d VMs, want 2", got)
	}
}

func TestMCIScalesSubgroups(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(subgroup("web", 2, "aws", "us-east-1"), subgroup("db", 1, "aws", "us-east-1"))})
		h.mustSettle("mcis", mci.ID, "Running")

		// Scale out: new VMs, named on from the highest number.
		r := h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: mciSpec(subgroup("web", 4, "aws", "us-east-1"), subgroup("db", 1, "aws", "us-east-1"))})
		wantStatus(t, r, "PATCH scale out", http.StatusAccepted)
		if o := decodeAs[client.Object](t, r); o.State != "Scaling" {
			t.Errorf("scaling MCI is %s", o.State)
		}
		o := h.mustSettle("mcis", mci.ID, "Running")
		if text, _, _ := mciStatus(t, o); text != "Running:5 (R:5/5)" {
			t.Errorf("scaled-out MCI %q", text)
		}
		var names []string
		for _, vm := range h.children("vms", mci.ID) {
			names = append(names, vm.Name)
		}
		if !slices.Equal(names, []string{"infra-db-1", "infra-web-1", "infra-web-2", "infra-web-3", "infra-web-4"}) {
			t.Errorf("VMs after scale-out: %v", names)
		}

		// Scale in: the newest VMs are terminated, then removed.
		before := h.children("vms", mci.ID)
		h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: mciSpec(subgroup("web", 1, "aws", "us-east-1"), subgroup("db", 1, "aws", "us-east-1"))})
		vms := h.children("vms", mci.ID)
		terminating := 0
		for _, vm := range vms {
			if vm.State == "Terminating" {
				terminating++
				if vm.Name == "infra-web-1" {
					t.Errorf("the oldest web VM is being terminated")
				}
			}
		}
		if terminating != 3 {
			t.Errorf("scale-in terminates %d VMs, want 3: %v", terminating, statesOf(vms))
		}
		o = h.mustSettle("mcis", mci.ID, "Running")
		if text, _, _ := mciStatus(t, o); text != "Running:2 (R:2/2)" {
			t.Errorf("scaled-in MCI %q", text)
		}
		for _, vm := range before[2:] {
			wantAPIError(t, h.do(http.MethodGet, objPath("vms", vm.ID), nil), http.StatusNotFound, client.CodeNotFound)
		}
		// A count out of bounds is refused naming the field.
		r = h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: mciSpec(subgroup("web", 1000, "aws", "us-east-1"))})
		if d := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid); !strings.Contains(d.Message, "subgroups[0].count") {
			t.Errorf("count 1000: %q", d.Message)
		}
	})
}

func TestMCIActionsQueueUnderCSPLimits(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		// NCP runs three regions at once: the VM of a fourth region waits its turn.
		mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(
			subgroup("a", 1, "ncp", "kr-1"), subgroup("b", 1, "ncp", "kr-2"), subgroup("c", 1, "ncp", "kr-3"), subgroup("d", 1, "ncp", "kr-4"))})
		h.mustSettle("mcis", mci.ID, "Running")
		h.act("mcis", mci.ID, "suspend", nil)
		vms := h.children("vms", mci.ID)
		if got := statesOf(vms); !slices.Equal(got, []string{"Suspending", "Suspending", "Suspending", "Running"}) {
			t.Fatalf("VMs at suspend: %v, want three suspending and one queued", got)
		}
		if vms[3].Status["queued"] != "suspend" {
			t.Errorf("queued VM status = %v, want queued: suspend", vms[3].Status)
		}
		h.advance(2 * time.Second)
		vms = h.children("vms", mci.ID)
		if got := statesOf(vms); !slices.Equal(got, []string{"Suspended", "Suspended", "Suspended", "Suspending"}) || vms[3].Status["queued"] != nil {
			t.Fatalf("VMs after the first wave: %v (queued %v)", got, vms[3].Status["queued"])
		}
		if o := h.get("mcis", mci.ID); o.State != "Suspending" {
			t.Errorf("MCI while its last VM suspends: %s", o.State)
		}
		h.mustSettle("mcis", mci.ID, "Suspended")
	})
}

// ---- MobiledgeX ---------------------------------------------------------------------------

// edge makes a Ready cloudlet with a Ready ClusterInst and a Ready AppInst.
func (h *harness) edge() (cloudlet, cluster, app client.Object) {
	h.t.Helper()
	cloudlet = h.create("cloudlets", client.CreateRequest{Name: "edge"})
	cloudlet = h.mustSettle("cloudlets", cloudlet.ID, "Ready")
	cluster = h.create("cluster_insts", client.CreateRequest{Name: "k8s", ParentID: cloudlet.ID})
	cluster = h.mustSettle("cluster_insts", cluster.ID, "Ready")
	app = h.create("app_insts", client.CreateRequest{Name: "web", ParentID: cluster.ID})
	app = h.mustSettle("app_insts", app.ID, "Ready")
	return cloudlet, cluster, app
}

func TestMobiledgeXUpgradeFreezesClusterAndAppInsts(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		cl, ci, app := h.edge()
		h.addFault(client.FaultRule{Kind: "cloudlet", Action: "upgrade", Mode: wire.FaultFail, Count: 1, Message: "CRMv2 bringup failed"})
		wantStatus(t, h.do(http.MethodPatch, objPath("cloudlets", cl.ID), client.PatchRequest{Spec: map[string]any{"version": "2.0"}}), "upgrade", http.StatusAccepted)
		frozen := func(when string) {
			t.Helper()
			appSpec := map[string]any{"app_name": "api", "app_version": "1"}
			for _, r := range []*response{
				h.do(http.MethodPatch, objPath("app_insts", app.ID), client.PatchRequest{Spec: map[string]any{"configs": "x"}}),
				h.do(http.MethodDelete, objPath("app_insts", app.ID), nil),
				h.do(http.MethodPost, "/v1/app_insts", client.CreateRequest{Name: "api", ParentID: ci.ID, Spec: appSpec}),
				h.do(http.MethodPatch, objPath("cluster_insts", ci.ID), client.PatchRequest{Spec: map[string]any{"num_nodes": 5}}),
			} {
				d := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
				td, ok := (&client.Error{Code: client.CodeInvalidTransition, Details: d.Details}).Transition()
				if !ok || td.BlockedBy != cl.ID || td.Kind != "cloudlet" || !slices.Equal(td.Need, []string{"Ready"}) || !strings.Contains(d.Message, cl.ID) {
					t.Errorf("%s: refusal %q %+v does not name the cloudlet, its state and Ready", when, d.Message, td)
				}
			}
		}
		frozen("during the upgrade")
		h.mustSettle("cloudlets", cl.ID, "UpdateError")
		frozen("in UpdateError")
		// The admin fixes the cloudlet: changes run again.
		h.act("cloudlets", cl.ID, "fix", nil)
		wantStatus(t, h.do(http.MethodPatch, objPath("app_insts", app.ID), client.PatchRequest{Spec: map[string]any{"configs": "x"}}), "PATCH app after fix", http.StatusAccepted)
		h.mustSettle("app_insts", app.ID, "Ready")
	})
}

func TestMobiledgeXDeleteRefusedWithChildren(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		cl, ci, app := h.edge()
		d := wantAPIError(t, h.do(http.MethodDelete, objPath("cloudlets", cl.ID), nil), http.StatusUnprocessableEntity, client.CodeInvalidTransition)
		if !strings.Contains(d.Message, ci.ID) || !strings.Contains(d.Message, "cluster_inst") || !strings.Contains(d.Message, "delete them first") {
			t.Errorf("DELETE cloudlet with a ClusterInst: %q does not name it", d.Message)
		}
		td, _ := (&client.Error{Code: client.CodeInvalidTransition, Details: d.Details}).Transition()
		if want := []client.Dependent{{ID: ci.ID, Kind: "cluster_inst", Name: ci.Name, State: "Ready", Via: client.ViaParent}}; !slices.Equal(td.Dependents, want) {
			t.Errorf("DELETE cloudlet with a ClusterInst: dependents %+v, want %+v", td.Dependents, want)
		}
		if len(td.InUseBy) != 0 {
			t.Errorf("DELETE cloudlet with a ClusterInst: in_use_by %v, want none (a child cannot name another parent)", td.InUseBy)
		}
		d = wantAPIError(t, h.do(http.MethodDelete, objPath("cluster_insts", ci.ID), nil), http.StatusUnprocessableEntity, client.CodeInvalidTransition)
		if !strings.Contains(d.Message, app.ID) {
			t.Errorf("DELETE ClusterInst with an AppInst: %q does not name it", d.Message)
		}
		// The children were not touched, and still change.
		if o := h.get("cluster_insts", ci.ID); o.State != "Ready" {
			t.Errorf("ClusterInst after a refused delete: %s", o.State)
		}
		for _, step := range []struct{ coll, id string }{{"app_insts", app.ID}, {"cluster_insts", ci.ID}, {"cloudlets", cl.ID}} {
			wantStatus(t, h.do(http.MethodDelete, objPath(step.coll, step.id), nil), "DELETE "+step.coll, http.StatusAccepted)
			if _, exists := h.settle(step.coll, step.id); exists {
				t.Fatalf("%s still exists", step.coll)
			}
		}
	})
}

func TestMobiledgeXControllerAcksInitOk(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	cl, _, _ := h.edge()
	h.do(http.MethodPatch, objPath("cloudlets", cl.ID), client.PatchRequest{Spec: map[string]any{"version": "2.0"}})
	h.mustSettle("cloudlets", cl.ID, "Ready")
	want := map[string]string{"UpdateRequested→Updating": "crm", "Updating→InitOk": "controller", "InitOk→Ready": "crm"}
	for _, e := range h.events("cloudlets", cl.ID) {
		if actor, ok := want[e.From+"→"+e.To]; ok && e.Action == "upgrade" {
			if e.Actor != actor {
				t.Errorf("upgrade %s → %s by %s, want %s", e.From, e.To, e.Actor, actor)
			}
			delete(want, e.From+"→"+e.To)
		}
	}
	if len(want) != 0 {
		t.Errorf("upgrade never went %v", want)
	}
	// CRMv2 may gather its data before the controller's ack arrives: Updating → Ready by the CRM.
	h.addFault(client.FaultRule{Kind: "cloudlet", Action: "upgrade", Phase: "InitOk", Mode: wire.FaultDrop, Count: 1})
	h.do(http.MethodPatch, objPath("cloudlets", cl.ID), client.PatchRequest{Spec: map[string]any{"version": "3.0"}})
	h.mustSettle("cloudlets", cl.ID, "Ready")
	evs := h.events("cloudlets", cl.ID)
	if last := evs[len(evs)-1]; last.From != "Updating" || last.To != "Ready" || last.Actor != "crm" {
		t.Errorf("upgrade with the ack lost ended %+v, want Updating → Ready by the crm", last)
	}
}

func TestMobiledgeXCRMRestartResolvesTransitions(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		cl, ci, app := h.edge()
		creating := h.create("cluster_insts", client.CreateRequest{Name: "new", ParentID: cl.ID})
		h.do(http.MethodPatch, objPath("app_insts", app.ID), client.PatchRequest{Spec: map[string]any{"configs": "v2"}})
		r := h.do(http.MethodPost, "/v1/sim/system/cloudlets/"+cl.ID+"/crm_restart", nil)
		wantStatus(t, r, "crm_restart", http.StatusAccepted)
		// The CRM re-sent what it holds: the create it was running never happened, the update
		// did not either (its previous state is committed again).
		wantAPIError(t, h.do(http.MethodGet, objPath("cluster_insts", creating.ID), nil), http.StatusNotFound, client.CodeNotFound)
		if o := h.get("app_insts", app.ID); o.State != "Ready" || o.Operation != nil || o.Spec["configs"] == "v2" {
			t.Errorf("AppInst after the CRM restart: %s %+v spec %v, want Ready with the old spec", o.State, o.Operation, o.Spec)
		}
		if o := h.get("cluster_insts", ci.ID); o.State != "Ready" {
			t.Errorf("idle ClusterInst after the CRM restart: %s", o.State)
		}
		evs := h.events("app_insts", app.ID)
		if last := evs[len(evs)-1]; last.Actor != "crm" || !strings.Contains(last.Message, "crm_restart") {
			t.Errorf("AppInst's resolution event = %+v", last)
		}
		h.mustSettle("cloudlets", cl.ID, "Ready")
	})
}

// ---- A user-defined pair of kinds, on both stores --------------------------------------------

func hangarRegistry(t testing.TB) *lifecycle.Registry {
	t.Helper()
	reg := lifecycle.Builtin()
	kinds, err := lifecycle.LoadFile(filepath.Join("testdata", "hangar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(kinds...); err != nil {
		t.Fatal(err)
	}
	return reg
}

func bays(counts ...int) map[string]any {
	items := make([]any, len(counts))
	for i, n := range counts {
		items[i] = map[string]any{"name": string(rune('a' + i)), "drones": n}
	}
	return map[string]any{"bays": items}
}

func TestUserDefinedRelations(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		{
			opt.reg = hangarRegistry(t)
			h := newTestServer(t, opt)
			hg := h.create("hangars", client.CreateRequest{Name: "h", Spec: bays(2, 1)})
			if got := statesOf(h.children("drones", hg.ID)); !slices.Equal(got, repeat("LAUNCHING", 3)) {
				t.Fatalf("drones at create: %v", got)
			}
			h.mustSettle("hangars", hg.ID, "OPEN")

			// Closing docks the drones, one per bay at a time, and waits for them.
			h.act("hangars", hg.ID, "close", nil)
			if got := statesOf(h.children("drones", hg.ID)); !slices.Equal(got, []string{"DOCKING", "FLYING", "DOCKING"}) {
				t.Fatalf("drones at close: %v, want bay a's second queued", got)
			}
			h.mustSettle("hangars", hg.ID, "CLOSED")
			if got := statesOf(h.children("drones", hg.ID)); !slices.Equal(got, repeat("DOCKED", 3)) {
				t.Fatalf("drones of a closed hangar: %v", got)
			}
			// The guard: a drone takes off only from an open hangar.
			d := h.children("drones", hg.ID)[0]
			r := h.do(http.MethodPost, objPath("drones", d.ID)+"/actions/launch", nil)
			if e := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition); !strings.Contains(e.Message, hg.ID) {
				t.Errorf("launch from a closed hangar: %q", e.Message)
			}
			// Reopening launches the docked drones (a landing propagates).
			h.act("hangars", hg.ID, "open", nil)
			h.mustSettle("hangars", hg.ID, "OPEN")
			for _, d := range h.children("drones", hg.ID) {
				h.mustSettle("drones", d.ID, "FLYING")
			}
			// Delete policy refuse: not while drones are there. Drones have no deletion: the
			// refusal says what removes them rather than to delete them.
			e := wantAPIError(t, h.do(http.MethodDelete, objPath("hangars", hg.ID), nil), http.StatusUnprocessableEntity, client.CodeInvalidTransition)
			if want := "they must be gone first (drone objects have no deletion and go only when retire lands them in RETIRED)"; !strings.Contains(e.Message, want) || strings.Contains(e.Message, "delete them") {
				t.Errorf("DELETE of a hangar with drones: %q, want it to say %q", e.Message, want)
			}
			// Scaling every bay to zero retires the drones; then the hangar can go.
			h.do(http.MethodPatch, objPath("hangars", hg.ID), client.PatchRequest{Spec: bays(0, 0)})
			h.mustSettle("hangars", hg.ID, "OPEN")
			if got := h.children("drones", hg.ID); len(got) != 0 {
				t.Fatalf("drones after scaling to zero: %v", statesOf(got))
			}
			wantStatus(t, h.do(http.MethodDelete, objPath("hangars", hg.ID), nil), "DELETE hangar", http.StatusAccepted)
			if _, exists := h.settle("hangars", hg.ID); exists {
				t.Error("hangar still exists")
			}
		}
	})
}

// ---- Atomicity and recovery -----------------------------------------------------------------

// failingStore fails every Commit of more than one write, as a crash between a parent's change
// and its children's would, if they were two transactions.
type failingStore struct {
	store.Store
}

func (s failingStore) Commit(ctx context.Context, b store.Batch) error {
	if len(b.Writes) > 1 {
		return context.DeadlineExceeded
	}
	return s.Store.Commit(ctx, b)
}

func TestRelatedChangesCommitTogether(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			var st store.Store = memstore.New()
			if name == "sqlite" {
				st, _ = openTestSQLite(t)
			}
			h := newTestServer(t, harnessOptions{store: st})
			mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(subgroup("web", 2, "aws", "us-east-1"))})
			h.mustSettle("mcis", mci.ID, "Running")
			before := h.get("mcis", mci.ID)

			// The step that suspends the MCI and its VMs fails as a whole: nothing moved.
			broken := newTestServer(t, harnessOptions{store: failingStore{st}, clock: h.manual})
			r := broken.do(http.MethodPost, objPath("mcis", mci.ID)+"/actions/suspend", nil)
			if r.Status < 500 {
				t.Fatalf("suspend with a failing store = %s", r)
			}
			if o := h.get("mcis", mci.ID); o.State != "Running" || o.Version != before.Version {
				t.Errorf("MCI after a failed commit: %s v%d, want Running v%d", o.State, o.Version, before.Version)
			}
			if got := statesOf(h.children("vms", mci.ID)); !slices.Equal(got, repeat("Running", 2)) {
				t.Errorf("VMs after a failed commit: %v", got)
			}
			// A create fails whole too: no MCI without its VMs.
			r = broken.do(http.MethodPost, "/v1/mcis", client.CreateRequest{Name: "half", Spec: mciSpec(subgroup("web", 2, "aws", "us-east-1"))})
			if r.Status < 500 {
				t.Fatalf("create with a failing store = %s", r)
			}
			if got := h.do(http.MethodGet, "/v1/mcis", nil); strings.Contains(string(got.Body), `"half"`) {
				t.Errorf("a half-made MCI is stored: %s", got)
			}
		})
	}
}

// A restart in the middle of a propagation finishes it: the MCI action's wait and its VMs'
// operations are in the store.
func TestRestartFinishesPropagation(t *testing.T) {
	st, path := openTestSQLite(t)
	clock := engine.NewManualClock(harnessT0)
	h := newTestServer(t, harnessOptions{store: st, clock: clock})
	mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(subgroup("web", 3, "aws", "us-east-1"))})
	h.mustSettle("mcis", mci.ID, "Running")
	h.act("mcis", mci.ID, "suspend", nil)
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: leaseSpec(clock.Now().Add(time.Minute), clock.Now().Add(time.Hour), hostReservation)})
	h.mustSettle("leases", lease.ID, "PENDING")
	h.advance(clock.Now().Add(time.Minute).Sub(clock.Now())) // STARTING, its start_lease event following it
	if o := h.get("leases", lease.ID); o.State != "STARTING" {
		t.Fatalf("lease before the restart: %s", o.State)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	reopened, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reopened.Close() })
	h2 := newTestServer(t, harnessOptions{store: reopened, clock: clock})
	o := h2.mustSettle("mcis", mci.ID, "Suspended")
	if text, _, _ := mciStatus(t, o); text != "Suspended:3 (R:0/3)" {
		t.Errorf("MCI after the restart: %q", text)
	}
	h2.mustSettle("leases", lease.ID, "ACTIVE")
	_, res, evs := h2.leaseFamily(lease.ID)
	if !slices.Equal(res, []string{"active"}) || evs["start_lease"].State != "DONE" {
		t.Errorf("lease family after the restart: %v %s", res, evs["start_lease"].State)
	}
}

// TestMCIDeleteTerminatesThenRemoves: a DELETE terminates the MCI (its VMs with it), then
// removes it and its VMs (Tumblebug deletes a terminated MCI); a terminated one is removed at
// once.
func TestMCIDeleteTerminatesThenRemoves(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(subgroup("web", 2, "aws", "us-east-1"))})
		h.mustSettle("mcis", mci.ID, "Running")
		vms := h.children("vms", mci.ID)
		r := h.do(http.MethodDelete, objPath("mcis", mci.ID), nil)
		wantStatus(t, r, "DELETE mci", http.StatusAccepted)
		if o := decodeAs[client.Object](t, r); o.State != "Terminating" {
			t.Errorf("DELETE of a running MCI answered %s, want Terminating", o.State)
		}
		if _, exists := h.settle("mcis", mci.ID); exists {
			t.Fatal("deleted MCI still exists")
		}
		for _, vm := range vms {
			wantAPIError(t, h.do(http.MethodGet, objPath("vms", vm.ID), nil), http.StatusNotFound, client.CodeNotFound)
		}
		if got := eventStates(h.events("mcis", mci.ID)); got[len(got)-2] != "Terminated" || got[len(got)-1] != "Deleted" {
			t.Errorf("MCI went %v, want Terminated then Deleted", got)
		}
		// A terminated MCI is removed by the DELETE at once.
		m2 := h.create("mcis", client.CreateRequest{Name: "two", Spec: mciSpec(subgroup("web", 1, "aws", "us-east-1"))})
		h.mustSettle("mcis", m2.ID, "Running")
		h.act("mcis", m2.ID, "terminate", nil)
		h.mustSettle("mcis", m2.ID, "Terminated")
		wantStatus(t, h.do(http.MethodDelete, objPath("mcis", m2.ID), nil), "DELETE a terminated MCI", http.StatusOK, http.StatusNoContent)
		wantAPIError(t, h.do(http.MethodGet, objPath("mcis", m2.ID), nil), http.StatusNotFound, client.CodeNotFound)
	})
}
