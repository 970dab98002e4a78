package simulator

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// A held create (CB-Tumblebug's option=hold, "hold": true through /v1) makes the MCI alone,
// static in Holding: no operation, no VMs, whatever time passes. continue runs the create from
// there (VMs made, Running); withdraw removes it; every other action is refused naming the
// two; a DELETE withdraws it.
func TestMCIHoldContinueWithdraw(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		spec := mciSpec(subgroup("web", 2, "aws", "us-east-1"))
		held := h.create("mcis", client.CreateRequest{Name: "held", Spec: spec, Hold: true})
		if held.State != "Holding" || !held.Static || held.Operation != nil {
			t.Fatalf("held create answered %s static=%v op=%+v, want Holding, static, no operation", held.State, held.Static, held.Operation)
		}
		h.advance(10 * time.Minute) // nothing starts by itself
		held = h.get("mcis", held.ID)
		if held.State != "Holding" || len(h.children("vms", held.ID)) != 0 {
			t.Fatalf("after 10 minutes: MCI %s with VMs %v, want Holding with none", held.State, statesOf(h.children("vms", held.ID)))
		}
		if text, action, _ := mciStatus(t, held); text != "Holding:0 (R:0/0)" || action != "create" || held.Status["target_status"] != "Running" {
			t.Errorf("held MCI status = %q, target %q → %v, want Holding:0 (R:0/0), create → Running", text, action, held.Status["target_status"])
		}

		// Other actions, forced ones and spec changes too, are refused naming the way on.
		for _, tt := range []struct {
			name, method, path string
			body               any
		}{
			{"suspend", http.MethodPost, objPath("mcis", held.ID) + "/actions/suspend", nil},
			{"forced terminate", http.MethodPost, objPath("mcis", held.ID) + "/actions/terminate", client.ActionRequest{Force: true}},
			{"scale", http.MethodPatch, objPath("mcis", held.ID), client.PatchRequest{Spec: mciSpec(subgroup("web", 3, "aws", "us-east-1"))}},
		} {
			e := wantAPIError(t, h.do(tt.method, tt.path, tt.body), http.StatusUnprocessableEntity, client.CodeInvalidTransition)
			if !strings.Contains(e.Message, "continue") || !strings.Contains(e.Message, "withdraw") {
				t.Errorf("%s on a held MCI: %q, want it to name continue and withdraw", tt.name, e.Message)
			}
		}

		// continue runs the create: its phases, its VMs, Running.
		o := h.act("mcis", held.ID, "continue", nil)
		if o.State != "Preparing" || !slices.Equal(statesOf(h.children("vms", held.ID)), repeat("Creating", 2)) {
			t.Fatalf("continued: MCI %s, VMs %v, want Preparing with 2 Creating", o.State, statesOf(h.children("vms", held.ID)))
		}
		if _, action, _ := mciStatus(t, o); action != "create" {
			t.Errorf("continued MCI's target_action = %q, want create (the create goes on)", action)
		}
		o = h.mustSettle("mcis", held.ID, "Running")
		if text, _, _ := mciStatus(t, o); text != "Running:2 (R:2/2)" {
			t.Errorf("continued MCI status %q, want Running:2 (R:2/2)", text)
		}
		hist := h.events("mcis", held.ID)
		checkEventLog(t, hist)
		if got := eventStates(hist); !slices.Equal(got[:6], []string{"", "Holding", "Preparing", "Prepared", "Creating", "Running"}) {
			t.Errorf("history %v, want Holding, then the create's phases to Running", got)
		}
		wantAPIError(t, h.do(http.MethodPost, objPath("mcis", held.ID)+"/actions/continue", nil), http.StatusUnprocessableEntity, client.CodeInvalidTransition)

		// withdraw removes a held MCI; so does a DELETE.
		for _, way := range []string{"withdraw", "DELETE"} {
			m := h.create("mcis", client.CreateRequest{Name: "gone-" + strings.ToLower(way), Spec: spec, Hold: true})
			var r *response
			if way == "withdraw" {
				r = h.do(http.MethodPost, objPath("mcis", m.ID)+"/actions/withdraw", nil)
			} else {
				r = h.do(http.MethodDelete, objPath("mcis", m.ID), nil)
			}
			wantStatus(t, r, way+" a held MCI", http.StatusOK, http.StatusAccepted, http.StatusNoContent)
			wantAPIError(t, h.do(http.MethodGet, objPath("mcis", m.ID), nil), http.StatusNotFound, client.CodeNotFound)
			if vms := h.children("vms", m.ID); len(vms) != 0 {
				t.Errorf("%s: VMs %v were made", way, statesOf(vms))
			}
		}

		// A kind with no hold state refuses a held create, naming the field.
		e := wantAPIError(t, h.do(http.MethodPost, "/v1/machines", h.sampled("machines", client.CreateRequest{Name: "m", Hold: true})),
			http.StatusBadRequest, client.CodeInvalid)
		if !strings.Contains(e.Message, "cannot be held") || !strings.Contains(e.Message, "create without hold") {
			t.Errorf("held machine create: %q, want it to say machines cannot be held", e.Message)
		}
	})
}
