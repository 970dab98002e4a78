package simulator

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
)

// applianceKinds are two user kinds whose update (reconfigure) can fail: one into an error
// state a repair (mend) leaves, one rolling back.
const applianceKinds = `
kinds:
  - name: appliance
    family: test
    collection: appliances
    states: {static: [READY, BROKEN], transition: [RECONFIGURING], error: [BROKEN]}
    create: {to: READY}
    update: reconfigure
    fields:
      - {name: firmware, type: string, default: "1.0", updatable_in: [READY]}
    actions:
      - {name: reconfigure, from: [READY], via: [RECONFIGURING], to: READY, failure: {to: BROKEN}}
      - {name: mend, from: [BROKEN], to: READY}
  - name: gadget
    family: test
    collection: gadgets
    states: {static: [READY], transition: [RECONFIGURING]}
    create: {to: READY}
    update: reconfigure
    fields:
      - {name: firmware, type: string, default: "1.0"}
    actions:
      - {name: reconfigure, from: [READY], via: [RECONFIGURING], to: READY, failure: {rollback: true}}
`

// TestFailedUpdateNotApplied: an update that fails without rolling back leaves the values it
// asked for in the spec, recorded as not applied (status.unapplied, with each field's last
// applied value, kept by the store across a restart); asking for them again is a change: it
// is refused where the update cannot run (naming the state) and, once the object is repaired,
// runs the update again (a retry that fails again keeps the record; the same patch repeated
// while it runs is answered as any repeated patch), which lands and clears the record. An update that rolls back restores
// the spec and records nothing; the same values asked again run it again too.
func TestFailedUpdateNotApplied(t *testing.T) {
	reg := lifecycle.Builtin()
	kinds, err := lifecycle.Parse("appliances.yaml", []byte(applianceKinds))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(kinds...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, coll    string
		failedState   string         // where the failed update leaves the object
		wantSpec      string         // the firmware in the spec after the failure
		wantUnapplied map[string]any // status.unapplied.applied after the failure
		repair        string         // the action that leaves failedState before the retry
		runs          int            // how many times reconfigure lands
	}{
		{name: "error state", coll: "appliances", failedState: "BROKEN", wantSpec: "2.0",
			wantUnapplied: map[string]any{"firmware": "1.0"}, repair: "mend", runs: 3},
		{name: "rollback", coll: "gadgets", failedState: "READY", wantSpec: "1.0", runs: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, opt harnessOptions) {
				opt.reg = reg
				opt.clock = engine.NewManualClock(harnessT0)
				h := newTestServer(t, opt)
				o := h.create(tt.coll, client.CreateRequest{Name: "a"})
				h.mustSettle(tt.coll, o.ID, "READY")
				h.addFault(client.FaultRule{Kind: o.Kind, Action: "reconfigure", Mode: "fail", Count: 1, Message: "flash failed"})
				upgrade := client.PatchRequest{Spec: map[string]any{"firmware": "2.0"}}
				wantStatus(t, h.do(http.MethodPatch, objPath(tt.coll, o.ID), upgrade), "PATCH firmware 2.0", http.StatusAccepted)
				h.mustSettle(tt.coll, o.ID, tt.failedState)

				// A restarted simulator on the same store reads the same record.
				if opt.store != nil {
					h = newTestServer(t, harnessOptions{store: opt.store, reg: reg, clock: opt.clock})
				}
				got := h.get(tt.coll, o.ID)
				if got.Spec["firmware"] != tt.wantSpec {
					t.Errorf("firmware after the failed update = %v, want %s", got.Spec["firmware"], tt.wantSpec)
				}
				rec, _ := got.Status[client.StatusUnapplied].(map[string]any)
				if applied, _ := rec["applied"].(map[string]any); !equalMaps(applied, tt.wantUnapplied) {
					t.Errorf("status.unapplied after the failed update = %v, want applied = %v", got.Status[client.StatusUnapplied], tt.wantUnapplied)
				} else if tt.wantUnapplied != nil && rec["action"] != "reconfigure" {
					t.Errorf("status.unapplied.action = %v, want reconfigure", rec["action"])
				}

				if tt.repair != "" {
					// Not applied, so a change: refused while the update cannot run.
					d := wantAPIError(t, h.do(http.MethodPatch, objPath(tt.coll, o.ID), upgrade), http.StatusUnprocessableEntity, client.CodeInvalidTransition)
					if !containsAll(d.Message, "firmware", "READY", tt.failedState) {
						t.Errorf("PATCH of the unapplied values in %s: %q, want the field and the states named", tt.failedState, d.Message)
					}
					h.act(tt.coll, o.ID, tt.repair, nil)
					h.mustSettle(tt.coll, o.ID, "READY")

					// A retry that fails again keeps the first applied value on record; the same
					// patch repeated while the retry runs is answered as any repeated patch.
					h.addFault(client.FaultRule{Kind: o.Kind, Action: "reconfigure", Mode: "fail", Count: 1, Message: "flash failed again"})
					r := h.do(http.MethodPatch, objPath(tt.coll, o.ID), upgrade)
					wantStatus(t, r, "PATCH firmware 2.0 (retry)", http.StatusAccepted)
					retry := decodeAs[client.Object](t, r)
					r = h.do(http.MethodPatch, objPath(tt.coll, o.ID), upgrade)
					wantStatus(t, r, "PATCH firmware 2.0 during the retry", http.StatusAccepted)
					if again := decodeAs[client.Object](t, r); again.Operation == nil || retry.Operation == nil ||
						again.Operation.ID != retry.Operation.ID || again.Version != retry.Version {
						t.Errorf("the same patch during the retry answered %+v, want the retry's operation unchanged", again.Operation)
					}
					got = h.mustSettle(tt.coll, o.ID, tt.failedState)
					rec, _ := got.Status[client.StatusUnapplied].(map[string]any)
					if applied, _ := rec["applied"].(map[string]any); !equalMaps(applied, tt.wantUnapplied) {
						t.Errorf("status.unapplied after the failed retry = %v, want applied = %v", rec, tt.wantUnapplied)
					}
					h.act(tt.coll, o.ID, tt.repair, nil)
					h.mustSettle(tt.coll, o.ID, "READY")
				}
				// The same values again run the update again; it lands and applies them.
				wantStatus(t, h.do(http.MethodPatch, objPath(tt.coll, o.ID), upgrade), "PATCH firmware 2.0 again", http.StatusAccepted)
				got = h.mustSettle(tt.coll, o.ID, "READY")
				if got.Spec["firmware"] != "2.0" || got.Status[client.StatusUnapplied] != nil {
					t.Errorf("after the retried update: firmware %v, status.unapplied %v; want 2.0 and none", got.Spec["firmware"], got.Status[client.StatusUnapplied])
				}
				var runs int
				for _, ev := range h.events(tt.coll, o.ID) {
					if ev.Action == "reconfigure" && ev.To == "READY" || ev.Action == "reconfigure" && ev.To == tt.failedState && ev.Error != "" {
						runs++
					}
				}
				if runs != tt.runs {
					t.Errorf("reconfigure landed %d times, want %d (the failures and the retry): %v", runs, tt.runs, eventStates(h.events(tt.coll, o.ID)))
				}
			})
		})
	}
}

func equalMaps(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func containsAll(s string, subs ...string) bool {
	return !slices.ContainsFunc(subs, func(sub string) bool { return !strings.Contains(s, sub) })
}
