package simulator

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
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
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore/sqlitetest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// A destroyed OpenvCloud parent detaches its children (delete: detach): a machine in the
// recycle bin outlives its cloudspace, without a parent.
func TestDeletePolicyDetach(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		_, cs := h.openvcloud()
		m := h.runningMachine(cs.ID, "web")
		h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=delete", nil)
		h.mustSettle("machines", m.ID, "DELETED")
		h.do(http.MethodDelete, objPath("cloudspaces", cs.ID)+"?mode=delete", nil)
		h.mustSettle("cloudspaces", cs.ID, "DELETED")
		h.do(http.MethodDelete, objPath("cloudspaces", cs.ID)+"?mode=destroy", nil)
		if _, exists := h.settle("cloudspaces", cs.ID); exists {
			t.Fatal("destroyed cloudspace still exists")
		}
		o := h.get("machines", m.ID)
		if o.ParentID != "" || o.State != "DELETED" {
			t.Errorf("machine of a destroyed cloudspace: parent %q state %s, want detached and DELETED", o.ParentID, o.State)
		}
		evs := h.events("machines", m.ID)
		if last := evs[len(evs)-1]; !strings.Contains(last.Message, "detached") || !strings.Contains(last.Message, cs.ID) {
			t.Errorf("machine's last event = %+v, want its detachment", last)
		}
	})
}

// A spec's invariant that fails is logged and counted in /metrics; the change itself stands
// (invariants observe, they do not refuse).
func TestInvariantViolationsCounted(t *testing.T) {
	reg := lifecycle.Builtin()
	reg.RegisterInvariant("test.no_closed_hangars", func(v lifecycle.View, _ []lifecycle.View) error {
		if v.State == "CLOSED" {
			return errors.New("hangar " + v.ID + " is closed")
		}
		return nil
	})
	kinds, err := lifecycle.LoadFile(filepath.Join("testdata", "hangar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kinds[0].Invariants = []string{"test.no_closed_hangars"}
	if err := reg.Add(kinds...); err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	metrics := httpapi.NewMetrics(httpapi.MetricsSources{Counts: st.Counts})
	var logged bytes.Buffer
	e := engine.New(st, reg, engine.NewManualClock(harnessT0), engine.Options{CheckInvariants: true, OnViolation: metrics.Violation,
		Logger: slog.New(slog.NewJSONHandler(&logged, nil))})
	ctx := context.Background()
	k, _ := reg.Kind("hangar")
	o, err := e.Create(ctx, "", k, client.CreateRequest{Name: "h", Spec: bays(1)}, "")
	if err != nil {
		t.Fatal(err)
	}
	e.Clock().(*engine.ManualClock).Advance(time.Hour)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if len(e.Violations()) != 0 {
		t.Fatalf("violations of an open hangar: %v", e.Violations())
	}
	if _, err := e.Act(ctx, "", k, o.ID, "close", client.ActionRequest{}, ""); err != nil {
		t.Fatal(err)
	}
	e.Clock().(*engine.ManualClock).Advance(time.Hour)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.Violations(); len(got) == 0 || !strings.Contains(got[0].Error(), "test.no_closed_hangars") {
		t.Fatalf("violations = %v, want the closed hangar", got)
	}
	if got := logged.String(); !strings.Contains(got, `"msg":"invariant violated"`) || !strings.Contains(got, `"invariant":"test.no_closed_hangars"`) {
		t.Errorf("the violation was not logged with its invariant: %s", got)
	}
	srv := httpapi.NewServer(e, httpapi.ServerOptions{Metrics: metrics})
	rec := &fakeWriter{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
	srv.ServeHTTP(rec, req)
	if !strings.Contains(rec.body.String(), `lifecyclesim_invariant_violations_total{invariant="test.no_closed_hangars"}`) {
		t.Errorf("/metrics does not count the violation:\n%s", grepLines(rec.body.String(), "invariant"))
	}
	// Without --check-invariants nothing is checked.
	off := engine.New(memstore.New(), reg, engine.NewManualClock(harnessT0), engine.Options{})
	if _, err := off.Create(ctx, "", k, client.CreateRequest{Name: "h", Spec: bays(1)}, ""); err != nil {
		t.Fatal(err)
	}
	if len(off.Violations()) != 0 {
		t.Errorf("an engine without invariant checks recorded %v", off.Violations())
	}
}

// fakeWriter is a minimal http.ResponseWriter.
type fakeWriter struct {
	header http.Header
	body   strings.Builder
	status int
}

func (w *fakeWriter) Header() http.Header         { return w.header }
func (w *fakeWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *fakeWriter) WriteHeader(status int)      { w.status = status }

// A SQLite file written before relations (schema 1) is migrated on open, and a landing whose
// cascade it had recorded but not applied is finished by the engine.
func TestSQLiteMigratesSchema1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	v1 := `
CREATE TABLE objects (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, kind TEXT NOT NULL, parent_id TEXT NOT NULL,
	state TEXT NOT NULL, version INTEGER NOT NULL, due INTEGER, data TEXT NOT NULL);
CREATE INDEX objects_due ON objects (due);
CREATE INDEX objects_tenant_kind ON objects (tenant, kind, id);
CREATE INDEX objects_tenant_parent ON objects (tenant, parent_id, id);
CREATE TABLE events (object_id TEXT NOT NULL, seq INTEGER NOT NULL, tenant TEXT NOT NULL, data TEXT NOT NULL,
	PRIMARY KEY (object_id, seq)) WITHOUT ROWID;
CREATE TABLE idempotency (tenant TEXT NOT NULL, key TEXT NOT NULL, object_id TEXT NOT NULL,
	PRIMARY KEY (tenant, key)) WITHOUT ROWID;
PRAGMA user_version = 1;`
	if _, err := db.Exec(v1); err != nil {
		t.Fatal(err)
	}
	// A machine that landed DELETED with its disk's cascade still pending, as version 1 wrote it.
	machine := &store.Object{ID: "machine-0000000000000001", Kind: "machine", Name: "m", State: "DELETED", Version: 5,
		Spec: map[string]any{}, Status: map[string]any{}, Due: harnessT0, CascadeFrom: "RUNNING", StateSince: harnessT0, CreatedAt: harnessT0, UpdatedAt: harnessT0}
	disk := &store.Object{ID: "disk-0000000000000001", Kind: "disk", Name: "d", State: "ASSIGNED", Version: 3,
		Spec: map[string]any{"machine_id": machine.ID}, Status: map[string]any{}, StateSince: harnessT0, CreatedAt: harnessT0, UpdatedAt: harnessT0}
	for _, o := range []*store.Object{machine, disk} {
		data, _ := json.Marshal(o)
		if _, err := db.Exec("INSERT INTO objects VALUES (?, '', ?, '', ?, ?, ?, ?)", o.ID, o.Kind, o.State, o.Version, o.Due.UnixNano(), string(data)); err != nil {
			t.Fatal(err)
		}
		ev, _ := json.Marshal(store.Event{ObjectID: o.ID, Seq: 1, Time: harnessT0, Actor: "user", To: o.State})
		if _, err := db.Exec("INSERT INTO events VALUES (?, 1, '', ?)", o.ID, string(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("INSERT INTO idempotency VALUES ('', 'k-old', ?)", machine.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := sqlitetest.Open(t, path)
	// Its idempotency key counts KeyRetention from the upgrade: a key recorded soon after does
	// not expire it.
	if err := s.Commit(t.Context(), store.Batch{Key: "k-new", KeyAt: time.Now().Add(time.Hour), Writes: []store.Write{{Object: storetest.NewObject("m-new", "", "machine")}}}); err != nil {
		t.Fatal(err)
	}
	storetest.Checkpointed(t, s)
	if db, err = sql.Open("sqlite", path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if id, _, ok, err := s.Idempotent(t.Context(), "", "k-old"); err != nil || !ok || id != machine.ID {
		t.Errorf("the migrated file's key = %q, %v, %v; want %s, kept", id, ok, err, machine.ID)
	}
	var version int
	var indexes int
	if err := db.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&version); err != nil || version != 10 {
		t.Errorf("user_version after open = %d (%v), want 10 (the store's schema)", version, err)
	}
	// Version 4 serves lookups from memory: the file keeps no secondary index on objects.
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'objects' AND sql IS NOT NULL").Scan(&indexes); err != nil || indexes != 0 {
		t.Errorf("secondary indexes on objects after migration = %d (%v), want 0", indexes, err)
	}
	// Version 5 finds expired idempotency keys by their time.
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'idempotency_created'").Scan(&indexes); err != nil || indexes != 1 {
		t.Errorf("index idempotency_created after migration: %d (%v), want 1", indexes, err)
	}
	h := newTestServer(t, harnessOptions{store: s})
	h.advance(0)
	if o := h.get("disks", disk.ID); o.State != "TOBEDELETED" {
		t.Errorf("disk of the migrated machine: %s, want TOBEDELETED (the pending cascade finished)", o.State)
	}
	if o := h.get("machines", machine.ID); o.State != "DELETED" || o.Version != 6 {
		t.Errorf("migrated machine: %s v%d, want DELETED v6", o.State, o.Version)
	}
}

// Propagation to the parent and a guard on a linked object, in a user-defined pair.
func TestParentPropagationAndLinkGuard(t *testing.T) {
	kinds, err := lifecycle.Parse("docks.yaml", []byte(`kinds:
  - name: dock
    collection: docks
    states: {static: [OPEN, SHUT]}
    create: {to: OPEN}
    actions:
      - {name: shut, from: [OPEN], to: SHUT}
      - {name: open, from: [SHUT], to: OPEN}
      - {name: count, actor: system, from: [OPEN, SHUT], returns: true}
  - name: boat
    collection: boats
    parent: {kind: dock}
    states: {static: [AWAY, MOORED], transition: [MOORING, LEAVING]}
    failure: {rollback: true}
    create: {to: AWAY}
    actions:
      - {name: moor, from: [AWAY], via: [MOORING], to: MOORED}
      - {name: leave, from: [MOORED], via: [LEAVING], to: AWAY}
    links:
      - {field: berth_id, kind: dock, set_by: [moor], states: [OPEN], cleared_by: [leave]}
    guards:
      - {link: berth_id, states: [OPEN], actions: [leave]}
    propagate:
      - {land: MOORED, to: {parent: true}, run: count}
`))
	if err != nil {
		t.Fatal(err)
	}
	reg := lifecycle.Builtin()
	if err := reg.Add(kinds...); err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		opt.reg = reg
		h := newTestServer(t, opt)
		home := h.create("docks", client.CreateRequest{Name: "home"})
		berth := h.create("docks", client.CreateRequest{Name: "berth"})
		boat := h.create("boats", client.CreateRequest{Name: "b", ParentID: home.ID})
		// The link names an open dock.
		r := h.do(http.MethodPost, objPath("boats", boat.ID)+"/actions/moor", client.ActionRequest{})
		wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid) // no berth_id
		h.act("boats", boat.ID, "moor", map[string]any{"berth_id": berth.ID})
		h.mustSettle("boats", boat.ID, "MOORED")
		// The landing propagated to the parent.
		evs := h.events("docks", home.ID)
		if last := evs[len(evs)-1]; last.Action != "count" || !strings.Contains(last.Message, boat.ID) {
			t.Errorf("home dock's last event = %+v, want the count propagated from the boat", last)
		}
		// The guard looks at the linked dock.
		h.act("docks", berth.ID, "shut", nil)
		r = h.do(http.MethodPost, objPath("boats", boat.ID)+"/actions/leave", nil)
		d := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
		if !strings.Contains(d.Message, "linked dock "+berth.ID) || !strings.Contains(d.Message, "SHUT") {
			t.Errorf("leave from a shut berth: %q", d.Message)
		}
		h.act("docks", berth.ID, "open", nil)
		o := h.act("boats", boat.ID, "leave", nil)
		if _, ok := o.Spec["berth_id"]; ok {
			t.Errorf("leave kept the link: %v", o.Spec)
		}
		h.mustSettle("boats", boat.ID, "AWAY")
	})
}

// A link the create sets (set_by: [create]) with `in:` states: a create naming an object in
// another state is refused (422, naming it, its state and the states it must be in) and makes
// nothing, as an action that sets a link is; so is an update whose action sets it.
func TestCreateLinkStates(t *testing.T) {
	kinds, err := lifecycle.Parse("pumps.yaml", []byte(`kinds:
  - name: well
    collection: wells
    states: {static: [FULL, DRY]}
    create: {to: FULL}
    actions:
      - {name: dry, from: [FULL], to: DRY}
      - {name: fill, from: [DRY], to: FULL}
  - name: pump
    collection: pumps
    states: {static: [ON], transition: [RETUNING]}
    failure: {rollback: true}
    create: {to: ON}
    update: retune
    actions:
      - {name: retune, from: [ON], returns: true, via: [RETUNING]}
    fields:
      - {name: well_id, type: string}
    links:
      - {field: well_id, kind: well, set_by: [create, retune], in: [FULL]}
`))
	if err != nil {
		t.Fatal(err)
	}
	reg := lifecycle.Builtin()
	if err := reg.Add(kinds...); err != nil {
		t.Fatal(err)
	}
	h := newTestServer(t, harnessOptions{reg: reg})
	full := h.create("wells", client.CreateRequest{Name: "full"})
	dry := h.create("wells", client.CreateRequest{Name: "dry"})
	h.act("wells", dry.ID, "dry", nil)
	h.mustSettle("wells", dry.ID, "DRY")

	r := h.do(http.MethodPost, "/v1/pumps", client.CreateRequest{Name: "p", Spec: map[string]any{"well_id": dry.ID}})
	d := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	for _, want := range []string{"pump create", "well " + dry.ID + " is DRY", "it must be FULL"} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("create linked to a dry well: %q, want it to say %q", d.Message, want)
		}
	}
	r = h.do(http.MethodGet, "/v1/pumps", nil)
	if list := decodeAs[client.ObjectList](t, r); len(list.Items) != 0 {
		t.Errorf("the refused create made %d pumps", len(list.Items))
	}
	// Without the link, or linked to a full well, the create goes through.
	h.create("pumps", client.CreateRequest{Name: "bare"})
	p := h.create("pumps", client.CreateRequest{Name: "p", Spec: map[string]any{"well_id": full.ID}})
	h.mustSettle("pumps", p.ID, "ON")
	// The update sets the link too: a patch to the dry well is refused, the link unchanged.
	r = h.do(http.MethodPatch, objPath("pumps", p.ID), client.PatchRequest{Spec: map[string]any{"well_id": dry.ID}})
	d = wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	if !strings.Contains(d.Message, "pump retune") || !strings.Contains(d.Message, "it must be FULL") {
		t.Errorf("patch linking a dry well: %q", d.Message)
	}
	if o := h.get("pumps", p.ID); o.Spec["well_id"] != full.ID {
		t.Errorf("the refused patch changed the link to %v", o.Spec["well_id"])
	}
}

// An object says which spec values the simulator filled in from defaults (defaulted), so a
// client reading it (an import) can tell them from what its creator wrote; a PATCH that
// writes a default out records it without changing a value or running the update.
func TestDefaultedPaths(t *testing.T) {
	kinds, err := lifecycle.Parse("kilns.yaml", []byte(`kinds:
  - name: kiln
    collection: kilns
    states: {static: [COLD], transition: [TUNING]}
    failure: {rollback: true}
    create: {to: COLD}
    update: tune
    actions:
      - {name: tune, from: [COLD], via: [TUNING], returns: true}
    fields:
      - {name: heat, type: integer, default: 3}
      - {name: glazed, type: bool, default: false}
      - name: racks
        type: list
        items:
          type: object
          fields:
            - {name: name, type: string, required: true}
            - {name: slots, type: integer, default: 4}
`))
	if err != nil {
		t.Fatal(err)
	}
	reg := lifecycle.Builtin()
	if err := reg.Add(kinds...); err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		opt.reg = reg
		h := newTestServer(t, opt)
		o := h.create("kilns", client.CreateRequest{Name: "k", Spec: map[string]any{"glazed": false,
			"racks": []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "slots": 4}}}})
		if want := []string{"heat", "racks[0].slots"}; !slices.Equal(o.Defaulted, want) {
			t.Fatalf("defaulted after create = %#v, want %v", o.Defaulted, want)
		}
		o = h.mustSettle("kilns", o.ID, "COLD")
		// Written out, the same values: recorded, no update runs.
		r := h.do(http.MethodPatch, objPath("kilns", o.ID), client.PatchRequest{Spec: map[string]any{"heat": 3,
			"racks": []any{map[string]any{"name": "a", "slots": 4}, map[string]any{"name": "b"}}}})
		wantStatus(t, r, "PATCH writing defaults out", http.StatusOK, http.StatusAccepted)
		p := decodeAs[client.Object](t, r)
		if want := []string{"racks[1].slots"}; !slices.Equal(p.Defaulted, want) || p.Operation != nil || p.Version != o.Version+1 {
			t.Errorf("after writing the defaults out: defaulted %#v, operation %v, version %d; want %v, none, %d", p.Defaulted, p.Operation, p.Version, want, o.Version+1)
		}
		// The same again changes nothing.
		r = h.do(http.MethodPatch, objPath("kilns", o.ID), client.PatchRequest{Spec: map[string]any{"heat": 3}})
		if again := decodeAs[client.Object](t, r); again.Version != p.Version {
			t.Errorf("a repeated PATCH: version %d, want %d", again.Version, p.Version)
		}
		// Removed (null), a field holds its default again, filled in.
		r = h.do(http.MethodPatch, objPath("kilns", o.ID), client.PatchRequest{Spec: map[string]any{"heat": nil, "glazed": true}})
		wantStatus(t, r, "PATCH", http.StatusOK, http.StatusAccepted)
		p = h.mustSettle("kilns", o.ID, "COLD")
		if want := []string{"heat", "racks[1].slots"}; !slices.Equal(p.Defaulted, want) || p.Spec["heat"] != 3.0 {
			t.Errorf("after heat: null: defaulted %#v, heat %v; want %v, 3", p.Defaulted, p.Spec["heat"], want)
		}
	})
}

// A link with `delete: refuse` refuses to remove the object it names (422, naming the objects
// whose link names it) until they are gone, in every kind that declares one; a link without it
// is cleared when its object goes, as before.
func TestLinkDeleteRefuse(t *testing.T) {
	wells, err := os.ReadFile("../lifecycle/testdata/specs/wells.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// And a hose, whose link to a well does not refuse the well's deletion.
	kinds, err := lifecycle.Parse("wells.yaml", append(wells, `  - name: hose
    collection: hoses
    states: {static: [ON]}
    create: {to: ON}
    fields:
      - {name: well_id, type: string}
    links:
      - {field: well_id, kind: well, set_by: [create]}
`...))
	if err != nil {
		t.Fatal(err)
	}
	reg := lifecycle.Builtin()
	if err := reg.Add(kinds...); err != nil {
		t.Fatal(err)
	}
	h := newTestServer(t, harnessOptions{reg: reg})
	pumped := h.create("wells", client.CreateRequest{Name: "pumped"})
	p := h.create("pumps", client.CreateRequest{Name: "p", Spec: map[string]any{"well_id": pumped.ID}})

	r := h.do(http.MethodDelete, objPath("wells", pumped.ID), nil)
	d := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	for _, want := range []string{"well " + pumped.ID + " is in use by 1 objects", "delete them first", "pump " + p.ID + ` "p" (ON)`} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("DELETE of a well a pump names: %q, want it to say %q", d.Message, want)
		}
	}
	td, _ := (&client.Error{Code: client.CodeInvalidTransition, Details: d.Details}).Transition()
	if want := []client.Dependent{{ID: p.ID, Kind: "pump", Name: "p", State: "ON", Via: "well_id"}}; !slices.Equal(td.Dependents, want) {
		t.Errorf("DELETE of a well a pump names: dependents %+v, want %+v", td.Dependents, want)
	}
	if o := h.get("wells", pumped.ID); o.State != "FULL" {
		t.Errorf("the refused delete left the well %s", o.State)
	}
	// Once the pump is gone, the well goes.
	for _, path := range []string{objPath("pumps", p.ID), objPath("wells", pumped.ID)} {
		if r := h.do(http.MethodDelete, path, nil); r.Status >= 300 {
			t.Fatalf("DELETE %s = %d %s", path, r.Status, r)
		}
		if r := h.do(http.MethodGet, path, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET %s after its delete = %d, want 404", path, r.Status)
		}
	}

	// A link without `delete: refuse` does not hold its object: the well goes, the link is cleared.
	hosed := h.create("wells", client.CreateRequest{Name: "hosed"})
	hose := h.create("hoses", client.CreateRequest{Name: "h", Spec: map[string]any{"well_id": hosed.ID}})
	if r := h.do(http.MethodDelete, objPath("wells", hosed.ID), nil); r.Status >= 300 {
		t.Fatalf("DELETE of a well a hose names = %d %s, want it deleted", r.Status, r)
	}
	if o := h.get("hoses", hose.ID); o.Spec["well_id"] != nil {
		t.Errorf("the hose still names the deleted well: %v", o.Spec["well_id"])
	}
}
