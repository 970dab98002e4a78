package simulator

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// queuedOf counts the VMs queued for an action and the VMs in a state with a phase scheduled.
func queuedOf(vms []client.Object, action string) (queued int, scheduled map[string]int) {
	scheduled = map[string]int{}
	for _, vm := range vms {
		switch {
		case vm.Status["queued"] == action:
			queued++
			if vm.Operation != nil && !vm.Operation.DueAt.IsZero() {
				scheduled["queued with a due time"]++
			}
		case vm.Operation != nil:
			scheduled[vm.Spec["region"].(string)]++
		}
	}
	return queued, scheduled
}

// An MCI's create provisions its VMs under the seed's per-CSP region and per-region VM limits,
// like its control actions: NCP runs 15 VMs per region and 3 regions at once. The rest hold in
// Creating, queued, and start as others land, region by region in name order.
func TestMCICreateProvisionsUnderCSPLimits(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		h := newTestServer(t, opt)
		mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(
			subgroup("a", 20, "ncp", "kr-1"), subgroup("b", 1, "ncp", "kr-2"), subgroup("c", 1, "ncp", "kr-3"),
			subgroup("d", 1, "ncp", "kr-4"), subgroup("e", 1, "ncp", "kr-1"), subgroup("f", 2, "aws", "us-east-1"))})
		vms := h.children("vms", mci.ID)
		if len(vms) != 26 {
			t.Fatalf("the create made %d VMs, want 26", len(vms))
		}
		queued, scheduled := queuedOf(vms, "create")
		want := map[string]int{"kr-1": 15, "kr-2": 1, "kr-3": 1, "us-east-1": 2}
		if queued != 7 || !maps.Equal(scheduled, want) {
			t.Fatalf("at the create: %d queued (want 7: a-16..20, e-1 behind kr-1's 15, d-1 behind three NCP regions), running %v, want %v",
				queued, scheduled, want)
		}
		for _, vm := range vms {
			if vm.State != "Creating" {
				t.Errorf("VM %s is %s at the create, want Creating (queued or not)", vm.Name, vm.State)
			}
		}
		// The first wave lands: kr-1 runs its six queued VMs, and kr-2 and kr-3 being done,
		// kr-4 gets its turn.
		h.advance(2 * time.Second)
		vms = h.children("vms", mci.ID)
		queued, scheduled = queuedOf(vms, "create")
		if want := map[string]int{"kr-1": 6, "kr-4": 1}; queued != 0 || !maps.Equal(scheduled, want) {
			t.Fatalf("after the first wave: %d queued, running %v, want none queued and %v", queued, scheduled, want)
		}
		o := h.mustSettle("mcis", mci.ID, "Running")
		if text, _, _ := mciStatus(t, o); text != "Running:26 (R:26/26)" {
			t.Errorf("MCI after the create: %q", text)
		}
		// A scale-out provisions under the same limits.
		h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: mciSpec(
			subgroup("a", 40, "ncp", "kr-1"), subgroup("b", 1, "ncp", "kr-2"), subgroup("c", 1, "ncp", "kr-3"),
			subgroup("d", 1, "ncp", "kr-4"), subgroup("e", 1, "ncp", "kr-1"), subgroup("f", 2, "aws", "us-east-1"))})
		queued, scheduled = queuedOf(h.children("vms", mci.ID), "create")
		if want := map[string]int{"kr-1": 15}; queued != 5 || !maps.Equal(scheduled, want) {
			t.Fatalf("at the scale-out: %d queued, running %v, want 5 queued and %v", queued, scheduled, want)
		}
		o = h.mustSettle("mcis", mci.ID, "Running")
		if text, _, _ := mciStatus(t, o); text != "Running:46 (R:46/46)" {
			t.Errorf("MCI after the scale-out: %q", text)
		}
	})
}

// An MCI's operation in a store written before lanes (lists of the VMs it waits for and of
// those queued) is taken over and completes: the first release turns the lists into the count
// and the lanes.
func TestMCIOperationFromAnEarlierVersionCompletes(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(
		subgroup("a", 1, "ncp", "kr-1"), subgroup("b", 1, "ncp", "kr-2"), subgroup("c", 1, "ncp", "kr-3"), subgroup("d", 1, "ncp", "kr-4"))})
	h.mustSettle("mcis", mci.ID, "Running")
	h.act("mcis", mci.ID, "suspend", nil)

	// Rewrite the MCI and its VMs as an earlier version stored them.
	ctx := context.Background()
	o, err := h.store.Get(ctx, "", mci.ID)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := h.store.List(ctx, "", store.Filter{Kind: "vm", ParentID: mci.ID})
	if err != nil {
		t.Fatal(err)
	}
	var writes []store.Write
	for _, vm := range kids {
		switch {
		case vm.Op != nil:
			o.Op.Waiting = append(o.Op.Waiting, vm.ID)
			vm.Op.WaitedOp, vm.Op.Lane = "", nil
		case vm.Queue != nil:
			o.Op.Queued = append(o.Op.Queued, vm.ID)
			vm.Queue = nil
		default:
			continue
		}
		writes = append(writes, store.Write{Object: vm, Expect: vm.Version})
		vm.Version++
	}
	if len(o.Op.Waiting) != 3 || len(o.Op.Queued) != 1 {
		t.Fatalf("suspend runs %v and queues %v, want three and one", o.Op.Waiting, o.Op.Queued)
	}
	o.Op.Waits, o.Op.Lanes = 0, nil
	writes = append(writes, store.Write{Object: o, Expect: o.Version})
	o.Version++
	if err := h.store.Commit(ctx, store.Batch{Writes: writes}); err != nil {
		t.Fatal(err)
	}

	h.advance(2 * time.Second)
	vms := h.children("vms", mci.ID)
	if got := statesOf(vms); !slices.Equal(got, []string{"Suspended", "Suspended", "Suspended", "Suspending"}) {
		t.Fatalf("VMs after the first wave: %v, want the queued one suspending", got)
	}
	o2 := h.mustSettle("mcis", mci.ID, "Suspended")
	if text, _, _ := mciStatus(t, o2); text != "Suspended:4 (R:0/4)" {
		t.Errorf("MCI after the suspend: %q", text)
	}
}
