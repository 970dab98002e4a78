package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

const diskAddr = "lifecycle_disk.d"

// diskKit names the resources of a disk kind: the built-in disk, or a user's renamed copy,
// whose typed resource is derived from its spec (the link included) the same way.
type diskKit struct {
	typ, collection string
	providers       map[string]func() (tfprotov6.ProviderServer, error)
	opts            []simtest.Option
}

var builtinDisk = diskKit{typ: "disk", collection: "disks", providers: testAccProviders}

func (dk diskKit) addr() string { return "lifecycle_" + dk.typ + ".d" }

func (dk diskKit) newSim(t *testing.T) *testSim { return newTestSim(t, dk.opts...) }

func (dk diskKit) config(machines []string, attachTo string) string {
	return strings.ReplaceAll(diskConfig(machines, attachTo), `resource "lifecycle_disk" "d"`, `resource "lifecycle_`+dk.typ+`" "d"`)
}

// diskConfig is an account with two machines (m1, m2) and a disk; machines are the machines to
// declare and attachTo the disk's machine_id expression ("" for a detached disk).
func diskConfig(machines []string, attachTo string) string {
	cfg := networkConfig
	for _, m := range machines {
		cfg += `
resource "lifecycle_machine" "` + m + `" {
  name          = "` + m + `"
  cloudspace_id = lifecycle_cloudspace.cs.id
  image_id      = lifecycle_image.img.id
  deletion_mode = "delete"
}
`
	}
	cfg += `
resource "lifecycle_disk" "d" {
  name       = "data"
  account_id = lifecycle_account.a.id
  size_gb    = 10
`
	if attachTo != "" {
		cfg += "  machine_id = " + attachTo + "\n"
	}
	return cfg + "}\n"
}

// TestAccDiskAttachDetachMove attaches a disk to a machine created in the same apply, detaches
// it, attaches it to another machine and moves it back, always in place.
func TestAccDiskAttachDetachMove(t *testing.T) { testDiskAttachDetachMove(t, builtinDisk) }

func testDiskAttachDetachMove(t *testing.T, dk diskKit) {
	sim := dk.newSim(t)
	both := []string{"m1", "m2"}
	var diskID string
	sameDisk := statecheck.CompareValue(compare.ValuesSame())
	attachedTo := func(m string) statecheck.StateCheck {
		return statecheck.CompareValuePairs(dk.addr(), tfjsonpath.New("machine_id"),
			"lifecycle_machine."+m, tfjsonpath.New("id"), compare.ValuesSame())
	}
	inPlace := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(dk.addr(), plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: dk.providers,
		Steps: []resource.TestStep{
			{
				// machine_id is unknown at plan time: the state is planned unknown, apply attaches.
				Config: sim.config(dk.config(both, "lifecycle_machine.m1.id")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(dk.addr(), tfjsonpath.New("state")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("ASSIGNED")),
					attachedTo("m1"),
					sameDisk.AddStateValue(dk.addr(), tfjsonpath.New("id")),
				},
				Check: captureID(dk.addr(), &diskID),
			},
			{
				// Detach: unset machine_id.
				Config: sim.config(dk.config(both, "")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(dk.addr(), plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(dk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("CREATED")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("CREATED")),
					statecheck.ExpectKnownValue(dk.addr(), tfjsonpath.New("machine_id"), knownvalue.Null()),
					sameDisk.AddStateValue(dk.addr(), tfjsonpath.New("id")),
				},
			},
			{
				Config:           sim.config(dk.config(both, "lifecycle_machine.m2.id")),
				ConfigPlanChecks: inPlace,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("ASSIGNED")),
					attachedTo("m2"),
					sameDisk.AddStateValue(dk.addr(), tfjsonpath.New("id")),
				},
			},
			{
				// Move: detach from m2, then attach to m1.
				Config:           sim.config(dk.config(both, "lifecycle_machine.m1.id")),
				ConfigPlanChecks: inPlace,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("ASSIGNED")),
					attachedTo("m1"),
					sameDisk.AddStateValue(dk.addr(), tfjsonpath.New("id")),
				},
				Check: func(*terraform.State) error {
					return expectActions(sim, dk.collection, diskID, "attach", "detach", "attach", "detach", "attach")
				},
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, dk.collection, diskID) },
	})
}

// TestAccDiskMachineDeleteCascade removes a machine (deletion_mode = "delete") from the
// configuration: its attached disk becomes TOBEDELETED, which the next refresh shows as drift
// that plans as an in-place restore.
func TestAccDiskMachineDeleteCascade(t *testing.T) {
	sim := newTestSim(t)
	var diskID string
	// Once m1 is out of the configuration, the disk still names it through a data source.
	byName := `
data "lifecycle_machine" "m1" {
  name = "m1"
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(diskConfig([]string{"m1"}, "lifecycle_machine.m1.id")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(diskAddr, tfjsonpath.New("state"), knownvalue.StringExact("ASSIGNED")),
				},
				Check: captureID(diskAddr, &diskID),
			},
			{
				Config: sim.config(diskConfig(nil, "data.lifecycle_machine.m1.id") + byName),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("lifecycle_machine.m1", plancheck.ResourceActionDestroy),
						plancheck.ExpectResourceAction(diskAddr, plancheck.ResourceActionNoop),
					},
					// The refresh after the apply sees the cascade.
					PostApplyPostRefresh: []plancheck.PlanCheck{
						expectPriorState(diskAddr, "state", "TOBEDELETED"),
						plancheck.ExpectResourceAction(diskAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(diskAddr, tfjsonpath.New("state"), knownvalue.StringExact("ASSIGNED")),
					},
				},
				// The cascade lands just after the machine does: wait for it before the
				// post-apply refresh, so the drift check does not race it.
				Check: func(*terraform.State) error {
					return sim.waitFor("disks", diskID, func(o *client.Object) bool { return o.State == "TOBEDELETED" })
				},
				ExpectNonEmptyPlan: true,
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, "disks", diskID) },
	})
}
