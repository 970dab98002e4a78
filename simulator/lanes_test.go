package simulator

import (
	"context"
	"fmt"
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
	tests := []struct {
		name      string
		subgroups []map[string]any
		// waiting and queued are how many VMs the suspend waits for and queues; firstWave the
		// VMs' states after the first landings.
		waiting, queued int
		firstWave       []string
	}{
		{
			name: "three running, one queued",
			subgroups: []map[string]any{
				subgroup("a", 1, "ncp", "kr-1"), subgroup("b", 1, "ncp", "kr-2"), subgroup("c", 1, "ncp", "kr-3"), subgroup("d", 1, "ncp", "kr-4"),
			},
			waiting: 3, queued: 1,
			firstWave: []string{"Suspended", "Suspended", "Suspended", "Suspending"},
		},
		{
			// The only release is the first: it must count the landing VM in before it
			// counts it out, or the MCI stays parked.
			name:      "one waited for",
			subgroups: []map[string]any{subgroup("a", 1, "ncp", "kr-1")},
			waiting:   1,
			firstWave: []string{"Suspended"},
		},
		{
			// The first landing frees the lane its VM ran in: the queued VM starts.
			name:      "one running, one queued behind it",
			subgroups: []map[string]any{subgroup("a", 1, "ncp", "kr-1"), subgroup("b", 1, "ncp", "kr-2")},
			waiting:   1, queued: 1,
			firstWave: []string{"Suspended", "Suspending"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestServer(t, harnessOptions{})
			mci := h.create("mcis", client.CreateRequest{Name: "infra", Spec: mciSpec(tt.subgroups...)})
			h.mustSettle("mcis", mci.ID, "Running")
			h.act("mcis", mci.ID, "suspend", nil)
			if waiting, queued := rewriteAsEarlierVersion(t, h, mci.ID, tt.waiting); waiting != tt.waiting || queued != tt.queued {
				t.Fatalf("suspend runs %d VMs and queues %d, want %d and %d", waiting, queued, tt.waiting, tt.queued)
			}

			h.advance(2 * time.Second)
			if got := statesOf(h.children("vms", mci.ID)); !slices.Equal(got, tt.firstWave) {
				t.Fatalf("VMs after the first wave: %v, want %v", got, tt.firstWave)
			}
			o := h.mustSettle("mcis", mci.ID, "Suspended")
			n := len(tt.firstWave)
			if text, _, _ := mciStatus(t, o); text != fmt.Sprintf("Suspended:%d (R:0/%d)", n, n) {
				t.Errorf("MCI after the suspend: %q", text)
			}
		})
	}
}

// rewriteAsEarlierVersion stores an MCI's running operation and its VMs as a version before
// lanes did: the VMs it waits for and those queued in lists, with no count, lanes, queue
// entries or members. With running set, that many VMs run and the rest are queued (as a limit that
// admitted only them would have). It returns the lists' lengths.
func rewriteAsEarlierVersion(t *testing.T, h *harness, mciID string, running int) (waiting, queued int) {
	t.Helper()
	ctx := context.Background()
	o, err := h.store.Get(ctx, "", mciID)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := h.store.List(ctx, "", store.Filter{Kind: "vm", ParentID: mciID})
	if err != nil {
		t.Fatal(err)
	}
	var writes []store.Write
	for _, vm := range kids {
		switch {
		case vm.Op != nil && len(o.Op.Waiting) < running:
			o.Op.Waiting = append(o.Op.Waiting, vm.ID)
			vm.Op.WaitedOp, vm.Op.Lane = "", nil
		case vm.Op != nil || vm.Queue != nil:
			// Queued: as the earlier version queued it, in its static state.
			o.Op.Queued = append(o.Op.Queued, vm.ID)
			vm.Queue = nil
			if vm.Op != nil {
				vm.State, vm.Op, vm.Due = vm.Op.From, nil, time.Time{}
			}
			vm.Status["queued"] = "suspend"
		default:
			continue
		}
		writes = append(writes, store.Write{Object: vm, Expect: vm.Version})
		vm.Version++
	}
	o.Op.Waits, o.Op.Lanes, o.Members = 0, nil, nil
	writes = append(writes, store.Write{Object: o, Expect: o.Version})
	o.Version++
	if err := h.store.Commit(ctx, store.Batch{Writes: writes}); err != nil {
		t.Fatal(err)
	}
	return len(o.Op.Waiting), len(o.Op.Queued)
}
