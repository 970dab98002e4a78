package simulator

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

func TestOpenvCloudParentRules(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")

	// Missing or unknown parents are invalid requests.
	for _, tt := range []struct {
		name   string
		parent string
	}{{"missing parent_id", ""}, {"unknown parent_id", "cloudspace-0000"}, {"parent of another kind", acct.ID}} {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/machines", client.CreateRequest{Name: "x", ParentID: tt.parent})
			d := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid)
			if !strings.Contains(d.Message, "cloudspace") {
				t.Errorf("message %q should name the parent kind", d.Message)
			}
		})
	}

	// A parent that is not DEPLOYED refuses its machines' creates and actions, naming its state.
	h.act("cloudspaces", cs.ID, "disable", nil)
	h.mustSettle("cloudspaces", cs.ID, "DISABLED")
	r := h.do(http.MethodPost, "/v1/machines", client.CreateRequest{Name: "x", ParentID: cs.ID})
	d := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	if !strings.Contains(d.Message, "DISABLED") || !strings.Contains(d.Message, "DEPLOYED") {
		t.Errorf("create under a disabled cloudspace: %q, want it to name DISABLED and DEPLOYED", d.Message)
	}
	r = h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", nil)
	d = wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	if !strings.Contains(d.Message, "DISABLED") || !strings.Contains(d.Message, cs.ID) {
		t.Errorf("stop under a disabled cloudspace: %q, want it to name the parent and its state", d.Message)
	}
	// Deletes ignore the parent.
	h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=delete", nil)
	h.mustSettle("machines", m.ID, "DELETED")
	// Back to DEPLOYED, the children may act again.
	h.act("cloudspaces", cs.ID, "enable", nil)
	h.mustSettle("cloudspaces", cs.ID, "DEPLOYED")
	h.act("machines", m.ID, "restore", nil)
	h.mustSettle("machines", m.ID, "HALTED")

	// A cloudspace needs its account CONFIRMED.
	r = h.do(http.MethodPost, objPath("accounts", acct.ID)+"/actions/disable", nil)
	wantStatus(t, r, "disable account", http.StatusAccepted)
	h.mustSettle("accounts", acct.ID, "DISABLED")
	wantAPIError(t, h.do(http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "n", ParentID: acct.ID}),
		http.StatusUnprocessableEntity, client.CodeInvalidTransition)
}

func TestOpenvCloudDisks(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	other := h.runningMachine(cs.ID, "other")
	newDisk := func(name string) client.Object {
		t.Helper()
		d := h.create("disks", client.CreateRequest{Name: name, ParentID: acct.ID, Spec: map[string]any{"size_gb": 10}})
		if d.State != "CREATING" {
			t.Fatalf("new disk is %s, want CREATING", d.State)
		}
		return h.mustSettle("disks", d.ID, "CREATED")
	}
	d1, d2, d3 := newDisk("d1"), newDisk("d2"), newDisk("d3")

	// attach → ASSIGNED, recording the machine; detach → CREATED.
	o := h.act("disks", d1.ID, "attach", map[string]any{"machine_id": m.ID})
	if o.State != "ATTACHING" || o.Spec["machine_id"] != m.ID {
		t.Errorf("attaching disk = %s %v", o.State, o.Spec)
	}
	h.mustSettle("disks", d1.ID, "ASSIGNED")
	h.act("disks", d1.ID, "detach", nil)
	h.mustSettle("disks", d1.ID, "CREATED")
	h.act("disks", d1.ID, "attach", map[string]any{"machine_id": m.ID})
	h.mustSettle("disks", d1.ID, "ASSIGNED")
	h.act("disks", d2.ID, "attach", map[string]any{"machine_id": other.ID})
	h.mustSettle("disks", d2.ID, "ASSIGNED")
	// d3 stays detached.

	// Deleting the machine (recycle bin) moves its attached disks to TOBEDELETED.
	h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=delete", nil)
	h.mustSettle("machines", m.ID, "DELETED")
	if o := h.get("disks", d1.ID); o.State != "TOBEDELETED" || !o.Static {
		t.Errorf("attached disk of a deleted machine = %s, want TOBEDELETED", o.State)
	}
	if o := h.get("disks", d2.ID); o.State != "ASSIGNED" {
		t.Errorf("another machine's disk = %s, want ASSIGNED", o.State)
	}
	if o := h.get("disks", d3.ID); o.State != "CREATED" {
		t.Errorf("detached disk = %s, want CREATED", o.State)
	}
	evs := h.events("disks", d1.ID)
	checkEventLog(t, evs)
	if last := evs[len(evs)-1]; last.Actor != "system" || !strings.Contains(last.Message, m.ID) || last.To != "TOBEDELETED" {
		t.Errorf("cascade event = %+v, want a system event naming the machine", last)
	}

	// Restoring the machine brings them back.
	h.act("machines", m.ID, "restore", nil)
	h.mustSettle("machines", m.ID, "HALTED")
	if o := h.get("disks", d1.ID); o.State != "ASSIGNED" {
		t.Errorf("disk of a restored machine = %s, want ASSIGNED", o.State)
	}

	// A detached disk goes to the recycle bin and back; an attached one is deleted to TOBEDELETED.
	h.do(http.MethodDelete, objPath("disks", d3.ID)+"?mode=delete", nil)
	h.mustSettle("disks", d3.ID, "DELETED")
	h.act("disks", d3.ID, "restore", nil)
	h.mustSettle("disks", d3.ID, "CREATED")
	h.do(http.MethodDelete, objPath("disks", d2.ID)+"?mode=delete", nil)
	h.mustSettle("disks", d2.ID, "TOBEDELETED")
	h.act("disks", d2.ID, "restore_attached", nil)
	h.mustSettle("disks", d2.ID, "ASSIGNED")
	// Destroy removes a disk whatever it is attached to.
	h.do(http.MethodDelete, objPath("disks", d2.ID)+"?mode=destroy", nil)
	if _, exists := h.settle("disks", d2.ID); exists {
		t.Error("a destroyed disk still exists")
	}
}

func TestOpenvCloudRecycleBin(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	for _, coll := range []string{"machines", "cloudspaces"} {
		t.Run(coll, func(t *testing.T) {
			var id string
			if coll == "machines" {
				id = h.runningMachine(cs.ID, "m").ID
			} else {
				c := h.create("cloudspaces", client.CreateRequest{Name: "n2", ParentID: cs.ParentID})
				id = h.mustSettle("cloudspaces", c.ID, "DEPLOYED").ID
			}
			wantStatus(t, h.do(http.MethodDelete, objPath(coll, id)+"?mode=delete", nil), "DELETE mode=delete", http.StatusAccepted)
			o := h.mustSettle(coll, id, "DELETED")
			if o.ID != id {
				t.Fatal("wrong object")
			}
			// Still listed and readable in the bin.
			if l := decodeAs[client.ObjectList](t, h.do(http.MethodGet, "/v1/"+coll+"?state=DELETED", nil)); len(l.Items) != 1 || l.Items[0].ID != id {
				t.Errorf("DELETED list = %+v", l.Items)
			}
			wantStatus(t, h.do(http.MethodDelete, objPath(coll, id)+"?mode=destroy", nil), "DELETE mode=destroy", http.StatusAccepted)
			if _, exists := h.settle(coll, id); exists {
				t.Fatal("destroyed object still exists")
			}
			wantAPIError(t, h.do(http.MethodGet, objPath(coll, id), nil), http.StatusNotFound, client.CodeNotFound)
			evs := h.events(coll, id)
			checkEventLog(t, evs)
			if last := evs[len(evs)-1]; last.To != "DESTROYED" {
				t.Errorf("last event = %+v", last)
			}
		})
	}
}

func TestOpenvCloudCloudspaceSelfResumes(t *testing.T) {
	h := newTestServer(t, harnessOptions{timeScale: 0.5})
	_, cs := h.openvcloud()
	h.act("cloudspaces", cs.ID, "pause", nil)
	h.advance(time.Second) // PAUSING takes 2s × 0.5
	if o := h.get("cloudspaces", cs.ID); o.State != "PAUSED" || !o.Static {
		t.Fatalf("cloudspace = %s, want PAUSED", o.State)
	}
	// PAUSED is static but not for ever: the system resumes it after 30s × the time scale.
	h.advance(14 * time.Second)
	if o := h.get("cloudspaces", cs.ID); o.State != "PAUSED" {
		t.Fatalf("cloudspace after 14s = %s, want still PAUSED", o.State)
	}
	h.advance(time.Second)
	o := h.get("cloudspaces", cs.ID)
	if o.State != "RESUMING" || o.Operation == nil || o.Operation.Action != "resume" {
		t.Fatalf("cloudspace after 15s = %s %+v, want RESUMING", o.State, o.Operation)
	}
	// The system's action blocks user actions like any other.
	wantAPIError(t, h.do(http.MethodPost, objPath("cloudspaces", cs.ID)+"/actions/disable", nil), http.StatusConflict, client.CodeBusy)
	h.advance(time.Second)
	o = h.get("cloudspaces", cs.ID)
	if o.State != "DEPLOYED" || !o.Static {
		t.Fatalf("cloudspace = %s, want DEPLOYED again", o.State)
	}
	evs := h.events("cloudspaces", cs.ID)
	checkEventLog(t, evs)
	resume := evs[len(evs)-2]
	if resume.From != "PAUSED" || resume.To != "RESUMING" || resume.Actor != "system" || resume.Action != "resume" {
		t.Errorf("self-resume event = %+v, want the system starting resume", resume)
	}
	// It stays DEPLOYED.
	h.advance(time.Hour)
	if o := h.get("cloudspaces", cs.ID); o.State != "DEPLOYED" {
		t.Errorf("cloudspace an hour later = %s", o.State)
	}

	// A spec change while PAUSED does not postpone the self-resume.
	h.act("cloudspaces", cs.ID, "pause", nil)
	h.advance(time.Second)
	h.advance(10 * time.Second)
	wantStatus(t, h.do(http.MethodPatch, objPath("cloudspaces", cs.ID), client.PatchRequest{Spec: map[string]any{"label": "x"}}), "PATCH", http.StatusOK)
	h.advance(5 * time.Second)
	if o := h.get("cloudspaces", cs.ID); o.State != "RESUMING" {
		t.Errorf("cloudspace 15s after pausing, patched meanwhile = %s, want RESUMING", o.State)
	}
}

func TestSavannaClusterPhases(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	groups := func(workers int) map[string]any {
		return map[string]any{"node_groups": []any{
			map[string]any{"name": "master", "flavor": "m1.large", "count": 1, "processes": []any{"namenode"}},
			map[string]any{"name": "worker", "flavor": "m1.medium", "count": workers, "processes": []any{"datanode"}},
		}}
	}
	cl := h.create("clusters", client.CreateRequest{Name: "hadoop", Spec: groups(3)})
	if cl.State != "Validating" {
		t.Fatalf("new cluster is %s", cl.State)
	}
	h.mustSettle("clusters", cl.ID, "Active")
	want := []string{"", "Validating", "InfraUpdating", "Spawning", "Waiting", "Preparing", "Configuring", "Starting", "Active"}
	if got := eventStates(h.events("clusters", cl.ID)); !slices.Equal(got, want) {
		t.Errorf("cluster create went %v, want %v", got, want)
	}
	// Scaling is the update action: a PATCH runs it.
	r := h.do(http.MethodPatch, objPath("clusters", cl.ID), client.PatchRequest{Spec: groups(5)})
	wantStatus(t, r, "PATCH cluster", http.StatusAccepted)
	if o := decodeAs[client.Object](t, r); o.Operation == nil || o.Operation.Action != "scale" {
		t.Errorf("PATCH started %+v, want scale", o.Operation)
	}
	h.mustSettle("clusters", cl.ID, "Active")
	// A node group's flavor cannot change in place.
	flavor := groups(5)
	flavor["node_groups"].([]any)[1].(map[string]any)["flavor"] = "m1.xlarge"
	r = h.do(http.MethodPatch, objPath("clusters", cl.ID), client.PatchRequest{Spec: flavor})
	if d := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid); !strings.Contains(d.Message, "node_groups[worker].flavor") {
		t.Errorf("flavor change: %q", d.Message)
	}
	// Delete from a transitional status; Deleting is never left except by removal (a failure
	// retries it).
	h.do(http.MethodPatch, objPath("clusters", cl.ID), client.PatchRequest{Spec: groups(2)})
	r = h.do(http.MethodDelete, objPath("clusters", cl.ID), nil)
	wantStatus(t, r, "DELETE while scaling", http.StatusAccepted)
	if o := decodeAs[client.Object](t, r); o.State != "Deleting" {
		t.Errorf("DELETE while scaling answered %s", o.State)
	}
	h.addFault(client.FaultRule{Kind: "cluster", Action: "delete", Mode: wire.FaultFail, Count: 2})
	h.advance(2 * time.Second)
	h.advance(2 * time.Second)
	if o := h.get("clusters", cl.ID); o.State != "Deleting" {
		t.Errorf("cluster after failed deletes = %s, want still Deleting", o.State)
	}
	if _, exists := h.settle("clusters", cl.ID); exists {
		t.Error("deleted cluster still exists")
	}
	checkEventLog(t, h.events("clusters", cl.ID))
}

func TestBlazarLeaseTimers(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	start := harnessT0.Add(time.Hour)
	end := start.Add(2 * time.Hour)
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: map[string]any{
		"start_date": start.Format(time.RFC3339), "end_date": end.Format(time.RFC3339)}})
	if lease.State != "CREATING" {
		t.Fatalf("new lease is %s", lease.State)
	}
	h.mustSettle("leases", lease.ID, "PENDING")
	// Nothing happens before start_date.
	h.advance(start.Sub(h.manual.Now()) - time.Second)
	if o := h.get("leases", lease.ID); o.State != "PENDING" {
		t.Fatalf("lease a second before start_date = %s", o.State)
	}
	h.advance(time.Second)
	o := h.get("leases", lease.ID)
	if o.State != "STARTING" || o.Operation == nil || o.Operation.Action != "start" {
		t.Fatalf("lease at start_date = %s %+v, want STARTING", o.State, o.Operation)
	}
	h.mustSettle("leases", lease.ID, "ACTIVE")
	h.advance(end.Sub(h.manual.Now()))
	h.mustSettle("leases", lease.ID, "TERMINATED")
	evs := h.events("leases", lease.ID)
	checkEventLog(t, evs)
	if got, want := eventStates(evs), []string{"", "CREATING", "PENDING", "STARTING", "ACTIVE", "TERMINATING", "TERMINATED"}; !slices.Equal(got, want) {
		t.Errorf("lease went %v, want %v", got, want)
	}
	for _, e := range evs {
		if e.To == "STARTING" && (e.Actor != "timer" || !e.Time.Equal(start)) {
			t.Errorf("start event = %+v, want the timer at %v", e, start)
		}
	}

	// Moving start_date by PATCH (the update action) reschedules the start.
	l2 := h.create("leases", client.CreateRequest{Name: "l2", Spec: map[string]any{
		"start_date": h.manual.Now().Add(time.Hour).Format(time.RFC3339), "end_date": h.manual.Now().Add(10 * time.Hour).Format(time.RFC3339)}})
	h.mustSettle("leases", l2.ID, "PENDING")
	later := h.manual.Now().Add(3 * time.Hour)
	h.do(http.MethodPatch, objPath("leases", l2.ID), client.PatchRequest{Spec: map[string]any{"start_date": later.Format(time.RFC3339)}})
	h.mustSettle("leases", l2.ID, "PENDING")
	h.advance(2 * time.Hour)
	if o := h.get("leases", l2.ID); o.State != "PENDING" {
		t.Errorf("lease past its old start_date = %s, want PENDING", o.State)
	}
	h.advance(later.Sub(h.manual.Now()))
	if o := h.get("leases", l2.ID); o.State != "STARTING" {
		t.Errorf("lease at its new start_date = %s, want STARTING", o.State)
	}

	// Delete from a transitional state preempts the running operation.
	r := h.do(http.MethodDelete, objPath("leases", l2.ID), nil)
	wantStatus(t, r, "DELETE a STARTING lease", http.StatusAccepted)
	o = decodeAs[client.Object](t, r)
	if o.State != "DELETING" || o.Operation == nil || o.Operation.Action != "delete" {
		t.Errorf("DELETE of a STARTING lease = %s %+v, want DELETING", o.State, o.Operation)
	}
	if _, exists := h.settle("leases", l2.ID); exists {
		t.Error("deleted lease still exists")
	}
	evs = h.events("leases", l2.ID)
	checkEventLog(t, evs)
	var preempt *client.Event
	for i := range evs {
		if strings.Contains(evs[i].Message, "preempted") {
			preempt = &evs[i]
		}
	}
	if preempt == nil || preempt.Action != "start" || preempt.From != "STARTING" {
		t.Errorf("no preemption event for the start: %+v", evs)
	}
	if got := eventStates(evs); !slices.Equal(got[len(got)-2:], []string{"DELETING", "DELETED"}) {
		t.Errorf("lease delete went %v", got)
	}

	// A repeated DELETE (a client's retry) does not start the running delete over.
	l3 := h.create("leases", client.CreateRequest{Name: "l3"})
	first := decodeAs[client.Object](t, h.do(http.MethodDelete, objPath("leases", l3.ID), nil))
	h.advance(time.Second)
	r = h.do(http.MethodDelete, objPath("leases", l3.ID), nil)
	wantStatus(t, r, "repeated DELETE", http.StatusAccepted)
	again := decodeAs[client.Object](t, r)
	if again.Operation == nil || again.Operation.ID != first.Operation.ID || again.Version != first.Version {
		t.Errorf("repeated DELETE answered %+v v%d, want the running delete %+v v%d", again.Operation, again.Version, first.Operation, first.Version)
	}
	h.advance(time.Second)
	if _, exists := h.settle("leases", l3.ID); exists {
		t.Error("lease still exists 2s after its delete")
	}
}

func TestMobiledgeXParentReady(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	cl := h.create("cloudlets", client.CreateRequest{Name: "edge"})
	ciSpec := map[string]any{"flavor": "m4.small"}
	appSpec := map[string]any{"app_name": "web", "app_version": "1.0"}
	// A ClusterInst cannot be created while its cloudlet is not Ready, nor an AppInst while
	// its ClusterInst is not.
	wantAPIError(t, h.do(http.MethodPost, "/v1/cluster_insts", client.CreateRequest{Name: "k", ParentID: cl.ID, Spec: ciSpec}),
		http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	h.mustSettle("cloudlets", cl.ID, "Ready")
	ci := h.create("cluster_insts", client.CreateRequest{Name: "k", ParentID: cl.ID, Spec: ciSpec})
	wantAPIError(t, h.do(http.MethodPost, "/v1/app_insts", client.CreateRequest{Name: "a", ParentID: ci.ID, Spec: appSpec}),
		http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	h.mustSettle("cluster_insts", ci.ID, "Ready")
	app := h.create("app_insts", client.CreateRequest{Name: "a", ParentID: ci.ID, Spec: appSpec})
	h.mustSettle("app_insts", app.ID, "Ready")
	// Delete is refused while transient.
	h.do(http.MethodPatch, objPath("cluster_insts", ci.ID), client.PatchRequest{Spec: map[string]any{"num_nodes": 4}})
	wantAPIError(t, h.do(http.MethodDelete, objPath("cluster_insts", ci.ID), nil), http.StatusConflict, client.CodeBusy)
	// An update error stays in UpdateError and may be retried.
	h.mustSettle("cluster_insts", ci.ID, "Ready")
	h.addFault(client.FaultRule{Kind: "cluster_inst", Action: "update", Mode: wire.FaultFail, Count: 1})
	h.do(http.MethodPatch, objPath("cluster_insts", ci.ID), client.PatchRequest{Spec: map[string]any{"num_nodes": 8}})
	h.mustSettle("cluster_insts", ci.ID, "UpdateError")
	wantAPIError(t, h.do(http.MethodPatch, objPath("app_insts", app.ID), client.PatchRequest{Spec: map[string]any{"configs": "x"}}),
		http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	h.do(http.MethodPatch, objPath("cluster_insts", ci.ID), client.PatchRequest{Spec: map[string]any{"num_nodes": 8}})
	h.mustSettle("cluster_insts", ci.ID, "Ready")
}

// TestEveryKindCreatesAndDeletes creates an object of every built-in kind, lets it settle and
// deletes it in every mode, checking the history each time.
func TestEveryKindCreatesAndDeletes(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	reg := h.engine.Registry()
	parents := map[string]string{}
	var ready func(kind string) string
	ready = func(kind string) string {
		if id, ok := parents[kind]; ok {
			return id
		}
		k, _ := reg.Kind(kind)
		req := client.CreateRequest{Name: "parent-" + kind}
		if k.Parent != nil {
			req.ParentID = ready(k.Parent.Kind)
		}
		o := h.create(k.Collection, req)
		o, _ = h.settle(k.Collection, o.ID)
		parents[kind] = o.ID
		return o.ID
	}
	for _, k := range reg.Kinds() {
		if k.MadeByParent {
			continue // made and removed with their parent (relations_test.go)
		}
		for _, mode := range slices.Sorted(maps.Keys(k.Deletion)) {
			t.Run(k.Name+"/"+mode, func(t *testing.T) {
				req := client.CreateRequest{Name: "x"}
				if k.Parent != nil {
					req.ParentID = ready(k.Parent.Kind)
				}
				o := h.create(k.Collection, req)
				o, exists := h.settle(k.Collection, o.ID)
				if !exists || !k.IsStatic(o.State) {
					t.Fatalf("create settled in %q (exists %v)", o.State, exists)
				}
				r := h.do(http.MethodDelete, objPath(k.Collection, o.ID)+"?mode="+mode, nil)
				if _, err := k.DeletionAction(mode, o.State); err != nil {
					// The spec allows this mode only from other states (a DEPLOYED
					// cloudspace is deleted before it is destroyed).
					wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
					return
				}
				wantStatus(t, r, "DELETE", http.StatusOK, http.StatusAccepted, http.StatusNoContent)
				final, exists := h.settle(k.Collection, o.ID)
				targets := k.DeletionTargets(mode)
				switch {
				case exists && !slices.Contains(targets, final.State):
					t.Errorf("deleted %s in mode %s settled in %s, want one of %v", k.Name, mode, final.State, targets)
				case !exists && !slices.ContainsFunc(targets, k.IsGone):
					t.Errorf("deleted %s in mode %s is gone, but the mode's targets %v are not gone states", k.Name, mode, targets)
				}
				checkEventLog(t, h.events(k.Collection, o.ID))
			})
		}
	}
}

// TestDiskAttachNeedsALiveMachine: attaching names the machine, which must exist (for the
// tenant) and be RUNNING, PAUSED or HALTED; detaching clears the link.
func TestDiskAttachNeedsALiveMachine(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	d := h.create("disks", client.CreateRequest{Name: "d", ParentID: acct.ID})
	h.mustSettle("disks", d.ID, "CREATED")
	attach := func(params map[string]any) *response {
		return h.do(http.MethodPost, objPath("disks", d.ID)+"/actions/attach", client.ActionRequest{Params: params})
	}
	wantAPIError(t, attach(nil), http.StatusBadRequest, client.CodeInvalid)
	wantAPIError(t, attach(map[string]any{"machine_id": "machine-nope"}), http.StatusBadRequest, client.CodeInvalid)
	wantAPIError(t, attach(map[string]any{"machine_id": cs.ID}), http.StatusBadRequest, client.CodeInvalid) // not a machine

	h.act("disks", d.ID, "attach", map[string]any{"machine_id": m.ID})
	if o := h.mustSettle("disks", d.ID, "ASSIGNED"); o.Spec["machine_id"] != m.ID {
		t.Errorf("attached disk spec = %v, want machine_id %s", o.Spec, m.ID)
	}
	h.act("disks", d.ID, "detach", nil)
	if o := h.mustSettle("disks", d.ID, "CREATED"); o.Spec["machine_id"] != nil {
		t.Errorf("detached disk still names machine %v", o.Spec["machine_id"])
	}

	h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=delete", nil)
	h.mustSettle("machines", m.ID, "DELETED")
	r := attach(map[string]any{"machine_id": m.ID})
	wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	if !strings.Contains(r.String(), "DELETED") {
		t.Errorf("attach to a deleted machine: %s, want the message to name its state", r)
	}
}

// TestMachineDestroyDetachesDisks: a destroyed machine leaves no disk pointing at it.
func TestMachineDestroyDetachesDisks(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	d := h.attachedDisk(acct.ID, m.ID)
	h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=destroy", nil)
	if _, exists := h.settle("machines", m.ID); exists {
		t.Fatal("destroyed machine still exists")
	}
	if o := h.mustSettle("disks", d.ID, "CREATED"); o.Spec["machine_id"] != nil {
		t.Errorf("disk of a destroyed machine still names it: %v", o.Spec)
	}

	// A disk deleted with its machine is purged with it.
	m2 := h.runningMachine(cs.ID, "db")
	h.act("disks", d.ID, "attach", map[string]any{"machine_id": m2.ID})
	h.mustSettle("disks", d.ID, "ASSIGNED")
	h.do(http.MethodDelete, objPath("machines", m2.ID)+"?mode=delete", nil)
	h.mustSettle("machines", m2.ID, "DELETED")
	h.mustSettle("disks", d.ID, "TOBEDELETED")
	h.do(http.MethodDelete, objPath("machines", m2.ID)+"?mode=destroy", nil)
	h.settle("machines", m2.ID)
	if _, exists := h.settle("disks", d.ID); exists {
		t.Error("disk deleted with its machine survived the machine's purge")
	}
}

// TestFailedActionRestoresParams: a rolled-back action undoes the spec changes its request
// made (a failed attach does not leave the disk naming the machine).
func TestFailedActionRestoresParams(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	d := h.create("disks", client.CreateRequest{Name: "d", ParentID: acct.ID, Spec: map[string]any{"size_gb": 10}})
	h.mustSettle("disks", d.ID, "CREATED")
	h.addFault(client.FaultRule{Kind: "disk", Action: "attach", Mode: wire.FaultFail, Count: 1})
	h.act("disks", d.ID, "attach", map[string]any{"machine_id": m.ID})
	if o := h.mustSettle("disks", d.ID, "CREATED"); o.Spec["machine_id"] != nil || o.Spec["size_gb"] != float64(10) {
		t.Errorf("disk after a failed attach = %v, want size_gb only", o.Spec)
	}
	h.act("disks", d.ID, "attach", map[string]any{"machine_id": m.ID})
	h.mustSettle("disks", d.ID, "ASSIGNED")
	h.addFault(client.FaultRule{Kind: "disk", Action: "detach", Mode: wire.FaultFail, Count: 1})
	h.act("disks", d.ID, "detach", nil)
	if o := h.mustSettle("disks", d.ID, "ASSIGNED"); o.Spec["machine_id"] != m.ID {
		t.Errorf("disk after a failed detach = %v, want it still attached to %s", o.Spec, m.ID)
	}
}

// TestEventsOfAnotherCollection: an object's events are found only under its own collection.
func TestEventsOfAnotherCollection(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, _ := h.openvcloud()
	wantAPIError(t, h.do(http.MethodGet, objPath("machines", acct.ID)+"/events", nil), http.StatusNotFound, client.CodeNotFound)
	wantStatus(t, h.do(http.MethodGet, objPath("accounts", acct.ID)+"/events", nil), "events", http.StatusOK)
}
