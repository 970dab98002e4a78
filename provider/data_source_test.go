package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccDataSources reads a machine by ID and by name, and the machine kind's state machine.
func TestAccDataSources(t *testing.T) {
	sim := newTestSim(t)
	dataSources := `
data "lifecycle_machine" "by_id" {
  id = lifecycle_machine.m.id
}

data "lifecycle_machine" "by_name" {
  name       = "web"
  depends_on = [lifecycle_machine.m]
}

data "lifecycle_kind" "machine" {
  name = "machine"
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(machineConfigWith("HALTED", "  vcpus = 2") + dataSources),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.lifecycle_machine.by_id", tfjsonpath.New("name"), knownvalue.StringExact("web")),
					statecheck.ExpectKnownValue("data.lifecycle_machine.by_id", tfjsonpath.New("state"), knownvalue.StringExact("HALTED")),
					statecheck.ExpectKnownValue("data.lifecycle_machine.by_id", tfjsonpath.New("status"), knownvalue.StringExact("HALTED")),
					statecheck.ExpectKnownValue("data.lifecycle_machine.by_id", tfjsonpath.New("vcpus"), knownvalue.Int64Exact(2)),
					statecheck.CompareValuePairs("data.lifecycle_machine.by_id", tfjsonpath.New("cloudspace_id"),
						"lifecycle_cloudspace.cs", tfjsonpath.New("id"), compare.ValuesSame()),
					statecheck.CompareValuePairs("data.lifecycle_machine.by_name", tfjsonpath.New("id"),
						machineAddr, tfjsonpath.New("id"), compare.ValuesSame()),
					statecheck.ExpectKnownValue("data.lifecycle_machine.by_name", tfjsonpath.New("image_id"), knownvalue.NotNull()),

					statecheck.ExpectKnownValue("data.lifecycle_kind.machine", tfjsonpath.New("collection"), knownvalue.StringExact("machines")),
					statecheck.ExpectKnownValue("data.lifecycle_kind.machine", tfjsonpath.New("parent_kind"), knownvalue.StringExact("cloudspace")),
					statecheck.ExpectKnownValue("data.lifecycle_kind.machine", tfjsonpath.New("static_states"),
						stringList("VIRTUAL", "RUNNING", "PAUSED", "HALTED", "DELETED", "DESTROYED")),
					statecheck.ExpectKnownValue("data.lifecycle_kind.machine", tfjsonpath.New("transition_states"),
						knownvalue.ListPartial(map[int]knownvalue.Check{0: knownvalue.StringExact("DEPLOYING")})),
					statecheck.ExpectKnownValue("data.lifecycle_kind.machine", tfjsonpath.New("actions").AtSliceIndex(0),
						knownvalue.ObjectPartial(map[string]knownvalue.Check{
							"name": knownvalue.StringExact("deploy"), "from": stringList("VIRTUAL"),
							"via": stringList("DEPLOYING"), "to": knownvalue.StringExact("RUNNING"),
						})),
					statecheck.ExpectKnownValue("data.lifecycle_kind.machine", tfjsonpath.New("actions"), knownvalue.ListSizeExact(17)),
					statecheck.ExpectKnownValue("data.lifecycle_kind.machine", tfjsonpath.New("mermaid"),
						knownvalue.StringRegexp(regexp.MustCompile(`^stateDiagram-v2\n(?s).*HALTED --> STARTING`))),
				},
			},
			{
				Config: sim.config(machineConfigWith("HALTED", "  vcpus = 2") + `
data "lifecycle_machine" "missing" {
  name = "no-such-machine"
}
`),
				PlanOnly:    true,
				ExpectError: errorLike(`No single machine with this name.*0 machine objects are named "no-such-machine"`),
			},
		},
	})
}
