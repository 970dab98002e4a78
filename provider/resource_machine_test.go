package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func machineConfig(status string) string {
	return `
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

resource "lifecycle_machine" "m" {
  name          = "web"
  cloudspace_id = lifecycle_cloudspace.cs.id
  image_id      = lifecycle_image.img.id
  status        = "` + status + `"
}
`
}

func TestAccMachineLifecycle(t *testing.T) {
	sim := newTestSim(t)
	resource.Test(t, resource.TestCase{
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
