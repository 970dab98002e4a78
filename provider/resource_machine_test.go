package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

func machineConfig(status string) string { return machineConfigWith(status, "") }

// networkConfig is the account, cloudspace and image the machines of the tests live on.
const networkConfig = `
resource "lifecycle_account" "a" {
  name = "acme"
}

resource "lifecycle_cloudspace" "cs" {
  name       = "net"
  account_id = lifecycle_account.a.id
}

resource "lifecycle_image" "img" {
  name = "ubuntu"
}
`

// machineConfigWith is machineConfig with extra lines in the machine's block (deletion_mode,
// timeouts...); an empty status leaves the attribute out.
func machineConfigWith(status, extra string) string {
	if status != "" {
		extra = `  status        = "` + status + `"
` + extra
	}
	return networkConfig + `
resource "lifecycle_machine" "m" {
  name          = "web"
  cloudspace_id = lifecycle_cloudspace.cs.id
  image_id      = lifecycle_image.img.id
` + extra + `
}
`
}

func TestAccMachineLifecycle(t *testing.T) {
	sim := newTestSim(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				// Created with a non-default status: deploy, then stop.
				Config: sim.config(machineConfig("HALTED")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("lifecycle_machine.m", tfjsonpath.New("state"), knownvalue.StringExact("HALTED")),
					statecheck.ExpectKnownValue("lifecycle_machine.m", tfjsonpath.New("status"), knownvalue.StringExact("HALTED")),
				},
			},
			{
				// Not a status a machine can be asked for: rejected by the schema.
				Config:      sim.config(machineConfig("DEPLOYING")),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)value must be one of`),
			},
			{
				// Multi-hop: HALTED → start → RUNNING → pause → PAUSED, in place.
				Config: sim.config(machineConfig("PAUSED")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("lifecycle_machine.m", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("lifecycle_machine.m", tfjsonpath.New("state"), knownvalue.StringExact("PAUSED")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("lifecycle_machine.m", tfjsonpath.New("state"), knownvalue.StringExact("PAUSED")),
				},
			},
		},
	})
}

const machineAddr = "lifecycle_machine.m"

// TestAccMachineOutOfBandChangeIsAnUpdate stops the machine behind Terraform's back: the
// refresh shows the drift, the plan walks it back in place (no replacement), and the apply
// returns it to the configured status.
func TestAccMachineOutOfBandChangeIsAnUpdate(t *testing.T) {
	sim := newTestSim(t)
	var id string
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(machineConfig("RUNNING")),
				Check:  captureID(machineAddr, &id),
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(machineAddr, tfjsonpath.New("id")),
				},
			},
			{
				PreConfig: func() {
					if o := sim.act(t, "machines", id, "stop"); o.State != "HALTED" {
						t.Fatalf("out-of-band stop left the machine %s", o.State)
					}
				},
				Config:             sim.config(machineConfig("RUNNING")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{
						expectPriorState(machineAddr, "state", "HALTED"),
						plancheck.ExpectNonEmptyPlan(),
						plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
					},
				},
			},
			{
				Config: sim.config(machineConfig("RUNNING")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionUpdate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("status"), knownvalue.StringExact("RUNNING")),
					sameID.AddStateValue(machineAddr, tfjsonpath.New("id")),
				},
				Check: func(*terraform.State) error { return expectSimState(sim, "machines", id, "RUNNING") },
			},
		},
	})
}

// TestAccMachineRecycleBin: a machine deleted out of band into the recycle bin plans as an
// in-place restore, one destroyed out of band plans as a create; with deletion_mode =
// "delete", terraform destroy leaves the machine DELETED in the recycle bin.
func TestAccMachineRecycleBin(t *testing.T) {
	sim := newTestSim(t)
	cfg := sim.config(machineConfigWith("RUNNING", `  deletion_mode = "delete"`))
	var id, newID string
	sameID := statecheck.CompareValue(compare.ValuesSame())
	newMachine := statecheck.CompareValue(compare.ValuesDiffer())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check:  captureID(machineAddr, &id),
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(machineAddr, tfjsonpath.New("id")),
					newMachine.AddStateValue(machineAddr, tfjsonpath.New("id")),
				},
			},
			{
				PreConfig: func() {
					if _, err := sim.Client.Delete(context.Background(), "machines", id, "delete"); err != nil {
						t.Fatal(err)
					}
					if o := sim.waitStatic(t, "machines", id); o.State != "DELETED" {
						t.Fatalf("out-of-band delete left the machine %s", o.State)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectPriorState(machineAddr, "state", "DELETED"),
						plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
					sameID.AddStateValue(machineAddr, tfjsonpath.New("id")),
				},
				Check: func(*terraform.State) error {
					return expectActions(sim, "machines", id, "delete", "restore", "start")
				},
			},
			{
				PreConfig: func() {
					if _, err := sim.Client.Delete(context.Background(), "machines", id, "destroy"); err != nil {
						t.Fatal(err)
					}
					sim.waitGone(t, "machines", id)
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionCreate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
					newMachine.AddStateValue(machineAddr, tfjsonpath.New("id")),
				},
				Check: captureID(machineAddr, &newID),
			},
		},
		// deletion_mode = "delete": the machine waits in the recycle bin.
		CheckDestroy: func(*terraform.State) error { return expectSimState(sim, "machines", newID, "DELETED") },
	})
}

// TestAccMachineImport imports a machine by ID; with the default deletion_mode the destroy
// removes it for good.
func TestAccMachineImport(t *testing.T) {
	sim := newTestSim(t)
	cfg := sim.config(machineConfigWith("HALTED", `  vcpus = 2`))
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check:  captureID(machineAddr, &id),
			},
			{
				Config:            cfg,
				ResourceName:      machineAddr,
				ImportState:       true,
				ImportStateVerify: true,
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, "machines", id) },
	})
}

// TestAccMachineFailedStopRollsBack: a stop that fails on the server reports the server's
// message; the machine rolled back to RUNNING and stays in the state, so the next apply
// updates it in place.
func TestAccMachineFailedStopRollsBack(t *testing.T) {
	sim := newTestSim(t)
	var id string
	var fault client.FaultRule
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(machineConfig("RUNNING")),
				Check:  captureID(machineAddr, &id),
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(machineAddr, tfjsonpath.New("id")),
				},
			},
			{
				PreConfig: func() {
					fault = sim.addFault(t, client.FaultRule{Kind: "machine", Action: "stop", Mode: "fail", Message: "hypervisor said no"})
				},
				Config:      sim.config(machineConfig("HALTED")),
				ExpectError: errorLike(`Error updating machine.*should have ended in HALTED but the object is RUNNING: hypervisor said no \(failed in STOPPING\).*fix the cause and apply again`),
			},
			{
				PreConfig: func() {
					if err := expectSimState(sim, "machines", id, "RUNNING"); err != nil {
						t.Fatal(err)
					}
					expectCount(t, sim, "machines", 1)
					if err := sim.Engine.Faults().Delete(context.Background(), "", fault.ID); err != nil {
						t.Fatal(err)
					}
				},
				Config: sim.config(machineConfig("HALTED")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectPriorState(machineAddr, "state", "RUNNING"),
						plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionUpdate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("HALTED")),
					sameID.AddStateValue(machineAddr, tfjsonpath.New("id")),
				},
			},
		},
	})
}

// TestAccMachineFailedCreateIsTainted: a deploy that fails leaves the machine in the state,
// tainted, so the next plan replaces it; nothing is orphaned.
func TestAccMachineFailedCreateIsTainted(t *testing.T) {
	sim := newTestSim(t)
	var failedID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "machine", Action: "deploy", Mode: "fail", Message: "no capacity left", Count: 1})
				},
				Config:      sim.config(machineConfig("RUNNING")),
				ExpectError: errorLike(`Error creating machine.*no capacity left`),
			},
			{
				PreConfig: func() {
					ms := expectCount(t, sim, "machines", 1)
					failedID = ms[0].ID
					if ms[0].State != "VIRTUAL" {
						t.Fatalf("the failed machine is %s, want VIRTUAL (rolled back)", ms[0].State)
					}
				},
				Config: sim.config(machineConfig("RUNNING")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectPriorState(machineAddr, "state", "VIRTUAL"),
						plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionReplace),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
				},
				Check: func(*terraform.State) error {
					// The tainted machine was destroyed, its replacement is the only one left.
					if err := expectGone(sim, "machines", failedID); err != nil {
						return err
					}
					ms, err := sim.Client.ListAll(context.Background(), "machines", client.ListOptions{})
					if err != nil || len(ms) != 1 {
						return fmt.Errorf("machines = %d (%v), want 1", len(ms), err)
					}
					return nil
				},
			},
		},
	})
}

// TestAccMachineHangTimesOut: a stop that hangs ends the apply at the update timeout with an
// error naming the state it hung in; once self-healing rolls it back, apply finishes the job.
func TestAccMachineHangTimesOut(t *testing.T) {
	sim := newTestSim(t)
	timeouts := "  timeouts {\n    update = \"2s\"\n  }"
	var id string
	var fault client.FaultRule
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(machineConfigWith("RUNNING", timeouts)),
				Check:  captureID(machineAddr, &id),
			},
			{
				PreConfig: func() {
					fault = sim.addFault(t, client.FaultRule{Kind: "machine", Action: "stop", Mode: "hang"})
				},
				Config:      sim.config(machineConfigWith("HALTED", timeouts)),
				ExpectError: errorLike(`Error updating machine.*timed out waiting for machine machine-[0-9a-f]+ to reach a static state; last state STOPPING.*timeouts`),
			},
			{
				PreConfig: func() {
					if err := sim.Engine.Faults().Delete(context.Background(), "", fault.ID); err != nil {
						t.Fatal(err)
					}
					// Move past the heal limit: self-healing rolls the stuck stop back.
					if _, err := sim.Client.AdvanceClock(context.Background(), 11*time.Minute); err != nil {
						t.Fatal(err)
					}
					if o := sim.waitStatic(t, "machines", id); o.State != "RUNNING" {
						t.Fatalf("after healing the machine is %s, want RUNNING", o.State)
					}
				},
				Config: sim.config(machineConfigWith("HALTED", timeouts)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						expectPriorState(machineAddr, "state", "RUNNING"),
						plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionUpdate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("HALTED")),
				},
			},
		},
	})
}
