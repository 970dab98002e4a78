package provider

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

const savannaAddr = "lifecycle_cluster.hadoop"

// clusterConfig is a Savanna cluster with a master and a worker group of `workers`.
func clusterConfig(workers int, extra string) string {
	return fmt.Sprintf(`resource "lifecycle_cluster" "hadoop" {
  name           = "analytics"
  plugin_name    = "vanilla"
  hadoop_version = "2.7.1"
%s
  node_group {
    name      = "master"
    flavor    = "m1.large"
    processes = ["namenode"]
  }
  node_group {
    name      = "worker"
    flavor    = "m1.medium"
    count     = %d
    processes = ["datanode"]
  }
}`, extra, workers)
}

func workersAre(n int64) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(savannaAddr, tfjsonpath.New("node_group").AtSliceIndex(1).AtMapKey("count"), knownvalue.Int64Exact(n))
}

// clusterStates lists the states a cluster's history went through.
func clusterStates(s *testSim, id string) ([]string, error) {
	evs, err := s.Client.Events(context.Background(), "clusters", id)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.To)
	}
	return out, nil
}

// TestAccClusterCreateScaleImport: a create passes the eight phases; counts scale in place, up
// and down; a flavor change plans a replacement; import.
func TestAccClusterCreateScaleImport(t *testing.T) {
	sim := newTestSim(t)
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(clusterConfig(3, "")),
				Check: resource.ComposeTestCheckFunc(captureID(savannaAddr, &id), func(*terraform.State) error {
					got, err := clusterStates(sim, id)
					want := []string{"Validating", "InfraUpdating", "Spawning", "Waiting", "Preparing", "Configuring", "Starting", "Active"}
					if err != nil || !slices.Equal(got, want) {
						return fmt.Errorf("create went %v (%v), want %v", got, err, want)
					}
					return nil
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(savannaAddr, tfjsonpath.New("state"), knownvalue.StringExact("Active")),
					statecheck.ExpectKnownValue(savannaAddr, tfjsonpath.New("node_group").AtSliceIndex(0).AtMapKey("count"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(savannaAddr, tfjsonpath.New("last_error"), knownvalue.StringExact("")),
					workersAre(3),
				},
			},
			{
				Config: sim.config(clusterConfig(5, "")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(savannaAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{workersAre(5),
					statecheck.ExpectKnownValue(savannaAddr, tfjsonpath.New("state"), knownvalue.StringExact("Active"))},
				Check: func(*terraform.State) error { return expectActions(sim, "clusters", id, "create", "scale") },
			},
			{
				Config:            sim.config(clusterConfig(2, "")),
				ConfigStateChecks: []statecheck.StateCheck{workersAre(2)},
				Check:             func(*terraform.State) error { return expectActions(sim, "clusters", id, "create", "scale", "scale") },
			},
			{
				ResourceName:            savannaAddr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Sahara cannot change a node group's flavor in place: the plan replaces.
				Config: sim.config(`resource "lifecycle_cluster" "hadoop" {
  name           = "analytics"
  plugin_name    = "vanilla"
  hadoop_version = "2.7.1"
  node_group {
    name      = "master"
    flavor    = "m1.xlarge"
    processes = ["namenode"]
  }
  node_group {
    name      = "worker"
    flavor    = "m1.medium"
    count     = 2
    processes = ["datanode"]
  }
}`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(savannaAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, "clusters", id) },
	})
}

// TestAccClusterScaleFailureRollsBack: a failed scale rolls back; the apply fails with the
// recorded error, the state keeps the old counts, and the next apply scales again.
func TestAccClusterScaleFailureRollsBack(t *testing.T) {
	sim := newTestSim(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: sim.config(clusterConfig(2, ""))},
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "cluster", Action: "scale", Phase: "Adding Instances", Mode: "fail", Count: 1, Message: "quota of instances exceeded"})
				},
				Config:      sim.config(clusterConfig(4, "")),
				ExpectError: errorLike(`Error updating cluster.*quota of instances exceeded`),
			},
			{
				// The state kept the old counts: the scale is offered again.
				Config:             sim.config(clusterConfig(4, "")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(savannaAddr, plancheck.ResourceActionUpdate),
					expectPriorState(savannaAddr, "state", "Active"),
				}},
			},
			{
				Config: sim.config(clusterConfig(4, "")),
				ConfigStateChecks: []statecheck.StateCheck{workersAre(4),
					statecheck.ExpectKnownValue(savannaAddr, tfjsonpath.New("last_error"), knownvalue.StringExact(""))},
			},
		},
	})
}

// TestAccClusterErrorIsReplaced: after a fatal scale failure the cluster is in Error and
// untainted; a cluster leaves Error only by deletion, so the next plan replaces it (with a
// scale or without).
func TestAccClusterErrorIsReplaced(t *testing.T) {
	sim := newTestSim(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: sim.config(clusterConfig(2, ""))},
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "cluster", Action: "scale", Mode: "fail", Fatal: true, Count: 1, Message: "rollback failed"})
				},
				Config:      sim.config(clusterConfig(3, "")),
				ExpectError: errorLike(`rollback failed`),
			},
			{
				Config:             sim.config(clusterConfig(4, "")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(savannaAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
			{
				Config: sim.config(clusterConfig(4, "")),
				ConfigStateChecks: []statecheck.StateCheck{workersAre(4),
					statecheck.ExpectKnownValue(savannaAddr, tfjsonpath.New("state"), knownvalue.StringExact("Active"))},
			},
		},
	})
}

// TestAccClusterDeleteWhileSpawning: a create interrupted by its timeout in Spawning leaves the
// cluster in the state; destroy deletes it from there.
func TestAccClusterDeleteWhileSpawning(t *testing.T) {
	sim := newTestSim(t)
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "cluster", Phase: "Spawning", Mode: "slow", Factor: 20000})
				},
				Config:      sim.config(clusterConfig(2, "  timeouts {\n    create = \"3s\"\n  }\n")),
				ExpectError: errorLike(`(?s)Spawning`),
			},
			{
				PreConfig: func() {
					cs := expectCount(t, sim, "clusters", 1)
					if id = cs[0].ID; cs[0].State != "Spawning" {
						t.Fatalf("cluster after the timed-out create is %s, want Spawning", cs[0].State)
					}
				},
				Config:  sim.config(clusterConfig(2, "  timeouts {\n    create = \"3s\"\n  }\n")),
				Destroy: true,
				Check:   func(*terraform.State) error { return expectGone(sim, "clusters", id) },
			},
		},
	})
}
