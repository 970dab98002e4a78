package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func nodeConfig(status string) string {
	return `
resource "lifecycle_node" "n" {
  name   = "cpu-01"
  status = "` + status + `"
}
`
}

func TestAccNodeRoutelessChangeReplaces(t *testing.T) {
	sim := newTestSim(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(nodeConfig("DECOMMISSIONED")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("lifecycle_node.n", tfjsonpath.New("state"), knownvalue.StringExact("DECOMMISSIONED")),
				},
			},
			{
				// No route leads back from a final state, but a new node starts ENABLED: the
				// plan replaces it (terraform apply -replace plans the same).
				Config:             sim.config(nodeConfig("ENABLED")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("lifecycle_node.n", plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
	})
}
