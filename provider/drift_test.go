package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

func cloudspaceConfig(status string) string {
	return `
resource "lifecycle_account" "a" {
  name = "acme"
}

resource "lifecycle_cloudspace" "cs" {
  name       = "net"
  account_id = lifecycle_account.a.id
  status     = "` + status + `"
}
`
}

// TestAccCloudspacePausedIsCalmDrift: a cloudspace whose firewall stopped (PAUSED) comes back
// by self-healing. A plan shows nothing to do; a status change waits for the self-healing,
// then walks on; destroy works from there too.
func TestAccCloudspacePausedIsCalmDrift(t *testing.T) {
	sim := newTestSim(t)
	var csID string
	const addr = "lifecycle_cloudspace.cs"
	setScale := func(scale float64) {
		if _, err := sim.Client.SetConfig(context.Background(), client.SimConfig{TimeScale: scale}); err != nil {
			t.Fatal(err)
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(cloudspaceConfig("DEPLOYED")),
				Check:  captureID(addr, &csID),
			},
			{
				// Paused at full time scale: self-healing resumes it only 30 s later.
				PreConfig: func() {
					setScale(1)
					if o := sim.act(t, "cloudspaces", csID, "pause"); o.State != "PAUSED" {
						t.Fatalf("cloudspace = %s after pause", o.State)
					}
				},
				Config: sim.config(cloudspaceConfig("DEPLOYED")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectPriorState(addr, "state", "PAUSED"),
						plancheck.ExpectEmptyPlan(),
					},
				},
			},
			{
				// DISABLED: the route starts where self-healing lands (DEPLOYED). The clock is
				// moved on past the healing before the plan, in this goroutine (a goroutine that
				// moved it a wall-clock second into the apply was never waited for, and the
				// outcome is the same).
				PreConfig: func() {
					setScale(0.002)
					if _, err := sim.Client.AdvanceClock(context.Background(), 31*time.Second); err != nil {
						t.Fatal(err)
					}
				},
				Config: sim.config(cloudspaceConfig("DISABLED")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("DISABLED")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("DISABLED")),
				},
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, "cloudspaces", csID) },
	})
}

// TestAccMachineMidCloneIsNotAChange: a machine in the middle of an action that returns to
// where it started (a clone, run by someone else) plans as nothing to do.
func TestAccMachineMidCloneIsNotAChange(t *testing.T) {
	sim := newTestSim(t)
	var id string
	const addr = "lifecycle_machine.m"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(machineConfig("HALTED")),
				Check:  captureID(addr, &id),
			},
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "machine", Action: "clone", Mode: "hang", Count: 1})
					if _, err := sim.Client.Act(context.Background(), "machines", id, "clone", client.ActionRequest{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: sim.config(machineConfig("HALTED")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectPriorState(addr, "state", "CLONING"),
						expectPriorState(addr, "status", "HALTED"),
						plancheck.ExpectEmptyPlan(),
					},
				},
			},
			{
				// Self-healing ends the stuck clone; asking for RUNNING then starts the machine.
				PreConfig: func() {
					if _, err := sim.Client.AdvanceClock(context.Background(), 11*time.Minute); err != nil {
						t.Fatal(err)
					}
				},
				Config: sim.config(machineConfig("RUNNING")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
				},
			},
		},
	})
}

// TestAccMachineRecycleBinRestoreWithoutStatus: a machine declared without a status and found
// in the recycle bin is restored in place, to the status a new machine has.
func TestAccMachineRecycleBinRestoreWithoutStatus(t *testing.T) {
	sim := newTestSim(t)
	var id string
	const addr = "lifecycle_machine.m"
	cfg := sim.config(machineConfigWith("", `  deletion_mode = "delete"`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: cfg, Check: captureID(addr, &id)},
			{
				PreConfig: func() {
					if _, err := sim.Client.Delete(context.Background(), "machines", id, "delete"); err != nil {
						t.Fatal(err)
					}
					sim.waitStatic(t, "machines", id)
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectPriorState(addr, "state", "DELETED"),
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("status"), knownvalue.StringExact("RUNNING")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringFunc(func(v string) error {
						if v != id {
							return fmt.Errorf("id = %s, want the restored %s", v, id)
						}
						return nil
					})),
				},
			},
		},
	})
}
