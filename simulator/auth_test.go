package simulator

import (
	"context"
	"net/http"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

func TestTenantIsolation(t *testing.T) {
	h := newTestServer(t, harnessOptions{tokens: map[string]string{"tokA": "a", "tokB": "b"}})
	a, b := h.as("tokA"), h.as("tokB")

	acctA, csA := a.openvcloud()
	mA := a.runningMachine(csA.ID, "web")
	_, csB := b.openvcloud()
	mB := b.runningMachine(csB.ID, "web")

	// B never sees, changes or lists A's objects: 404, not 403.
	p := objPath("machines", mA.ID)
	for _, tt := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, p, nil},
		{http.MethodGet, p + "?wait=static&timeout=1s", nil},
		{http.MethodGet, p + "/events", nil},
		{http.MethodPost, p + "/actions/stop", nil},
		{http.MethodPatch, p, client.PatchRequest{Spec: map[string]any{"memory": 1}}},
		{http.MethodDelete, p, nil},
		{http.MethodDelete, p + "?mode=delete", nil},
	} {
		wantAPIError(t, b.do(tt.method, tt.path, tt.body), http.StatusNotFound, client.CodeNotFound)
	}
	for coll, want := range map[string]string{"machines": mB.ID, "cloudspaces": csB.ID} {
		l := decodeAs[client.ObjectList](t, b.do(http.MethodGet, "/v1/"+coll, nil))
		if len(l.Items) != 1 || l.Items[0].ID != want {
			t.Errorf("B lists %s %+v, want only its own %s", coll, l.Items, want)
		}
	}
	if l := decodeAs[client.ObjectList](t, b.do(http.MethodGet, "/v1/machines?parent_id="+csA.ID, nil)); len(l.Items) != 0 {
		t.Errorf("B lists A's cloudspace's machines: %+v", l.Items)
	}
	// B cannot hang its objects under A's.
	wantAPIError(t, b.do(http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "x", ParentID: acctA.ID}), http.StatusBadRequest, client.CodeInvalid)
	// A's machine is untouched and A still sees it.
	if o := a.get("machines", mA.ID); o.State != "RUNNING" || o.Version != mA.Version {
		t.Errorf("A's machine = %s v%d after B's attempts, want RUNNING v%d", o.State, o.Version, mA.Version)
	}
	wantAPIError(t, a.do(http.MethodGet, objPath("machines", mB.ID), nil), http.StatusNotFound, client.CodeNotFound)

	// Idempotency keys are per tenant.
	req := client.CreateRequest{Name: "acct"}
	x := decodeAs[client.Object](t, a.do(http.MethodPost, "/v1/accounts", req, "Idempotency-Key", "same"))
	y := decodeAs[client.Object](t, b.do(http.MethodPost, "/v1/accounts", req, "Idempotency-Key", "same"))
	if x.ID == y.ID {
		t.Error("two tenants' requests with the same Idempotency-Key answered the same object")
	}

	// A cannot attach its disk to B's machine: to A, it does not exist.
	diskA := a.create("disks", client.CreateRequest{Name: "d", ParentID: acctA.ID})
	a.mustSettle("disks", diskA.ID, "CREATED")
	wantAPIError(t, a.do(http.MethodPost, objPath("disks", diskA.ID)+"/actions/attach",
		client.ActionRequest{Params: map[string]any{"machine_id": mB.ID}}), http.StatusBadRequest, client.CodeInvalid)
	// Cascades stay within the tenant: B's machine deletion does not touch A's disks, even one
	// whose spec names B's machine.
	ctx := context.Background()
	stored, err := a.store.Get(ctx, "a", diskA.ID)
	if err != nil {
		t.Fatal(err)
	}
	prev := stored.Version
	stored.State, stored.Spec["machine_id"], stored.Version = "ASSIGNED", mB.ID, prev+1
	if err := updateObject(ctx, a.store, stored, prev, nil, ""); err != nil {
		t.Fatal(err)
	}
	b.do(http.MethodDelete, objPath("machines", mB.ID)+"?mode=delete", nil)
	b.mustSettle("machines", mB.ID, "DELETED")
	if o := a.get("disks", diskA.ID); o.State != "ASSIGNED" {
		t.Errorf("A's disk = %s after B deleted a machine, want ASSIGNED", o.State)
	}
}

func TestAuth(t *testing.T) {
	h := newTestServer(t, harnessOptions{tokens: map[string]string{"tokA": "a"}})
	for _, path := range []string{"/v1/kinds", "/v1/kinds/machine", "/v1/machines", "/v1/machines/x", "/v1/sim/faults", "/v1/sim/clock", "/v1/sim/config", "/v1/nope"} {
		for _, hdr := range []string{"", "Bearer ", "Bearer tokB", "Basic dG9rQTp4", "tokA", "Bearer tokA2", "Bearer tok"} {
			r := h.do(http.MethodGet, path, nil, "Authorization", hdr)
			d := wantAPIError(t, r, http.StatusUnauthorized, client.CodeUnauthorized)
			if d.Message == "" {
				t.Errorf("GET %s with %q: no message", path, hdr)
			}
		}
	}
	for _, tt := range []struct{ method, path string }{
		{http.MethodPost, "/v1/sim/reset"},
		{http.MethodPost, "/v1/sim/faults"},
		{http.MethodDelete, "/v1/sim/faults/fault-1"},
		{http.MethodPost, "/v1/sim/clock"},
		{http.MethodPut, "/v1/sim/config"},
		{http.MethodPost, "/v1/machines"},
	} {
		wantAPIError(t, h.do(tt.method, tt.path, `{}`), http.StatusUnauthorized, client.CodeUnauthorized)
	}
	wantStatus(t, h.do(http.MethodGet, "/healthz", nil), "/healthz", http.StatusOK)
	wantStatus(t, h.do(http.MethodGet, "/openapi.json", nil), "/openapi.json", http.StatusOK)
	a := h.as("tokA")
	wantStatus(t, a.do(http.MethodGet, "/v1/kinds", nil), "GET /v1/kinds with a token", http.StatusOK)
	wantStatus(t, a.do(http.MethodGet, "/v1/sim/clock", nil), "GET /v1/sim/clock with a token", http.StatusOK)
	wantStatus(t, a.do(http.MethodPost, "/v1/sim/reset", nil), "reset with a token", http.StatusNoContent)

	// With no tokens configured the API is open to one tenant, whatever is sent.
	open := newTestServer(t, harnessOptions{})
	acct := open.create("accounts", client.CreateRequest{Name: "x"})
	if o := open.as("whatever").get("accounts", acct.ID); o.ID != acct.ID {
		t.Error("an open simulator split callers into tenants")
	}
}

// TestSimControlIsPerTenant: with tokens, a tenant's fault rules touch only its own objects
// and requests, and its reset removes only its own objects.
func TestSimControlIsPerTenant(t *testing.T) {
	h := newTestServer(t, harnessOptions{tokens: map[string]string{"tokA": "a", "tokB": "b"}})
	a, b := h.as("tokA"), h.as("tokB")
	acctA := a.create("accounts", client.CreateRequest{Name: "a"})
	acctB := b.create("accounts", client.CreateRequest{Name: "b"})

	rule := decodeAs[client.FaultRule](t, a.do(http.MethodPost, "/v1/sim/faults",
		client.FaultRule{Kind: "account", Mode: wire.FaultHTTPError, HTTPStatus: http.StatusServiceUnavailable}))
	wantAPIError(t, a.do(http.MethodGet, "/v1/accounts", nil), http.StatusServiceUnavailable, client.CodeUnavailable)
	wantStatus(t, b.do(http.MethodGet, "/v1/accounts", nil), "B's list under A's fault", http.StatusOK)
	if l := decodeAs[client.FaultList](t, b.do(http.MethodGet, "/v1/sim/faults", nil)); len(l.Items) != 0 {
		t.Errorf("B sees A's fault rules: %+v", l.Items)
	}
	wantAPIError(t, b.do(http.MethodDelete, "/v1/sim/faults/"+rule.ID, nil), http.StatusNotFound, client.CodeNotFound)
	wantStatus(t, a.do(http.MethodDelete, "/v1/sim/faults/"+rule.ID, nil), "A deletes its rule", http.StatusNoContent)

	wantStatus(t, b.do(http.MethodPost, "/v1/sim/reset", nil), "B resets", http.StatusNoContent)
	wantAPIError(t, b.do(http.MethodGet, objPath("accounts", acctB.ID), nil), http.StatusNotFound, client.CodeNotFound)
	if o := a.get("accounts", acctA.ID); o.ID != acctA.ID {
		t.Errorf("A's account after B's reset = %+v", o)
	}
}
