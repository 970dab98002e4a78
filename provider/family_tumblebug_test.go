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

const mciAddr = "lifecycle_mci.infra"

// mciKit names what the MCI scenarios use, so that they run on lifecycle_mci and on a renamed
// copy of the mci and vm kinds loaded as user kinds (with no Go of their own).
type mciKit struct {
	// typ is the resource type's kind; block, count, group, cloud and region name the list
	// field's block, its count field, the members' item field and the limit's fields.
	typ, block, count, group, cloud, region string
	// collection and members are the collections of the kind and of its members; memberKind
	// and list name the members' kind and the computed list of them.
	collection, members, memberKind, list string
	// repair and scale are the actions removing failed members and changing counts.
	repair, scale string
	providers     map[string]func() (tfprotov6.ProviderServer, error)
	opts          []simtest.Option
}

func (k mciKit) addr() string { return "lifecycle_" + k.typ + ".infra" }

// builtinMCI is lifecycle_mci.
func builtinMCI() mciKit {
	return mciKit{typ: "mci", block: "subgroup", count: "count", group: "subgroup", cloud: "csp", region: "region",
		collection: "mcis", members: "vms", memberKind: "vm", list: "vms", repair: "refine", scale: "scale", providers: testAccProviders}
}

// fleetKit is the renamed copy of the mci and vm kinds (testdata copies.yaml); like the
// MCI's subgroups, its pools show as blocks named by the spec's item_name.
func fleetKit(t *testing.T) mciKit {
	providers, serve := userKindsTest(t, copiesFile)
	return mciKit{typ: "fleet", block: "pool", count: "size", group: "pool", cloud: "cloud", region: "zone",
		collection: "fleets", members: "units", memberKind: "unit", list: "units", repair: "prune", scale: "resize",
		providers: providers, opts: []simtest.Option{serve}}
}

// mciConfig is an MCI of a web subgroup on AWS and a db subgroup on GCP.
func mciConfig(sim *testSim, status string, web, db int) string {
	return builtinMCI().config(sim, status, web, db)
}

// config is an MCI of a web item on AWS and a db item on GCP.
func (k mciKit) config(sim *testSim, status string, web, db int) string {
	st := ""
	if status != "" {
		st = fmt.Sprintf("\n  status = %q", status)
	}
	return sim.config(fmt.Sprintf(`resource "lifecycle_%[1]s" "infra" {
  name = "infra"%[2]s

  %[3]s {
    name   = "web"
    %[4]s  = %[5]d
    %[6]s    = "aws"
    %[7]s = "us-east-1"
    spec   = "t3.small"
    image  = "ubuntu22.04"
  }
  %[3]s {
    name   = "db"
    %[4]s  = %[8]d
    %[6]s    = "gcp"
    %[7]s = "asia-northeast3"
  }
}`, k.typ, st, k.block, k.count, web, k.cloud, k.region, db))
}

// expectMCIStatus checks the aggregated status text and the count of VMs.
func expectMCIStatus(text string, total int) []statecheck.StateCheck {
	return builtinMCI().expectStatus(text, total)
}

// expectStatus checks the aggregated status text and the count of members.
func (k mciKit) expectStatus(text string, total int) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(k.addr(), tfjsonpath.New("status_text"), knownvalue.StringExact(text)),
		statecheck.ExpectKnownValue(k.addr(), tfjsonpath.New("status_count").AtMapKey("total"), knownvalue.Int64Exact(int64(total))),
		statecheck.ExpectKnownValue(k.addr(), tfjsonpath.New(k.list), knownvalue.ListSizeExact(total)),
		statecheck.ExpectKnownValue(k.addr(), tfjsonpath.New("target_action"), knownvalue.StringExact("None")),
	}
}

// membersOnServer lists the members on the simulator, by number.
func (k mciKit) membersOnServer(t *testing.T, sim *testSim, id string) []client.Object {
	t.Helper()
	out, err := sim.Client.ListAll(context.Background(), k.members, client.ListOptions{ParentID: id})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b client.Object) int { return nameIndexOf(a.Name) - nameIndexOf(b.Name) })
	return out
}

func TestAccMCI_createSuspendImport(t *testing.T) { testMCICreateSuspendImport(t, builtinMCI()) }

func TestAccMCI_partialFailureConverges(t *testing.T) {
	testMCIPartialFailureConverges(t, builtinMCI())
}

func TestAccMCI_driftOfOneVM(t *testing.T) { testMCIDriftOfOneMember(t, builtinMCI()) }

func TestAccMCI_scaleSubgroup(t *testing.T) { testMCIScaleItem(t, builtinMCI()) }

// The renamed copy of the mci and vm kinds passes the MCI scenarios as a user kind: its
// members, their grouping, repair and scaling come from its spec.

func TestAccUserKindMCICreateSuspendImport(t *testing.T) { testMCICreateSuspendImport(t, fleetKit(t)) }

func TestAccUserKindMCIPartialFailureConverges(t *testing.T) {
	testMCIPartialFailureConverges(t, fleetKit(t))
}

func TestAccUserKindMCIDriftOfOneMember(t *testing.T) { testMCIDriftOfOneMember(t, fleetKit(t)) }

func TestAccUserKindMCIScaleItem(t *testing.T) { testMCIScaleItem(t, fleetKit(t)) }

// Create with two subgroups on two clouds, suspend the whole MCI, import it.
func testMCICreateSuspendImport(t *testing.T, k mciKit) {
	sim := newTestSim(t, k.opts...)
	var id string
	addr := k.addr()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: k.providers,
		// Destroy terminates the MCI, then removes it with its VMs.
		CheckDestroy: func(*terraform.State) error {
			return expectGone(sim, k.collection, id)
		},
		Steps: []resource.TestStep{
			{
				Config: k.config(sim, "", 2, 1),
				Check:  captureID(addr, &id),
				ConfigStateChecks: append(k.expectStatus("Running:3 (R:3/3)", 3),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status"), knownvalue.StringExact("Running")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("Running")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status_count").AtMapKey("running"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("target_status"), knownvalue.StringExact("None")),
					// In configuration order: the web block first, then db; by number inside one.
					statecheck.ExpectKnownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("infra-web-1"), k.group: knownvalue.StringExact("web"),
						k.cloud: knownvalue.StringExact("aws"), "status": knownvalue.StringExact("Running"),
					})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(1), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("infra-web-2"), k.region: knownvalue.StringExact("us-east-1"),
					})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(2), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("infra-db-1"), k.group: knownvalue.StringExact("db"), k.cloud: knownvalue.StringExact("gcp"),
					})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New(k.block).AtSliceIndex(1).AtMapKey(k.count), knownvalue.Int64Exact(1)),
				),
			},
			{
				Config: k.config(sim, "Suspended", 2, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					// Suspending keeps every VM: their IDs and names stay known, so nothing built
					// from them is replaced; their statuses are known after apply.
					plancheck.ExpectKnownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(0).AtMapKey("id"), knownvalue.NotNull()),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(2).AtMapKey("name"), knownvalue.StringExact("infra-db-1")),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(2).AtMapKey(k.cloud), knownvalue.StringExact("gcp")),
					plancheck.ExpectUnknownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(0).AtMapKey("status")),
				}},
				ConfigStateChecks: append(k.expectStatus("Suspended:3 (R:0/3)", 3),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("Suspended")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status_count").AtMapKey("suspended"), knownvalue.Int64Exact(3)),
				),
				Check: func(*terraform.State) error { return expectActions(sim, k.collection, id, "create", "suspend") },
			},
			{
				ResourceName:            addr,
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
func testMCIPartialFailureConverges(t *testing.T, k mciKit) {
	sim := newTestSim(t, k.opts...)
	var id string
	var failedID string
	addr := k.addr()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: k.providers,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: k.memberKind, Action: "create", Mode: "fail", Count: 1, Message: "quota exceeded"})
				},
				Config: k.config(sim, "", 2, 1),
				Check: resource.ComposeTestCheckFunc(captureID(addr, &id), func(*terraform.State) error {
					for _, vm := range k.membersOnServer(t, sim, id) {
						if vm.State == "Failed" {
							failedID = vm.ID
						}
					}
					if failedID == "" {
						return fmt.Errorf("no member of %s %s failed", k.typ, id)
					}
					return nil
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status_text"), knownvalue.StringExact("Partial-Running:2 (R:2/3)")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status_count").AtMapKey("failed"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("Running")),
				},
				// The refresh after the apply finds the failed VM: the next plan converges.
				ExpectNonEmptyPlan: true,
			},
			{
				Config: k.config(sim, "", 2, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(addr, tfjsonpath.New("status_text")),
				}},
				ConfigStateChecks: append(k.expectStatus("Running:3 (R:3/3)", 3),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status_count").AtMapKey("failed"), knownvalue.Int64Exact(0)),
				),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return expectActions(sim, k.collection, id, "create", k.repair, k.scale) },
					func(*terraform.State) error { return expectGone(sim, k.members, failedID) },
				),
			},
			{Config: k.config(sim, "", 2, 1), PlanOnly: true},
		},
	})
}

// A VM suspended outside Terraform is drift: the plan is an in-place update that resumes it.
// A Partial-Suspended MCI asked to be Running resumes its suspended VMs.
func testMCIDriftOfOneMember(t *testing.T, k mciKit) {
	sim := newTestSim(t, k.opts...)
	var id string
	addr := k.addr()
	vm := func(i int) string { return k.membersOnServer(t, sim, id)[i].ID }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: k.providers,
		Steps: []resource.TestStep{
			{Config: k.config(sim, "", 2, 1), Check: captureID(addr, &id)},
			{
				PreConfig: func() { sim.act(t, k.members, vm(0), "suspend") },
				Config:    k.config(sim, "", 2, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectPriorState(addr, "status_text", "Partial-Running:2 (R:2/3)"),
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: k.expectStatus("Running:3 (R:3/3)", 3),
				Check: func(*terraform.State) error {
					return expectActions(sim, k.members, vm(0), "create", "suspend", "resume")
				},
			},
			{Config: k.config(sim, "Suspended", 2, 1), ConfigStateChecks: k.expectStatus("Suspended:3 (R:0/3)", 3)},
			{
				PreConfig: func() { sim.act(t, k.members, vm(0), "resume") },
				Config:    k.config(sim, "Running", 2, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectPriorState(addr, "status_text", "Partial-Suspended:2 (R:1/3)"),
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: k.expectStatus("Running:3 (R:3/3)", 3),
				Check:             func(*terraform.State) error { return expectActions(sim, k.collection, id, "suspend", "resume") },
			},
		},
	})
}

// Changing a subgroup's count scales it in place, up and down.
func testMCIScaleItem(t *testing.T, k mciKit) {
	sim := newTestSim(t, k.opts...)
	var id string
	addr := k.addr()
	inPlace := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: k.providers,
		Steps: []resource.TestStep{
			{Config: k.config(sim, "", 1, 1), Check: captureID(addr, &id)},
			{
				Config: k.config(sim, "", 3, 1), ConfigPlanChecks: inPlace,
				ConfigStateChecks: append(k.expectStatus("Running:4 (R:4/4)", 4),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(2).AtMapKey("name"), knownvalue.StringExact("infra-web-3"))),
			},
			{
				Config: k.config(sim, "", 1, 0), ConfigPlanChecks: inPlace,
				ConfigStateChecks: append(k.expectStatus("Running:1 (R:1/1)", 1),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New(k.list).AtSliceIndex(0).AtMapKey("name"), knownvalue.StringExact("infra-web-1"))),
				Check: func(*terraform.State) error { return expectActions(sim, k.collection, id, "create", k.scale, k.scale) },
			},
			{Config: k.config(sim, "", 1, 0), PlanOnly: true},
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
				ExpectError: errorLike(`every vm failed:.*infra-web-1.*no capacity`),
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

// mciMembers is the built-in mci kind's members capability, derived from its spec.
func mciMembers(t *testing.T) specMembers {
	t.Helper()
	for _, cfg := range typedKinds() {
		if m, ok := cfg.members(); ok && cfg.kind == "mci" {
			return m.(specMembers)
		}
	}
	t.Fatal("the mci kind has no members")
	return specMembers{}
}

// mciModel is a model of an MCI in the state: its VMs (subgroup/status) and subgroup counts.
func mciModel(t *testing.T, status, text string, counts map[string]int64, vms ...[2]string) *objectModel {
	vmType := mciMembers(t).memberType()
	elems := []attr.Value{}
	for i, vm := range vms {
		elems = append(elems, types.ObjectValueMust(vmType.AttrTypes, map[string]attr.Value{
			"id": types.StringValue(fmt.Sprintf("vm-%d", i)), "name": types.StringValue(fmt.Sprintf("infra-%s-%d", vm[0], i)),
			"subgroup": types.StringValue(vm[0]), "status": types.StringValue(vm[1]),
			"csp": types.StringValue("aws"), "region": types.StringValue("r"),
		}))
	}
	groupType := types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "count": types.Float64Type}}
	var groups []attr.Value
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		groups = append(groups, types.ObjectValueMust(groupType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue(name), "count": types.Float64Value(float64(counts[name])),
		}))
	}
	return &objectModel{
		Status:   types.StringValue(status),
		Fields:   map[string]attr.Value{"subgroup": types.ListValueMust(groupType, groups)},
		Computed: map[string]attr.Value{"vms": types.ListValueMust(vmType, elems), "status_text": types.StringValue(text)},
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
			state:    mciModel(t, "Running", "Running:2 (R:2/2)", map[string]int64{"web": 2}, [2]string{"web", "Running"}, [2]string{"web", "Running"}),
			plan:     mciModel(t, "Running", "", map[string]int64{"web": 2}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Running:2 (R:2/2))",
		},
		{
			name:     "a failed VM is refined and replaced",
			state:    mciModel(t, "Running", "Partial-Running:2 (R:2/3)", map[string]int64{"web": 3}, [2]string{"web", "Running"}, [2]string{"web", "Failed"}, [2]string{"web", "Running"}),
			plan:     mciModel(t, "Running", "", map[string]int64{"web": 3}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Partial-Running:2 (R:2/3))", wantConverge: true,
		},
		{
			name:     "a dominant Failed with a running VM starts from Running",
			state:    mciModel(t, "Running", "Partial-Failed:2 (R:1/3)", map[string]int64{"web": 3}, [2]string{"web", "Failed"}, [2]string{"web", "Undefined"}, [2]string{"web", "Running"}),
			plan:     mciModel(t, "Running", "", map[string]int64{"web": 3}),
			from:     "Failed",
			wantFrom: "Running", wantDescribe: "Failed (Partial-Failed:2 (R:1/3))", wantConverge: true,
		},
		{
			name:     "every VM failed: no route from Failed",
			state:    mciModel(t, "Failed", "Failed:1 (R:0/1)", map[string]int64{"web": 1}, [2]string{"web", "Failed"}),
			plan:     mciModel(t, "Running", "", map[string]int64{"web": 1}),
			from:     "Failed",
			wantFrom: "Failed", wantDescribe: "Failed (Failed:1 (R:0/1))", wantConverge: true,
		},
		{
			name:     "a VM suspended out of band",
			state:    mciModel(t, "Running", "Partial-Running:1 (R:1/2)", map[string]int64{"web": 2}, [2]string{"web", "Suspended"}, [2]string{"web", "Running"}),
			plan:     mciModel(t, "Running", "", map[string]int64{"web": 2}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Partial-Running:1 (R:1/2))", wantConverge: true,
		},
		{
			name:     "an empty subgroup is no shortfall",
			state:    mciModel(t, "Running", "Running:1 (R:1/1)", map[string]int64{"web": 1, "db": 0}, [2]string{"web", "Running"}),
			plan:     mciModel(t, "Running", "", map[string]int64{"web": 1, "db": 0}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Running:1 (R:1/1))",
		},
		{
			name:     "a VM still resuming is not drift",
			state:    mciModel(t, "Running", "Partial-Running:1 (R:1/2)", map[string]int64{"web": 2}, [2]string{"web", "Resuming"}, [2]string{"web", "Running"}),
			plan:     mciModel(t, "Running", "", map[string]int64{"web": 2}),
			from:     "Running",
			wantFrom: "Running", wantDescribe: "Running (Partial-Running:1 (R:1/2))",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, describe, converge := mciMembers(t).plan(tt.state, tt.plan, tt.from)
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
	m := mciMembers(t)
	m.shortfallWarning(&diags, "create", o, vms, m.failed(vms))
	if diags.HasError() || diags.WarningsCount() != 1 {
		t.Fatalf("diags = %v, want one warning", diags)
	}
	w := diags.Warnings()[0]
	for _, want := range []string{"1 of 2 vm objects of mci mci-1 failed", "infra-web-2 (vm-2, subgroup web): Failed: quota exceeded (failed in Creating)", "Partial-Running:2 (R:2/3)", "not tainted"} {
		if !strings.Contains(w.Summary()+w.Detail(), want) {
			t.Errorf("warning %q / %q does not say %q", w.Summary(), w.Detail(), want)
		}
	}
}

// TestAccMCI_hold: status = "Holding" holds the MCI's create (CB-Tumblebug's option=hold): it
// is made with no VMs and waits; status = "Running" continues it (its VMs made), and a held
// MCI taken out of the configuration is withdrawn. No route leads back into Holding, and the
// plan says so.
func TestAccMCI_hold(t *testing.T) {
	sim := newTestSim(t)
	var infra, spare string
	spareConfig := `

resource "lifecycle_mci" "spare" {
  name   = "spare"
  status = "Holding"
  subgroup {
    name   = "web"
    count  = 1
    csp    = "aws"
    region = "us-east-1"
  }
}`
	held := func(addr string) []statecheck.StateCheck {
		return []statecheck.StateCheck{
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("Holding")),
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("status_text"), knownvalue.StringExact("Holding:0 (R:0/0)")),
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("vms"), knownvalue.ListSizeExact(0)),
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config:            mciConfig(sim, "Holding", 2, 1) + spareConfig,
				ConfigStateChecks: append(held(mciAddr), held("lifecycle_mci.spare")...),
				Check: resource.ComposeTestCheckFunc(captureID(mciAddr, &infra), captureID("lifecycle_mci.spare", &spare),
					func(*terraform.State) error {
						if vms := builtinMCI().membersOnServer(t, sim, infra); len(vms) != 0 {
							return fmt.Errorf("a held MCI has VMs %v", vms)
						}
						return nil
					}),
			},
			{
				Config:            mciConfig(sim, "Running", 2, 1),
				ConfigStateChecks: expectMCIStatus("Running:3 (R:3/3)", 3),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return expectActions(sim, "mcis", infra, "continue") },
					func(*terraform.State) error { return expectGone(sim, "mcis", spare) }),
			},
			{
				Config:      mciConfig(sim, "Holding", 2, 1),
				PlanOnly:    true,
				ExpectError: errorLike(`no sequence of actions leads from Running to Holding`),
			},
		},
	})
}
