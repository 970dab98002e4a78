package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
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

func TestAccNodeRoutelessChangeFailsThePlan(t *testing.T) {
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
				// No route leads back from a final state: the plan fails, naming both states.
				Config:      sim.config(nodeConfig("ENABLED")),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Impossible status change.*DECOMMISSIONED.*ENABLED.*reachable from\s+DECOMMISSIONED: none`),
			},
		},
	})
}
