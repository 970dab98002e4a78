package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

func stringList(xs ...string) knownvalue.Check {
	checks := make([]knownvalue.Check, len(xs))
	for i, x := range xs {
		checks[i] = knownvalue.StringExact(x)
	}
	return knownvalue.ListExact(checks)
}

// TestAccFunctions calls the provider functions; they need no simulator (built-in kinds only).
func TestAccFunctions(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		// Provider functions need Terraform 1.8.
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: `
output "path" {
  value = provider::lifecycle::transition_path("machine", "HALTED", "PAUSED")
}

output "from_transition" {
  value = provider::lifecycle::transition_path("machine", "STOPPING", "RUNNING")
}

output "can_start" {
  value = provider::lifecycle::can_transition("machine", "HALTED", "RUNNING")
}

output "can_revive" {
  value = provider::lifecycle::can_transition("node", "DECOMMISSIONED", "ENABLED")
}
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("path", knownvalue.ObjectExact(map[string]knownvalue.Check{
						"actions": stringList("start", "pause"),
						"states":  stringList("HALTED", "RUNNING", "PAUSED"),
					})),
					// A transition state starts from where it lands.
					statecheck.ExpectKnownOutputValue("from_transition", knownvalue.ObjectExact(map[string]knownvalue.Check{
						"actions": stringList("start"),
						"states":  stringList("HALTED", "RUNNING"),
					})),
					statecheck.ExpectKnownOutputValue("can_start", knownvalue.Bool(true)),
					statecheck.ExpectKnownOutputValue("can_revive", knownvalue.Bool(false)),
				},
			},
			{
				Config: `
output "path" {
  value = provider::lifecycle::transition_path("spaceship", "DOCKED", "FLYING")
}
`,
				PlanOnly:    true,
				ExpectError: errorLike(`Invalid function argument.*Invalid value for "kind" parameter: unknown kind "spaceship"; kinds are account,`),
			},
			{
				Config: `
output "path" {
  value = provider::lifecycle::transition_path("node", "DECOMMISSIONED", "ENABLED")
}
`,
				PlanOnly:    true,
				ExpectError: errorLike(`Call to function "provider::lifecycle::transition_path" failed: node: no route from DECOMMISSIONED to ENABLED; reachable from DECOMMISSIONED: none`),
			},
			{
				Config: `
output "ok" {
  value = provider::lifecycle::can_transition("machine", "HALTED", "FLYING")
}
`,
				PlanOnly:    true,
				ExpectError: errorLike(`Invalid value for "to" parameter: machine: unknown state "FLYING"; states are VIRTUAL`),
			},
		},
	})
}
