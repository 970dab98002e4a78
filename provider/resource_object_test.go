package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// printerSpec is a user-defined kind. RETIRED has no way back: only scrapping leaves it.
const printerSpec = `
kinds:
  - name: printer
    family: office
    collection: printers
    description: An office printer.
    states:
      static: [OFF, IDLE, PAUSED, RETIRED, SCRAPPED]
      transition: [WARMING_UP, PRINTING, PAUSING, RESUMING, COOLING_DOWN, RETIRING, SCRAPPING]
      final: [SCRAPPED]
      gone: [SCRAPPED]
    initial: OFF
    default_duration: 1s
    failure: {rollback: true}
    deletion: {destroy: [scrap]}
    create: {name: power_on, via: [WARMING_UP], to: IDLE}
    actions:
      - {name: print, from: [IDLE], via: [PRINTING], returns: true}
      - {name: pause, from: [IDLE], via: [PAUSING], to: PAUSED}
      - {name: resume, from: [PAUSED], via: [RESUMING], to: IDLE}
      - {name: power_off, from: [IDLE, PAUSED], via: [COOLING_DOWN], to: OFF}
      - {name: retire, from: [OFF], via: [RETIRING], to: RETIRED}
      - {name: scrap, from: [OFF, IDLE, PAUSED, RETIRED], via: [SCRAPPING], to: SCRAPPED}
`

// printerKind parses printerSpec.
func printerKind(t *testing.T) *lifecycle.Kind {
	t.Helper()
	kinds, err := lifecycle.Parse("printer.yaml", []byte(printerSpec))
	if err != nil {
		t.Fatal(err)
	}
	return kinds[0]
}

const objectAddr = "lifecycle_object.p"

func printerConfig(status, color string) string {
	return `
resource "lifecycle_object" "p" {
  kind   = "printer"
  name   = "hall"
  status = "` + status + `"
  spec = {
    color = "` + color + `"
  }
}
`
}

// TestAccObjectUserDefinedKind manages an object of a kind the simulator was given at start:
// create with a status, import, change status and spec in place, and plan-time rejection of
// invalid and route-less statuses.
func TestAccObjectUserDefinedKind(t *testing.T) {
	sim := newTestSim(t, withKinds(printerKind(t)))
	var id string
	sameID := statecheck.CompareValue(compare.ValuesSame())
	stateIs := func(s string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(objectAddr, tfjsonpath.New("state"), knownvalue.StringExact(s))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				// power_on, then pause.
				Config: sim.config(printerConfig("PAUSED", "black")),
				ConfigStateChecks: []statecheck.StateCheck{
					stateIs("PAUSED"),
					statecheck.ExpectKnownValue(objectAddr, tfjsonpath.New("spec"),
						knownvalue.MapExact(map[string]knownvalue.Check{"color": knownvalue.StringExact("black")})),
					sameID.AddStateValue(objectAddr, tfjsonpath.New("id")),
				},
				Check: func(s *terraform.State) error {
					if err := captureID(objectAddr, &id)(s); err != nil {
						return err
					}
					return expectActions(sim, "printers", id, "power_on", "pause")
				},
			},
			{
				// An ID whose prefix names its kind.
				Config:            sim.config(printerConfig("PAUSED", "black")),
				ResourceName:      objectAddr,
				ImportState:       true,
				ImportStateVerify: true,
			},
			{
				// KIND/ID.
				Config:            sim.config(printerConfig("PAUSED", "black")),
				ResourceName:      objectAddr,
				ImportState:       true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return "printer/" + id, nil },
				ImportStateVerify: true,
			},
			{
				Config: sim.config(printerConfig("OFF", "white")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(objectAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(objectAddr, tfjsonpath.New("state"), knownvalue.StringExact("OFF")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					stateIs("OFF"),
					statecheck.ExpectKnownValue(objectAddr, tfjsonpath.New("spec").AtMapKey("color"), knownvalue.StringExact("white")),
					sameID.AddStateValue(objectAddr, tfjsonpath.New("id")),
				},
			},
			{
				// A transition state is not a status anyone can ask for.
				Config:      sim.config(printerConfig("PRINTING", "white")),
				PlanOnly:    true,
				ExpectError: errorLike(`Invalid status.*"PRINTING" is not a state a printer can be asked to be in.*IDLE`),
			},
			{
				Config:            sim.config(printerConfig("RETIRED", "white")),
				ConfigStateChecks: []statecheck.StateCheck{stateIs("RETIRED")},
			},
			{
				// No action leads back from RETIRED, but a new printer starts IDLE: the plan
				// replaces it.
				Config:             sim.config(printerConfig("IDLE", "white")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(objectAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, "printers", id) },
	})
}
