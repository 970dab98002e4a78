package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/compare"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// defectsFile holds two kinds written from the kind reference alone: a datastore whose zones
// make its replicas (with derived status fields) and a pipeline with a required link to a
// machine, sent in the spec, and a guard through it.
var defectsFile = filepath.Join("testdata", "TestAccUserKindDefects", "kinds.yaml")

// pipelineConfig is a pipeline on the test network's machine; runner is the expression of
// its runner_id.
func pipelineConfig(sim *testSim, runner, status string) string {
	return sim.config(machineConfig("RUNNING") + `
resource "lifecycle_pipeline" "p" {
  name      = "build"
  runner_id = ` + runner + `
  status    = "` + status + `"
}
`)
}

// TestAccUserKindLinkSentInSpec: a link field no action sets (runner_id) is part of the spec
// a typed resource sends: a required one plans with a value known only after apply, the
// object is created with it, the link's checks run (its guard refuses run while the machine
// is not RUNNING), and a changed link is an in-place update.
func TestAccUserKindLinkSentInSpec(t *testing.T) {
	providers, serve := userKindsTest(t, defectsFile)
	sim := newTestSim(t, serve)
	const addr = "lifecycle_pipeline.p"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{
				Config: pipelineConfig(sim, "lifecycle_machine.m.id", "RUNNING"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs(addr, tfjsonpath.New("runner_id"), machineAddr, tfjsonpath.New("id"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
				},
			},
			{
				Config: pipelineConfig(sim, "lifecycle_machine.m.id", "RUNNING"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				// A link to an object that does not exist is refused by the simulator's check.
				Config:      pipelineConfig(sim, `"machine-0000000000000000"`, "RUNNING"),
				ExpectError: errorLike(`machine.*machine-0000000000000000.*not found`),
			},
		},
	})
}

// datastoreObject is a datastore managed by lifecycle_object: zone z with two replicas, then
// zone a with one (its count left to the default).
const datastoreObject = `
resource "lifecycle_object" "d" {
  kind = "datastore"
  name = "order"
  spec = {
    zones = jsonencode([{ name = "z", count = 2 }, { name = "a" }])
  }
}
`

// datastoreTyped is the same datastore through its typed resource.
const datastoreTyped = `
resource "lifecycle_datastore" "d" {
  name = "order"
  zones {
    name  = "z"
    count = 2
  }
  zones {
    name = "a"
  }
}
`

// TestAccUserKindMovedChildrenDerived: a user kind's object moves from lifecycle_object to
// its typed resource with a `moved` block and no change; its children are listed in the
// order of the list field they are made from (zones z, a: order-z-1, order-z-2, order-a-1),
// not by name; and the status fields its derive declares are visible in both resources.
func TestAccUserKindMovedChildrenDerived(t *testing.T) {
	providers, serve := userKindsTest(t, defectsFile)
	sim := newTestSim(t, serve)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	replicas := knownvalue.ListExact([]knownvalue.Check{
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("order-z-1")}),
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("order-z-2")}),
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("order-a-1")}),
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{
				Config: sim.config(datastoreObject),
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue("lifecycle_object.d", tfjsonpath.New("id")),
					statecheck.ExpectKnownValue("lifecycle_object.d", tfjsonpath.New("derived_status"), knownvalue.MapExact(map[string]knownvalue.Check{
						"ready": knownvalue.StringExact("3"), "all_ready": knownvalue.StringExact("true"), "replicas": knownvalue.StringExact(`{"READY":3}`),
					})),
				},
			},
			{
				Config: sim.config(datastoreObject),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				Config: sim.config(`
moved {
  from = lifecycle_object.d
  to   = lifecycle_datastore.d
}
` + datastoreTyped),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("lifecycle_datastore.d", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue("lifecycle_datastore.d", tfjsonpath.New("id")),
					statecheck.ExpectKnownValue("lifecycle_datastore.d", tfjsonpath.New("replicas"), replicas),
					statecheck.ExpectKnownValue("lifecycle_datastore.d", tfjsonpath.New("derived_status"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"ready": knownvalue.Int64Exact(3), "all_ready": knownvalue.Bool(true),
						"replicas": knownvalue.MapExact(map[string]knownvalue.Check{"READY": knownvalue.Int64Exact(3)}),
					})),
				},
			},
		},
	})
}

// TestAccIntegerFieldNotWhole: a number that is not whole for an integer field (in a nested
// block too) is refused at validate time naming the attribute, and a value out of bounds
// names the bounds as the kind declares them.
func TestAccIntegerFieldNotWhole(t *testing.T) {
	providers, serve := userKindsTest(t, defectsFile)
	sim := newTestSim(t, serve)
	datastore := func(memory, count string) string {
		return sim.config(`
resource "lifecycle_datastore" "d" {
  name      = "order"
  memory_mb = ` + memory + `
  zones {
    name  = "z"
    count = ` + count + `
  }
}
`)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{Config: datastore("1024.5", "1"), PlanOnly: true, ExpectError: errorLike(`memory_mb is an integer field, so 1024.5 is not a value it\s+can take: write a whole number such as 1024`)},
			{Config: datastore("1024", "1.5"), PlanOnly: true, ExpectError: errorLike(`zones\[0\].count is an integer field, so 1.5`)},
			{Config: datastore("100", "1"), PlanOnly: true, ExpectError: errorLike(`memory_mb value must be between 256 and 65536, got: 100`)},
			{Config: datastore("1024", "2"), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
}

// TestAccUserKindsFromEndpoint: with no kinds file named, the provider reads the user kinds
// from the simulator LIFECYCLE_ENDPOINT names when it starts, so lifecycle_datastore exists
// (a state holding one can be planned and shown) with only the endpoint exported.
func TestAccUserKindsFromEndpoint(t *testing.T) {
	_, serve := userKindsTest(t, defectsFile)
	sim := newTestSim(t, serve)
	t.Setenv(userKindsEnv, "")
	t.Setenv(simKindsEnv, "")
	t.Setenv(endpointEnv, sim.URL)
	providers := map[string]func() (tfprotov6.ProviderServer, error){
		"lifecycle": providerserver.NewProtocol6WithError(New("test")()),
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{
				Config: datastoreTyped,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("lifecycle_datastore.d", tfjsonpath.New("state"), knownvalue.StringExact("STOPPED")),
				},
			},
			{
				Config:           datastoreTyped,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// TestServedKindsUnreachable: a LIFECYCLE_ENDPOINT nobody answers at gives no user kinds, at
// once (the provider starts for every terraform command).
func TestServedKindsUnreachable(t *testing.T) {
	start := time.Now()
	u := loadServedKinds(context.Background(), "http://127.0.0.1:1", "")
	if len(u.kinds) != 0 || u.err != nil {
		t.Errorf("loadServedKinds(nobody there) = %d kinds, %v; want none and no error", len(u.kinds), u.err)
	}
	if d := time.Since(start); d > servedKindsTimeout {
		t.Errorf("loadServedKinds(nobody there) took %v, over %v", d, servedKindsTimeout)
	}
}

// TestAccUserKindLinkSetByCreate: a link only the create sets (set_by: [create]) on a kind
// with statuses is sent in the create's spec by the typed resource: the object is created with
// it (no "inconsistent result after apply … was cty.StringVal, but now null"), the plan after
// is empty, and a link to an object that does not exist is refused by the simulator's check.
func TestAccUserKindLinkSetByCreate(t *testing.T) {
	providers, serve := userKindsTest(t, filepath.Join("testdata", "TestAccUserKindLinkSetByCreate", "kinds.yaml"))
	sim := newTestSim(t, serve)
	const addr = "lifecycle_rollout.r"
	var rollout, machine string
	config := func(machine string) string {
		return sim.config(machineConfig("RUNNING") + `
resource "lifecycle_rollout" "r" {
  name       = "canary"
  machine_id = ` + machine + `
  status     = "LIVE"
}
`)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{
				Config: config("lifecycle_machine.m.id"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs(addr, tfjsonpath.New("machine_id"), machineAddr, tfjsonpath.New("id"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("LIVE")),
				},
				Check: resource.ComposeTestCheckFunc(captureID(addr, &rollout), captureID(machineAddr, &machine),
					func(*terraform.State) error {
						o, err := sim.Client.Get(context.Background(), "rollouts", rollout)
						if err != nil {
							return err
						}
						if got := o.Spec["machine_id"]; got != machine {
							return fmt.Errorf("rollout %s: spec.machine_id = %v in the simulator, want %q", rollout, got, machine)
						}
						return nil
					}),
			},
			{
				Config: config("lifecycle_machine.m.id"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				Config:      config(`"machine-0000000000000000"`),
				ExpectError: errorLike(`machine.*machine-0000000000000000.*not found`),
			},
		},
	})
}

// writtenDefaults is a datastore managed by lifecycle_object whose configuration writes a
// value equal to its default (memory_mb) and leaves an item's defaulted count out (zone a),
// or, written out, spells that count out too (countOut), or drops memory_mb again (dropped);
// and one with an empty spec.
func writtenDefaults(countOut, dropped bool) string {
	a := `{ name = "a" }`
	if countOut {
		a = `{ name = "a", count = 1 }`
	}
	memory := "\n    memory_mb = 1024"
	if dropped {
		memory = ""
	}
	return `
resource "lifecycle_object" "d" {
  kind = "datastore"
  name = "written"
  spec = {` + memory + `
    zones = [{ name = "z", count = 2 }, ` + a + `]
  }
}

resource "lifecycle_object" "e" {
  kind = "datastore"
  name = "empty"
  spec = {}
}
`
}

// TestAccObjectImportWrittenDefaults: lifecycle_object imported by ID plans no change when its
// configuration writes a value equal to a field's default, leaves an item's defaulted field
// out, or writes spec = {}: the simulator says which values it filled in (defaulted), and
// the import takes only what was written. Writing a default out later (no value changes)
// is recorded, and imports the same way.
func TestAccObjectImportWrittenDefaults(t *testing.T) {
	providers, serve := userKindsTest(t, defectsFile)
	sim := newTestSim(t, serve)
	// The imported state is the state the configuration made, whose plan (after every
	// apply) is empty.
	importOf := func(cfg string, addrs ...string) []resource.TestStep {
		var steps []resource.TestStep
		for _, addr := range addrs {
			steps = append(steps, resource.TestStep{
				Config: cfg, ResourceName: addr, ImportState: true,
				ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"},
			})
		}
		return steps
	}
	var id string
	defaulted := func(want ...string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			o, err := sim.Client.Get(context.Background(), "datastores", id)
			if err != nil {
				return err
			}
			if !slices.Equal(o.Defaulted, want) || o.Spec["memory_mb"] != 1024.0 {
				return fmt.Errorf("datastore %s: defaulted %v, memory_mb %v; want %v, 1024", id, o.Defaulted, o.Spec["memory_mb"], want)
			}
			return nil
		}
	}
	steps := []resource.TestStep{{
		Config: sim.config(writtenDefaults(false, false)),
		Check:  resource.ComposeTestCheckFunc(captureID("lifecycle_object.d", &id), defaulted("zones[1].count")),
	}}
	steps = append(steps, importOf(sim.config(writtenDefaults(false, false)), "lifecycle_object.d", "lifecycle_object.e")...)
	// Written out, then a default dropped again: each an update of the state (the object's
	// values stay), recorded by the simulator, and imported as written.
	for _, tt := range []struct {
		cfg  string
		want []string
	}{{writtenDefaults(true, false), []string{}}, {writtenDefaults(true, true), []string{"memory_mb"}}} {
		steps = append(steps, resource.TestStep{
			Config: sim.config(tt.cfg),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("lifecycle_object.d", plancheck.ResourceActionUpdate),
			}},
			Check: defaulted(tt.want...),
		})
		steps = append(steps, importOf(sim.config(tt.cfg), "lifecycle_object.d")...)
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: providers, Steps: steps})
}
