package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

const mciAddr = "lifecycle_mci.infra"

// mciConfig is an MCI of a web subgroup on AWS and a db subgroup on GCP.
func mciConfig(sim *testSim, status string, web, db int) string {
	st := ""
	if status != "" {
		st = fmt.Sprintf("\n  status = %q", status)
	}
	return sim.config(fmt.Sprintf(`resource "lifecycle_mci" "infra" {
  name = "infra"%s

  subgroup {
    name   = "web"
    count  = %d
    csp    = "aws"
    region = "us-east-1"
    spec   = "t3.small"
    image  = "ubuntu22.04"
  }
  subgroup {
    name   = "db"
    count  = %d
    csp    = "gcp"
    region = "asia-northeast3"
  }
}`, st, web, db))
}

// expectMCIStatus checks the aggregated status text and the count of VMs.
func expectMCIStatus(text string, total int) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_text"), knownvalue.StringExact(text)),
		statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_count").AtMapKey("total"), knownvalue.Int64Exact(int64(total))),
		statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms"), knownvalue.ListSizeExact(total)),
		statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("target_action"), knownvalue.StringExact("None")),
	}
}

// mciVMsOnServer lists an MCI's VMs on the simulator, by name.
func mciVMsOnServer(t *testing.T, sim *testSim, mciID string) []client.Object {
	t.Helper()
	vms, err := sim.Client.ListAll(context.Background(), "vms", client.ListOptions{ParentID: mciID})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(vms, func(a, b client.Object) int { return nameIndexOf(a.Name) - nameIndexOf(b.Name) })
	return vms
}

// Create with two subgroups on two clouds, suspend the whole MCI, import it.
func TestAccMCI_createSuspendImport(t *testing.T) {
	sim := newTestSim(t)
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		// Destroy terminates the MCI, then removes it with its VMs.
		CheckDestroy: func(*terraform.State) error {
			return expectGone(sim, "mcis", id)
		},
		Steps: []resource.TestStep{
			{
				Config: mciConfig(sim, "", 2, 1),
				Check:  captureID(mciAddr, &id),
				ConfigStateChecks: append(expectMCIStatus("Running:3 (R:3/3)", 3),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status"), knownvalue.StringExact("Running")),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("state"), knownvalue.StringExact("Running")),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_count").AtMapKey("running"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("target_status"), knownvalue.StringExact("None")),
					// In configuration order: the web block first, then db; by number inside one.
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("infra-web-1"), "subgroup": knownvalue.StringExact("web"),
						"csp": knownvalue.StringExact("aws"), "status": knownvalue.StringExact("Running"),
					})),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(1), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("infra-web-2"), "region": knownvalue.StringExact("us-east-1"),
					})),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(2), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("infra-db-1"), "subgroup": knownvalue.StringExact("db"), "csp": knownvalue.StringExact("gcp"),
					})),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("subgroup").AtSliceIndex(1).AtMapKey("count"), knownvalue.Int64Exact(1)),
				),
			},
			{
				Config: mciConfig(sim, "Suspended", 2, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(mciAddr, plancheck.ResourceActionUpdate),
					// Suspending keeps every VM: their IDs and names stay known, so nothing built
					// from them is replaced; their statuses are known after apply.
					plancheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(0).AtMapKey("id"), knownvalue.NotNull()),
					plancheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(2).AtMapKey("name"), knownvalue.StringExact("infra-db-1")),
					plancheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(2).AtMapKey("csp"), knownvalue.StringExact("gcp")),
					plancheck.ExpectUnknownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(0).AtMapKey("status")),
				}},
				ConfigStateChecks: append(expectMCIStatus("Suspended:3 (R:0/3)", 3),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("state"), knownvalue.StringExact("Suspended")),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_count").AtMapKey("suspended"), knownvalue.Int64Exact(3)),
				),
				Check: func(*terraform.State) error { return expectActions(sim, "mcis", id, "create", "suspend") },
			},
			{
				ResourceName:            mciAddr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// A VM create fault gives Partial-Running: the apply succeeds (a warning, not an error, so the
// MCI is not tainted), the state shows the shortfall, and the next apply refines the failed VM
// and provisions a replacement in place.
func TestAccMCI_partialFailureConverges(t *testing.T) {
	sim := newTestSim(t)
	var id string
	var failedID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "vm", Action: "create", Mode: "fail", Count: 1, Message: "quota exceeded"})
				},
				Config: mciConfig(sim, "", 2, 1),
				Check: resource.ComposeTestCheckFunc(captureID(mciAddr, &id), func(*terraform.State) error {
					for _, vm := range mciVMsOnServer(t, sim, id) {
						if vm.State == "Failed" {
							failedID = vm.ID
						}
					}
					if failedID == "" {
						return fmt.Errorf("no VM of mci %s failed", id)
					}
					return nil
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_text"), knownvalue.StringExact("Partial-Running:2 (R:2/3)")),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_count").AtMapKey("failed"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("state"), knownvalue.StringExact("Running")),
				},
				// The refresh after the apply finds the failed VM: the next plan converges.
				ExpectNonEmptyPlan: true,
			},
			{
				Config: mciConfig(sim, "", 2, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(mciAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(mciAddr, tfjsonpath.New("status_text")),
				}},
				ConfigStateChecks: append(expectMCIStatus("Running:3 (R:3/3)", 3),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_count").AtMapKey("failed"), knownvalue.Int64Exact(0)),
				),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return expectActions(sim, "mcis", id, "create", "refine", "scale") },
					func(*terraform.State) error { return expectGone(sim, "vms", failedID) },
				),
			},
			{Config: mciConfig(sim, "", 2, 1), PlanOnly: true},
		},
	})
}

// A VM suspended outside Terraform is drift: the plan is an in-place update that resumes it.
// A Partial-Suspended MCI asked to be Running resumes its suspended VMs.
func TestAccMCI_driftOfOneVM(t *testing.T) {
	sim := newTestSim(t)
	var id string
	vm := func(i int) string { return mciVMsOnServer(t, sim, id)[i].ID }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: mciConfig(sim, "", 2, 1), Check: captureID(mciAddr, &id)},
			{
				PreConfig: func() { sim.act(t, "vms", vm(0), "suspend") },
				Config:    mciConfig(sim, "", 2, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectPriorState(mciAddr, "status_text", "Partial-Running:2 (R:2/3)"),
					plancheck.ExpectResourceAction(mciAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: expectMCIStatus("Running:3 (R:3/3)", 3),
				Check: func(*terraform.State) error {
					return expectActions(sim, "vms", vm(0), "create", "suspend", "resume")
				},
			},
			{Config: mciConfig(sim, "Suspended", 2, 1), ConfigStateChecks: expectMCIStatus("Suspended:3 (R:0/3)", 3)},
			{
				PreConfig: func() { sim.act(t, "vms", vm(0), "resume") },
				Config:    mciConfig(sim, "Running", 2, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectPriorState(mciAddr, "status_text", "Partial-Suspended:2 (R:1/3)"),
					plancheck.ExpectResourceAction(mciAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: expectMCIStatus("Running:3 (R:3/3)", 3),
				Check:             func(*terraform.State) error { return expectActions(sim, "mcis", id, "suspend", "resume") },
			},
		},
	})
}

// Changing a subgroup's count scales it in place, up and down.
func TestAccMCI_scaleSubgroup(t *testing.T) {
	sim := newTestSim(t)
	var id string
	inPlace := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(mciAddr, plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: mciConfig(sim, "", 1, 1), Check: captureID(mciAddr, &id)},
			{
				Config: mciConfig(sim, "", 3, 1), ConfigPlanChecks: inPlace,
				ConfigStateChecks: append(expectMCIStatus("Running:4 (R:4/4)", 4),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(2).AtMapKey("name"), knownvalue.StringExact("infra-web-3"))),
			},
			{
				Config: mciConfig(sim, "", 1, 0), ConfigPlanChecks: inPlace,
				ConfigStateChecks: append(expectMCIStatus("Running:1 (R:1/1)", 1),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("vms").AtSliceIndex(0).AtMapKey("name"), knownvalue.StringExact("infra-web-1"))),
				Check: func(*terraform.State) error { return expectActions(sim, "mcis", id, "create", "scale", "scale") },
			},
			{Config: mciConfig(sim, "", 1, 0), PlanOnly: true},
		},
	})
}

// Every VM failing gives a Failed MCI: the create is an error (tainted), the next apply
// replaces it, destroying the Failed MCI with a forced terminate. A status no route reaches
// from where the MCI stands (Terminated) plans a replacement.
func TestAccMCI_failedAndPlanValidation(t *testing.T) {
	sim := newTestSim(t)
	var failed client.FaultRule
	var first, second string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					failed = sim.addFault(t, client.FaultRule{Kind: "vm", Action: "create", Mode: "fail", Message: "no capacity"})
				},
				Config:      mciConfig(sim, "", 1, 1),
				ExpectError: errorLike(`every VM failed:.*infra-web-1.*no capacity`),
			},
			{
				PreConfig: func() {
					objs := expectCount(t, sim, "mcis", 1)
					first = objs[0].ID
					if err := sim.Engine.Faults().Delete(context.Background(), "", failed.ID); err != nil {
						t.Fatal(err)
					}
				},
				Config: mciConfig(sim, "", 1, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(mciAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: expectMCIStatus("Running:2 (R:2/2)", 2),
				Check: resource.ComposeTestCheckFunc(captureID(mciAddr, &second),
					// The Failed MCI was terminated (forced) and removed with its VMs.
					func(*terraform.State) error { return expectGone(sim, "mcis", first) },
					func(*terraform.State) error {
						return expectActions(sim, "mcis", first, "create", "terminate", "delete")
					}),
			},
			{
				// Terminated out of band: no action leads back to Running, a new MCI gets
				// there, so the plan replaces it.
				PreConfig:          func() { sim.act(t, "mcis", second, "terminate") },
				Config:             mciConfig(sim, "Running", 1, 1),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(mciAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
	})
}

// Data sources read an MCI (with its aggregated status and VMs) and one of its VMs.
func TestAccMCI_dataSources(t *testing.T) {
	sim := newTestSim(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: mciConfig(sim, "", 1, 1) + `
data "lifecycle_mci" "by_name" {
  name = lifecycle_mci.infra.name
}

data "lifecycle_vm" "first" {
  id = lifecycle_mci.infra.vms[0].id
}
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.lifecycle_mci.by_name", tfjsonpath.New("status_text"), knownvalue.StringExact("Running:2 (R:2/2)")),
					statecheck.ExpectKnownValue("data.lifecycle_mci.by_name", tfjsonpath.New("vms"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue("data.lifecycle_mci.by_name", tfjsonpath.New("subgroup").AtSliceIndex(0).AtMapKey("csp"), knownvalue.StringExact("aws")),
					statecheck.ExpectKnownValue("data.lifecycle_vm.first", tfjsonpath.New("name"), knownvalue.StringExact("infra-web-1")),
					statecheck.ExpectKnownValue("data.lifecycle_vm.first", tfjsonpath.New("csp"), knownvalue.StringExact("aws")),
					statecheck.ExpectKnownValue("data.lifecycle_vm.first", tfjsonpath.New("state"), knownvalue.StringExact("Running")),
					statecheck.CompareValuePairs("data.lifecycle_vm.first", tfjsonpath.New("mci_id"), mciAddr, tfjsonpath.New("id"), compare.ValuesSame()),
				},
			},
		},
	})
}

// mciModel is a model of an MCI in the state: its VMs (subgroup/status) and subgroup counts.
func mciModel(status, text string, counts map[string]int64, vms ...[2]string) *objectModel {
	elems := []attr.Value{}
	for i, vm := range vms {
		elems = append(elems, types.ObjectValueMust(mciVMType.AttrTypes, map[string]attr.Value{
			"id": types.StringValue(fmt.Sprintf("vm-%d", i)), "name": types.StringValue(fmt.Sprintf("infra-%s-%d", vm[0], i)),
			"subgroup": types.StringValue(vm[0]), "status": types.StringValue(vm[1]),
			"csp": types.StringValue("aws"), "region": types.StringValue("r"),
		}))
	}
	groupType := types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "count": types.Int64Type}}
	var groups []attr.Value
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		groups = append(groups, types.ObjectValueMust(groupType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue(name), "count": types.Int64Value(counts[name]),
		}))
	}
	return &objectModel{
		Status:   types.StringValue(status),
		Fields:   map[string]attr.Value{"subgroup": types.ListValueMust(groupType, groups)},
		Computed: map[string]attr.Value{"vms": types.ListValueMust(mciVMType, elems), "status_text": types.StringValue(text)},
	}
}

func TestMCIPlanFromTheAggregate(t *testing.T) {
	tests := []struct {
		name         string
		state        *objectModel
		plan         *objectModel
		from         string
		wantFrom     string
		wantDescribe string
		wantConverge bool
	}{
		{
			name:     "converged",
			state:    mciModel("Running", "Running:2 (R:2/2)", map[string]int64{"web": 2}, [2]string{"web", "Running"}, [2]string{"web", "Running"}),
			plan:     mciModel("Running", "", map[string]int64{"web": 2}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Running:2 (R:2/2))",
		},
		{
			name:     "a failed VM is refined and replaced",
			state:    mciModel("Running", "Partial-Running:2 (R:2/3)", map[string]int64{"web": 3}, [2]string{"web", "Running"}, [2]string{"web", "Failed"}, [2]string{"web", "Running"}),
			plan:     mciModel("Running", "", map[string]int64{"web": 3}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Partial-Running:2 (R:2/3))", wantConverge: true,
		},
		{
			name:     "a dominant Failed with a running VM starts from Running",
			state:    mciModel("Running", "Partial-Failed:2 (R:1/3)", map[string]int64{"web": 3}, [2]string{"web", "Failed"}, [2]string{"web", "Undefined"}, [2]string{"web", "Running"}),
			plan:     mciModel("Running", "", map[string]int64{"web": 3}),
			from:     "Failed",
			wantFrom: "Running", wantDescribe: "Failed (Partial-Failed:2 (R:1/3))", wantConverge: true,
		},
		{
			name:     "every VM failed: no route from Failed",
			state:    mciModel("Failed", "Failed:1 (R:0/1)", map[string]int64{"web": 1}, [2]string{"web", "Failed"}),
			plan:     mciModel("Running", "", map[string]int64{"web": 1}),
			from:     "Failed",
			wantFrom: "Failed", wantDescribe: "Failed (Failed:1 (R:0/1))", wantConverge: true,
		},
		{
			name:     "a VM suspended out of band",
			state:    mciModel("Running", "Partial-Running:1 (R:1/2)", map[string]int64{"web": 2}, [2]string{"web", "Suspended"}, [2]string{"web", "Running"}),
			plan:     mciModel("Running", "", map[string]int64{"web": 2}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Partial-Running:1 (R:1/2))", wantConverge: true,
		},
		{
			name:     "an empty subgroup is no shortfall",
			state:    mciModel("Running", "Running:1 (R:1/1)", map[string]int64{"web": 1, "db": 0}, [2]string{"web", "Running"}),
			plan:     mciModel("Running", "", map[string]int64{"web": 1, "db": 0}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Running:1 (R:1/1))",
		},
		{
			name:     "a VM still resuming is not drift",
			state:    mciModel("Running", "Partial-Running:1 (R:1/2)", map[string]int64{"web": 2}, [2]string{"web", "Resuming"}, [2]string{"web", "Running"}),
			plan:     mciModel("Running", "", map[string]int64{"web": 2}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Partial-Running:1 (R:1/2))",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, describe, converge := mciMembers{}.plan(tt.state, tt.plan, tt.from)
			if from != tt.wantFrom || describe != tt.wantDescribe || converge != tt.wantConverge {
				t.Errorf("plan(%q) = %q, %q, %v, want %q, %q, %v", tt.name, from, describe, converge, tt.wantFrom, tt.wantDescribe, tt.wantConverge)
			}
		})
	}
}

func TestMCIShortfallWarningNamesFailedVMs(t *testing.T) {
	o := &client.Object{ID: "mci-1", Status: map[string]any{"text": "Partial-Running:2 (R:2/3)"}}
	vms := []client.Object{
		{ID: "vm-1", Name: "infra-web-1", State: "Running", Spec: map[string]any{"subgroup": "web"}},
		{ID: "vm-2", Name: "infra-web-2", State: "Failed", Spec: map[string]any{"subgroup": "web"},
			Status: map[string]any{"last_error": map[string]any{"message": "quota exceeded", "state": "Creating"}}},
	}
	var diags diag.Diagnostics
	shortfallWarning(&diags, "create", o, vms, failedVMs(vms))
	if diags.HasError() || diags.WarningsCount() != 1 {
		t.Fatalf("diags = %v, want one warning", diags)
	}
	w := diags.Warnings()[0]
	for _, want := range []string{"1 of 2 VMs of mci mci-1 failed", "infra-web-2 (vm-2, subgroup web): Failed: quota exceeded (failed in Creating)", "Partial-Running:2 (R:2/3)", "not tainted"} {
		if !strings.Contains(w.Summary()+w.Detail(), want) {
			t.Errorf("warning %q / %q does not say %q", w.Summary(), w.Detail(), want)
		}
	}
}
