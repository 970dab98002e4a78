package simulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Issue 32: null for a required field is the same 400 as a missing one, list items are
// validated like any object, and the names the simulator makes for children obey the bounds
// users' names do.
func TestNullIsNoValue(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	now := h.clock.Now()
	start, end := now.Add(time.Hour).Format(time.RFC3339), now.Add(48*time.Hour).Format(time.RFC3339)
	res := map[string]any{"resource_type": "virtual:instance", "amount": 1}
	long := strings.Repeat("n", engine.MaxNameBytes)
	tests := []struct {
		name, coll, field string
		req               client.CreateRequest
	}{
		{"lease end_date null", "leases", "spec.end_date",
			client.CreateRequest{Name: "l", Spec: map[string]any{"start_date": start, "end_date": nil, "reservations": []any{res}}}},
		{"reservations [null]", "leases", "spec.reservations[0]",
			client.CreateRequest{Name: "l", Spec: map[string]any{"start_date": start, "end_date": end, "reservations": []any{nil}}}},
		{"reservation resource_type null", "leases", "spec.reservations[0]",
			client.CreateRequest{Name: "l", Spec: map[string]any{"start_date": start, "end_date": end, "reservations": []any{map[string]any{"resource_type": nil}}}}},
		{"mci subgroups null", "mcis", "spec.subgroups", client.CreateRequest{Name: "m", Spec: map[string]any{"subgroups": nil}}},
		{"subgroup name, csp, region null", "mcis", "spec.subgroups[0]",
			client.CreateRequest{Name: "m", Spec: mciSpec(map[string]any{"name": nil, "count": 1, "csp": nil, "region": nil})}},
		{"two subgroups named alike", "mcis", "spec.subgroups[1].name",
			client.CreateRequest{Name: "m", Spec: mciSpec(subgroup("web", 1, "aws", "us-east-1"), subgroup("web", 1, "gcp", "asia-northeast3"))}},
		{"VM names over the bound", "mcis", "name",
			client.CreateRequest{Name: long, Spec: mciSpec(subgroup(strings.Repeat("g", 64), 100, "aws", "us-east-1"))}},
		{"event names over the bound", "leases", "name",
			client.CreateRequest{Name: long, Spec: map[string]any{"start_date": start, "end_date": end, "reservations": []any{res}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := wantAPIError(t, h.do(http.MethodPost, "/v1/"+tt.coll, tt.req), http.StatusBadRequest, client.CodeInvalid)
			var details struct{ Field string }
			_ = json.Unmarshal(d.Details, &details)
			if !strings.HasPrefix(details.Field, tt.field) {
				t.Errorf("refusal %q names field %q, want %q", d.Message, details.Field, tt.field)
			}
		})
	}
	// Missing and null answer alike.
	missing := h.do(http.MethodPost, "/v1/mcis", client.CreateRequest{Name: "m", Spec: map[string]any{}})
	null := h.do(http.MethodPost, "/v1/mcis", client.CreateRequest{Name: "m", Spec: map[string]any{"subgroups": nil}})
	if string(missing.Body) != string(null.Body) {
		t.Errorf("missing subgroups: %s; null subgroups: %s; want the same answer", missing, null)
	}
	// A null optional field is no value: the default applies.
	mci := h.create("mcis", client.CreateRequest{Name: "ok", Spec: mciSpec(map[string]any{"name": "web", "count": nil, "csp": "aws", "region": "us-east-1"})})
	h.mustSettle("mcis", mci.ID, "Running")
	if vms := h.children("vms", mci.ID); len(vms) != 1 {
		t.Errorf("a subgroup with count null made %d VMs, want the default 1", len(vms))
	}
	// A patch that names two subgroups alike is refused too.
	r := h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: mciSpec(subgroup("web", 1, "aws", "us-east-1"), subgroup("web", 2, "aws", "us-east-1"))})
	wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid)
}

// Issue 32: PATCH is a JSON merge patch: a member equal to its current value is no change,
// so a client that sends the whole spec back with one count changed scales the cluster.
func TestPatchRepeatingCurrentValues(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	groups := func(workers int) []any {
		return []any{
			map[string]any{"name": "master", "flavor": "m1.large", "count": 1, "processes": []any{"namenode"}},
			map[string]any{"name": "worker", "flavor": "m1.medium", "count": workers, "processes": []any{"datanode"}},
		}
	}
	cl := h.create("clusters", client.CreateRequest{Name: "hadoop", Spec: map[string]any{"node_groups": groups(2)}})
	cl = h.mustSettle("clusters", cl.ID, "Active")
	whole := cl.Spec
	whole["node_groups"] = groups(3)
	r := h.do(http.MethodPatch, objPath("clusters", cl.ID), client.PatchRequest{Spec: whole})
	wantStatus(t, r, "PATCH the whole spec back with one count changed", http.StatusOK, http.StatusAccepted)
	h.mustSettle("clusters", cl.ID, "Active")

	// The same spec again changes nothing: no update runs.
	before := h.get("clusters", cl.ID)
	r = h.do(http.MethodPatch, objPath("clusters", cl.ID), client.PatchRequest{Spec: before.Spec})
	wantStatus(t, r, "PATCH the spec as it is", http.StatusOK, http.StatusAccepted)
	if after := h.get("clusters", cl.ID); after.Version != before.Version || after.Operation != nil {
		t.Errorf("a patch changing nothing moved the cluster: v%d → v%d, operation %+v", before.Version, after.Version, after.Operation)
	}
	// An immutable field that does change is still refused.
	changed := before.Spec
	changed["hadoop_version"] = "9.9.9"
	wantAPIError(t, h.do(http.MethodPatch, objPath("clusters", cl.ID), client.PatchRequest{Spec: changed}), http.StatusBadRequest, client.CodeInvalid)

	// cluster_inst: the flavor repeated is no change of it (updatable_in and immutable alike).
	cloudlet := h.create("cloudlets", client.CreateRequest{Name: "edge"})
	h.mustSettle("cloudlets", cloudlet.ID, "Ready")
	ci := h.create("cluster_insts", client.CreateRequest{Name: "k", ParentID: cloudlet.ID, Spec: map[string]any{"flavor": "m4.small", "num_nodes": 2}})
	ci = h.mustSettle("cluster_insts", ci.ID, "Ready")
	spec := ci.Spec
	spec["num_nodes"] = 3
	wantStatus(t, h.do(http.MethodPatch, objPath("cluster_insts", ci.ID), client.PatchRequest{Spec: spec}), "PATCH cluster_inst whole spec", http.StatusOK, http.StatusAccepted)
	if o := h.mustSettle("cluster_insts", ci.ID, "Ready"); o.Spec["num_nodes"] != 3.0 {
		t.Errorf("num_nodes = %v, want 3", o.Spec["num_nodes"])
	}
}

// Issue 32: links are checked when set (create or patch) and kept true by every cascade,
// busy objects included: a machine destroyed while a disk's attach to it runs aborts the
// attach, and no disk is left naming a machine that is gone (the links invariant, checked
// after every commit of every test, says so too).
func TestLinksStayTrue(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		acct, cs := h.openvcloud()
		m := h.runningMachine(cs.ID, "web")
		// A disk cannot be made, or patched, naming a machine that does not exist.
		r := h.do(http.MethodPost, "/v1/disks", client.CreateRequest{Name: "d", ParentID: acct.ID, Spec: map[string]any{"size_gb": 10, "machine_id": "machine-nope"}})
		wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid)
		d := h.create("disks", client.CreateRequest{Name: "d", ParentID: acct.ID})
		h.mustSettle("disks", d.ID, "CREATED")
		wantAPIError(t, h.do(http.MethodPatch, objPath("disks", d.ID), client.PatchRequest{Spec: map[string]any{"machine_id": "machine-nope"}}),
			http.StatusBadRequest, client.CodeInvalid)

		// The attach runs long; the machine's destroy lands first.
		h.addFault(client.FaultRule{Kind: "disk", Action: "attach", Mode: wire.FaultSlow, Factor: 1000})
		h.act("disks", d.ID, "attach", map[string]any{"machine_id": m.ID})
		wantStatus(t, h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=destroy", nil), "destroy the machine", http.StatusAccepted)
		for range 10 {
			h.advance(10 * time.Second)
		}
		if r := h.do(http.MethodGet, objPath("machines", m.ID), nil); r.Status != http.StatusNotFound {
			t.Fatalf("machine after its destroy: %s", r)
		}
		o := h.get("disks", d.ID)
		if o.Spec["machine_id"] != nil || o.State != "CREATED" || o.Operation != nil {
			t.Errorf("disk after its machine went: %s, machine_id %v, operation %+v; want CREATED, no link, no operation", o.State, o.Spec["machine_id"], o.Operation)
		}
	})
}

// A patch that repeats the spec is no change of it, but when the children the spec makes
// are not what it says (refine removed a failed VM), it converges them, as before.
func TestPatchRepeatingSpecConvergesChildren(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	h.addFault(client.FaultRule{Kind: "vm", Action: "create", Mode: wire.FaultFail, Count: 1})
	spec := mciSpec(subgroup("web", 3, "aws", "us-east-1"))
	mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: spec})
	h.mustSettle("mcis", mci.ID, "Running")
	h.act("mcis", mci.ID, "refine", nil)
	o := h.mustSettle("mcis", mci.ID, "Running")
	if n := len(h.children("vms", mci.ID)); n != 2 {
		t.Fatalf("refined MCI has %d VMs, want 2", n)
	}
	r := h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: o.Spec})
	wantStatus(t, r, "PATCH the spec as it is", http.StatusAccepted)
	h.mustSettle("mcis", mci.ID, "Running")
	if n := len(h.children("vms", mci.ID)); n != 3 {
		t.Errorf("after the spec was sent again the MCI has %d VMs, want 3", n)
	}
	// Now the children are what the spec says: the same patch is no change.
	before := h.get("mcis", mci.ID)
	wantStatus(t, h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: before.Spec}), "PATCH again", http.StatusOK, http.StatusAccepted)
	if after := h.get("mcis", mci.ID); after.Version != before.Version {
		t.Errorf("a patch changing nothing moved the MCI: v%d → v%d", before.Version, after.Version)
	}
}
