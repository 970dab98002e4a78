package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// stateStores are the stores an export and an import run on.
var stateStores = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"memory", func(*testing.T) store.Store { return memstore.New() }},
	{"sqlite", func(t *testing.T) store.Store { s, _ := openTestSQLite(t); return s }},
	{"postgres", func(t *testing.T) store.Store {
		s, err := pgstore.Open(context.Background(), pgtest.Database(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
}

// stateTokens are the tokens of the simulators of these tests: tenants alpha and beta, and the
// admin's.
var stateTokens = map[string]string{"ta": "alpha", "tb": "beta"}

const stateAdmin = "adm"

// fillState gives tenant alpha objects of four families: an OpenvCloud account with a
// cloudspace, a machine whose stop failed (a fault rule fired) and a disk, a machine destroyed
// (its history outlives it) and the disk it detached, a machine still deploying; a CB-Tumblebug
// MCI with its VM; a Blazar lease with its reservations and events; a MobiledgeX cloudlet;
// and an unfired fault rule. It returns the machine that is still deploying, and the lease.
func fillState(h *harness) (deploying, lease client.Object) {
	h.t.Helper()
	account, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.attachedDisk(account.ID, m.ID)
	wantStatus(h.t, h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "machine", Action: "stop", Mode: wire.FaultFail, Count: 1}), "add fault", http.StatusCreated)
	h.act("machines", m.ID, "stop", nil)
	h.mustSettle("machines", m.ID, "RUNNING") // the stop failed and rolled back
	gone := h.runningMachine(cs.ID, "gone")
	disk := h.attachedDisk(account.ID, gone.ID)
	wantStatus(h.t, h.do(http.MethodDelete, objPath("machines", gone.ID)+"?mode=destroy", nil), "destroy", http.StatusAccepted)
	if _, ok := h.settle("machines", gone.ID); ok {
		h.t.Fatalf("machine %s outlived its destroy", gone.ID)
	}
	h.mustSettle("disks", disk.ID, "CREATED") // detached by the destroy
	mci := h.create("mcis", client.CreateRequest{Name: "infra"})
	h.mustSettle("mcis", mci.ID, "Running")
	lease = h.create("leases", client.CreateRequest{Name: "l"})
	h.mustSettle("leases", lease.ID, "PENDING")
	cl := h.create("cloudlets", client.CreateRequest{Name: "edge"})
	h.mustSettle("cloudlets", cl.ID, "Ready")
	wantStatus(h.t, h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "cloudlet", Mode: wire.FaultHang, Count: 2}), "add fault", http.StatusCreated)
	deploying = h.create("machines", client.CreateRequest{Name: "late", ParentID: cs.ID, Spec: map[string]any{"memory": 1024}})
	if deploying.Static || deploying.Operation == nil || deploying.Operation.DueAt.IsZero() {
		h.t.Fatalf("new machine = %+v, want it in its first phase with a due time", deploying)
	}
	return deploying, lease
}

// exportAs exports the tenant of the harness's token.
func exportAs(h *harness) []byte {
	h.t.Helper()
	r := h.do(http.MethodGet, "/v1/sim/export", nil)
	wantStatus(h.t, r, "export", http.StatusOK)
	return r.Body
}

// TestStateRoundTrip exports a tenant, imports the document into another tenant of another
// simulator (on a new store of each kind) whose clock is behind, and exports that: the same
// document but for the tenant's name. The machine that was deploying then lands at the due
// time it had.
func TestStateRoundTrip(t *testing.T) {
	for _, sc := range stateStores {
		t.Run(sc.name, func(t *testing.T) {
			src := newTestServer(t, harnessOptions{store: sc.open(t), tokens: stateTokens, adminToken: stateAdmin}).as("ta")
			deploying, lease := fillState(src)
			doc := exportAs(src)

			var st engine.State
			if err := json.Unmarshal(doc, &st); err != nil {
				t.Fatal(err)
			}
			removed, failed := 0, 0
			for _, e := range st.Events {
				if e.Error != "" {
					failed++
				}
				if !slices.ContainsFunc(st.Objects, func(o *store.Object) bool { return o.ID == e.ObjectID }) {
					removed++
				}
			}
			if st.Format != engine.StateFormat || st.Tenant != "alpha" || len(st.Objects) < 10 || removed == 0 || failed == 0 ||
				len(st.FaultRules) != 2 || st.FaultRules[0].Fired != 1 || !st.Clock.Equal(src.manual.Now()) {
				t.Fatalf("export = format %d, tenant %q, %d objects, %d events of removed objects, %d failed, rules %+v, clock %v; want all of them",
					st.Format, st.Tenant, len(st.Objects), removed, failed, st.FaultRules, st.Clock)
			}

			dst := newTestServer(t, harnessOptions{store: sc.open(t), tokens: stateTokens, adminToken: stateAdmin}).as("tb")
			// The new simulator's clock is behind the document's: a tenant may not move it.
			d := wantAPIError(t, dst.do(http.MethodPost, "/v1/sim/import", string(doc)), http.StatusForbidden, client.CodeForbidden)
			if !strings.Contains(d.Message, "admin token") || !strings.Contains(d.Message, "lifecyclesim clock advance") {
				t.Errorf("import behind the document's clock: %q, want it to name the admin token and the clock advance", d.Message)
			}
			r := dst.as(stateAdmin).do(http.MethodPost, "/v1/sim/import?tenant=beta", string(doc))
			wantStatus(t, r, "import with the admin token", http.StatusOK)
			if res := decodeAs[client.ImportResult](t, r); res.Tenant != "beta" || res.Objects != len(st.Objects) || !res.Clock.Equal(st.Clock) {
				t.Errorf("import = %+v, want %d objects into beta at %v", res, len(st.Objects), st.Clock)
			}

			again := exportAs(dst)
			if want := bytes.ReplaceAll(doc, []byte(`"tenant":"alpha"`), []byte(`"tenant":"beta"`)); !bytes.Equal(again, want) {
				t.Errorf("export after import differs but for the tenant:\n got %s\nwant %s", again, want)
			}
			wantAPIError(t, dst.do(http.MethodPost, "/v1/sim/import", string(doc)), http.StatusPreconditionFailed, client.CodeConflict)
			// A rule added after the import gets an ID of its own.
			r = dst.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "machine", Mode: wire.FaultHang})
			wantStatus(t, r, "add a fault after the import", http.StatusCreated)
			if id := decodeAs[client.FaultRule](t, r).ID; slices.ContainsFunc(st.FaultRules, func(f wire.FaultRule) bool { return f.ID == id }) {
				t.Errorf("a rule added after the import got the imported ID %s", id)
			}

			// The Blazar dialect's UUID is derived from the ID, so the lease answers under it.
			uuid, ok := dialect.UUID(lease.ID)
			if !ok {
				t.Fatalf("lease %s has no UUID", lease.ID)
			}
			if r := dst.do(http.MethodGet, httpapi.BlazarPrefix+"/leases/"+uuid, nil, "X-Auth-Token", "tb"); r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(uuid)) {
				t.Errorf("GET the imported lease through Blazar = %s, want it under %s", r, uuid)
			}

			// The deploying machine lands in both at its due time, and the histories agree.
			due := deploying.Operation.DueAt
			src.mustSettle("machines", deploying.ID, "RUNNING")
			dst.mustSettle("machines", deploying.ID, "RUNNING")
			srcEvents, dstEvents := src.events("machines", deploying.ID), dst.events("machines", deploying.ID)
			if len(dstEvents) < 2 || !dstEvents[1].Time.Equal(due) || !slices.EqualFunc(srcEvents, dstEvents, func(a, b client.Event) bool {
				return a.Seq == b.Seq && a.To == b.To && a.Time.Equal(b.Time)
			}) {
				t.Errorf("history of the imported deploying machine = %+v, want %+v, landing at %v", dstEvents, srcEvents, due)
			}
		})
	}
}

// TestStateImportRefused checks each refusal names what is wrong and what to do, and that a
// refused import leaves the tenant empty.
func TestStateImportRefused(t *testing.T) {
	src := newTestServer(t, harnessOptions{tokens: stateTokens, adminToken: stateAdmin}).as("ta")
	_, cs := src.openvcloud()
	m := src.runningMachine(cs.ID, "web")
	doc := exportAs(src)
	edit := func(change func(st map[string]any)) string {
		var st map[string]any
		if err := json.Unmarshal(doc, &st); err != nil {
			t.Fatal(err)
		}
		change(st)
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	object := func(st map[string]any, id string) map[string]any {
		for _, o := range st["objects"].([]any) {
			if o.(map[string]any)["id"] == id {
				return o.(map[string]any)
			}
		}
		t.Fatalf("the export has no object %s", id)
		return nil
	}
	tests := []struct {
		name   string
		as     string // token
		path   string
		body   string
		status int
		code   client.Code
		says   []string
	}{
		{"newer format", stateAdmin, "?tenant=beta", edit(func(st map[string]any) { st["format"] = engine.StateFormat + 1 }),
			http.StatusBadRequest, client.CodeInvalid, []string{"format is 2", "newer", "upgrade"}},
		{"no format", stateAdmin, "?tenant=beta", edit(func(st map[string]any) { delete(st, "format") }),
			http.StatusBadRequest, client.CodeInvalid, []string{"no format", "lifecyclesim export"}},
		{"unknown kind", stateAdmin, "?tenant=beta", edit(func(st map[string]any) { object(st, m.ID)["kind"] = "spaceship" }),
			http.StatusBadRequest, client.CodeInvalid, []string{m.ID, `"spaceship"`, "does not serve", "--kinds"}},
		{"unknown state", stateAdmin, "?tenant=beta", edit(func(st map[string]any) { object(st, m.ID)["state"] = "FLYING" }),
			http.StatusBadRequest, client.CodeInvalid, []string{m.ID, `"FLYING"`}},
		{"due after what the stores keep", stateAdmin, "?tenant=beta", edit(func(st map[string]any) { object(st, m.ID)["due"] = "2300-01-01T00:00:00Z" }),
			http.StatusBadRequest, client.CodeInvalid, []string{m.ID, "latest time the stores keep"}},
		{"history with a gap", stateAdmin, "?tenant=beta", edit(func(st map[string]any) {
			st["events"] = slices.DeleteFunc(st["events"].([]any), func(e any) bool { return e.(map[string]any)["object_id"] == cs.ID && e.(map[string]any)["seq"] == 1.0 })
		}),
			http.StatusBadRequest, client.CodeInvalid, []string{"numbered from 1"}},
		{"ID held", stateAdmin, "?tenant=beta", string(doc),
			http.StatusPreconditionFailed, client.CodeConflict, []string{"is held by this simulator", "new one"}},
		{"tenant not empty", "ta", "", string(doc),
			http.StatusPreconditionFailed, client.CodeConflict, []string{"holds", "objects", "lifecyclesim reset"}},
		{"another tenant with a tenant's token", "ta", "?tenant=beta", string(doc),
			http.StatusForbidden, client.CodeForbidden, []string{"admin token"}},
		{"admin without a tenant", stateAdmin, "", string(doc),
			http.StatusBadRequest, client.CodeInvalid, []string{"?tenant="}},
		{"not JSON", stateAdmin, "?tenant=beta", "{", http.StatusBadRequest, client.CodeInvalid, []string{"invalid JSON"}},
		{"empty", stateAdmin, "?tenant=beta", "", http.StatusBadRequest, client.CodeInvalid, []string{"lifecyclesim export"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := wantAPIError(t, src.as(tt.as).do(http.MethodPost, "/v1/sim/import"+tt.path, tt.body), tt.status, tt.code)
			for _, s := range tt.says {
				if !strings.Contains(d.Message, s) {
					t.Errorf("import refused for %s: %q, want it to say %q", tt.name, d.Message, s)
				}
			}
		})
	}
	if r := src.as("tb").do(http.MethodGet, "/v1/sim/export", nil); !bytes.Contains(r.Body, []byte(`"objects":[]`)) {
		t.Errorf("tenant beta after refused imports exports %s, want no objects", r)
	}
	// An export asks for a known tenant.
	wantAPIError(t, src.as(stateAdmin).do(http.MethodGet, "/v1/sim/export?tenant=nobody", nil), http.StatusBadRequest, client.CodeInvalid)
	if r := src.as(stateAdmin).do(http.MethodGet, "/v1/sim/export?tenant=alpha", nil); !bytes.Equal(r.Body, doc) {
		t.Errorf("the admin's export of alpha = %s, want the tenant's own %s", r, doc)
	}
}

// TestStateClockAdvanced imports a document taken ahead of an open simulator's clock: the
// clock moves to it (an open simulator's caller may move it), never back.
func TestStateClockAdvanced(t *testing.T) {
	src := newTestServer(t, harnessOptions{})
	src.openvcloud()
	src.advance(3 * time.Hour)
	doc := exportAs(src)
	dst := newTestServer(t, harnessOptions{})
	before := dst.manual.Now()
	wantStatus(t, dst.do(http.MethodPost, "/v1/sim/import", string(doc)), "import", http.StatusOK)
	if got, want := dst.manual.Now(), src.manual.Now(); !got.Equal(want) || !got.After(before) {
		t.Errorf("clock after import = %v, want the document's %v", got, want)
	}
	if again := exportAs(dst); !bytes.Equal(again, doc) {
		t.Errorf("export after import = %s, want %s", again, doc)
	}
}

// TestStateImportAdviceRuns: the refusal of a tenant's import behind the document's clock
// advises `lifecyclesim clock advance D`; advancing the clock by that D (as that command
// does, POST /v1/sim/clock) lets the same tenant's import go through.
func TestStateImportAdviceRuns(t *testing.T) {
	src := newTestServer(t, harnessOptions{tokens: stateTokens, adminToken: stateAdmin}).as("ta")
	src.openvcloud()
	src.advance(90 * time.Minute)
	doc := exportAs(src)
	dst := newTestServer(t, harnessOptions{tokens: stateTokens, adminToken: stateAdmin}).as("tb")
	d := wantAPIError(t, dst.do(http.MethodPost, "/v1/sim/import", string(doc)), http.StatusForbidden, client.CodeForbidden)
	m := regexp.MustCompile(`lifecyclesim clock advance (\S+)\)`).FindStringSubmatch(d.Message)
	if m == nil {
		t.Fatalf("refusal %q names no clock advance", d.Message)
	}
	body := fmt.Sprintf(`{"advance": %q}`, m[1])
	wantStatus(t, dst.as(stateAdmin).do(http.MethodPost, "/v1/sim/clock", body), "clock advance "+m[1], http.StatusOK)
	wantStatus(t, dst.do(http.MethodPost, "/v1/sim/import", string(doc)), "import after the advised clock advance", http.StatusOK)
}
