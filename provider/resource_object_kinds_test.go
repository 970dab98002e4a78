package provider

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// TestAccObjectExampleApplies applies the lifecycle_object example rendered into the docs, as
// it is: the cloudlet's declared defaults (num_dynamic_ips, platform_type, version) are filled
// in by the simulator and must not be drift. The harness plans again after the apply and fails
// on any change.
func TestAccObjectExampleApplies(t *testing.T) {
	example, err := os.ReadFile("../examples/resources/lifecycle_object/resource.tf")
	if err != nil {
		t.Fatal(err)
	}
	sim := newTestSim(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{{
			Config: sim.config(string(example)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("lifecycle_object.cloudlet", tfjsonpath.New("spec"), knownvalue.Null()),
				statecheck.ExpectKnownValue("lifecycle_object.cloudlet", tfjsonpath.New("effective_spec").AtMapKey("platform_type"), knownvalue.NotNull()),
				statecheck.ExpectKnownValue("lifecycle_object.cluster", tfjsonpath.New("spec"),
					knownvalue.MapExact(map[string]knownvalue.Check{"flavor": knownvalue.StringExact("m4.small")})),
				statecheck.ExpectKnownValue("lifecycle_object.cluster", tfjsonpath.New("state"), knownvalue.StringExact("Ready")),
			},
		}},
	})
}

// TestAccObjectDefaultsAndUnknownSpec manages kinds whose fields have defaults through
// lifecycle_object, with a spec element known only after apply (the image's ID): the plan
// accepts it, the simulator checks it at apply, and neither the defaults nor the unknown make
// drift. A spec that writes a default out, and one that drops it again, change nothing on the
// server.
func TestAccObjectDefaultsAndUnknownSpec(t *testing.T) {
	sim := newTestSim(t)
	cfg := func(machineSpec string) string {
		return sim.config(`
resource "lifecycle_object" "account" {
  kind = "account"
  name = "acme"
}

resource "lifecycle_object" "space" {
  kind      = "cloudspace"
  name      = "web"
  parent_id = lifecycle_object.account.id
}

resource "lifecycle_object" "image" {
  kind = "image"
  name = "ubuntu"
}

resource "lifecycle_object" "vm" {
  kind      = "machine"
  name      = "vm1"
  parent_id = lifecycle_object.space.id
  spec = {` + machineSpec + `}
}
`)
	}
	const addr = "lifecycle_object.vm"
	sameID := statecheck.CompareValue(compare.ValuesSame())
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: cfg(`
    image_id = lifecycle_object.image.id
  `),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(addr, tfjsonpath.New("spec").AtMapKey("image_id")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("effective_spec").AtMapKey("vcpus"), knownvalue.StringExact("1")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
					statecheck.CompareValuePairs(addr, tfjsonpath.New("spec").AtMapKey("image_id"),
						"lifecycle_object.image", tfjsonpath.New("id"), compare.ValuesSame()),
					sameID.AddStateValue(addr, tfjsonpath.New("id")),
				},
				Check: captureID(addr, &id),
			},
			{
				// The default written out: the spec attribute changes, the object does not.
				Config: cfg(`
    image_id = lifecycle_object.image.id
    vcpus    = "1"
  `),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("effective_spec").AtMapKey("vcpus"), knownvalue.StringExact("1")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(addr, tfjsonpath.New("id"))},
			},
			{
				// And dropped again: the value is the default, nothing is sent.
				Config: cfg(`
    image_id = lifecycle_object.image.id
  `),
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(addr, tfjsonpath.New("id"))},
				Check: func(*terraform.State) error {
					return expectActions(sim, "machines", id, "deploy")
				},
			},
		},
	})
}

// TestAccObjectImportEveryKind imports an object of every built-in kind that can be managed on
// its own into lifecycle_object, with import blocks, from a configuration that sets the same
// name, parent and spec values the objects were made with: the plan only imports, and the
// harness's plan after the apply is empty.
func TestAccObjectImportEveryKind(t *testing.T) {
	sim := newTestSim(t)
	var ic importConfigs
	for _, m := range createEveryKind(t, sim) {
		var res strings.Builder
		fmt.Fprintf(&res, "resource \"lifecycle_object\" %q {\n  kind = %q\n  name = %q\n", m.kind.Name, m.kind.Name, m.obj.Name)
		if m.kind.Parent != nil {
			fmt.Fprintf(&res, "  parent_id = lifecycle_object.%s.id\n", m.kind.Parent.Kind)
		}
		// The spec as its author wrote it: the keys sent, and in them nothing the simulator
		// filled in (an item's defaulted count), with the values as it holds them (its
		// normalised form of a value).
		if m.obj.Defaulted == nil {
			t.Fatalf("%s %s: the simulator does not say which values it filled in", m.kind.Name, m.obj.ID)
		}
		written := lifecycle.WithoutPaths(m.obj.Spec, m.obj.Defaulted)
		keys := slices.Sorted(maps.Keys(written))
		for _, key := range keys {
			if _, sent := m.spec[key]; !sent {
				t.Fatalf("%s %s: spec.%s was not sent, but is not among the defaulted %v", m.kind.Name, m.obj.ID, key, m.obj.Defaulted)
			}
		}
		if len(keys) > 0 {
			res.WriteString("  spec = {\n")
			for _, key := range keys {
				fmt.Fprintf(&res, "    %s = %s\n", key, hclNative(written[key]))
			}
			res.WriteString("  }\n")
		}
		ic.add("lifecycle_object."+m.kind.Name, m.kind.Name+"/"+m.obj.ID, res.String())
	}
	ic.test(t, sim)
}

// onlyTimeoutsChange checks that a resource's planned change is an update of its timeouts
// block alone: every other attribute keeps its known value.
func onlyTimeoutsChange(addr string) plancheck.PlanCheck { return timeoutsOnlyCheck{addr} }

type timeoutsOnlyCheck struct{ addr string }

func (c timeoutsOnlyCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr {
			continue
		}
		if !rc.Change.Actions.Update() {
			resp.Error = fmt.Errorf("%s: planned %v, want an update of its timeouts", c.addr, rc.Change.Actions)
			return
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		unknown, _ := rc.Change.AfterUnknown.(map[string]any)
		for name, v := range unknown {
			if name != "timeouts" && v != false {
				resp.Error = fmt.Errorf("%s: %s is unknown in the plan; only the timeouts should change", c.addr, name)
				return
			}
		}
		for name := range after {
			if name != "timeouts" && fmt.Sprint(before[name]) != fmt.Sprint(after[name]) {
				resp.Error = fmt.Errorf("%s: %s changes from %v to %v; only the timeouts should change", c.addr, name, before[name], after[name])
				return
			}
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.addr)
}

// hclNative is a JSON value as an HCL value: strings quoted, lists and objects as HCL.
func hclNative(v any) string {
	switch x := v.(type) {
	case string:
		return hclString(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = hclNative(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, fmt.Sprintf("%s = %s", k, hclNative(x[k])))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return stringOf(v)
}

// hclString is s as an HCL string literal: quotes and backslashes escaped, and template
// sequences (${, %{) doubled so they stay literal.
func hclString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "${", "$${", "%{", "%%{")
	return `"` + r.Replace(s) + `"`
}

// TestAccObjectMovedToTypedResource moves lifecycle_object states of a machine and of a
// cluster (nested node_group blocks) to lifecycle_machine and lifecycle_cluster with `moved`
// blocks: no replacement, the same IDs, and no change on the server.
func TestAccObjectMovedToTypedResource(t *testing.T) {
	sim := newTestSim(t)
	const generic = networkConfig + `
resource "lifecycle_object" "m" {
  kind      = "machine"
  name      = "vm1"
  parent_id = lifecycle_cloudspace.cs.id
  status    = "HALTED"
  spec = {
    image_id = lifecycle_image.img.id
    vcpus    = "2"
  }
}

resource "lifecycle_object" "c" {
  kind = "cluster"
  name = "hadoop"
  spec = {
    plugin_name    = "vanilla"
    hadoop_version = "2.7.1"
    node_groups    = jsonencode([{ name = "workers", flavor = "m1.medium", count = 2 }])
  }
}
`
	const typed = networkConfig + `
moved {
  from = lifecycle_object.m
  to   = lifecycle_machine.m
}

resource "lifecycle_machine" "m" {
  name          = "vm1"
  cloudspace_id = lifecycle_cloudspace.cs.id
  status        = "HALTED"
  image_id      = lifecycle_image.img.id
  vcpus         = 2
}

moved {
  from = lifecycle_object.c
  to   = lifecycle_cluster.c
}

resource "lifecycle_cluster" "c" {
  name           = "hadoop"
  plugin_name    = "vanilla"
  hadoop_version = "2.7.1"
  node_group {
    name   = "workers"
    flavor = "m1.medium"
    count  = 2
  }
}
`
	machineID := statecheck.CompareValue(compare.ValuesSame())
	clusterID := statecheck.CompareValue(compare.ValuesSame())
	var mid string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(generic),
				ConfigStateChecks: []statecheck.StateCheck{
					machineID.AddStateValue("lifecycle_object.m", tfjsonpath.New("id")),
					clusterID.AddStateValue("lifecycle_object.c", tfjsonpath.New("id")),
				},
				Check: captureID("lifecycle_object.m", &mid),
			},
			{
				Config: sim.config(typed),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("lifecycle_machine.m", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("lifecycle_cluster.c", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					machineID.AddStateValue("lifecycle_machine.m", tfjsonpath.New("id")),
					clusterID.AddStateValue("lifecycle_cluster.c", tfjsonpath.New("id")),
					statecheck.ExpectKnownValue("lifecycle_machine.m", tfjsonpath.New("state"), knownvalue.StringExact("HALTED")),
				},
				Check: func(*terraform.State) error { return expectActions(sim, "machines", mid, "deploy", "stop") },
			},
		},
	})
}

// ticketSpec is a user kind with no deletion modes: nothing removes its objects.
const ticketSpec = `
kinds:
  - name: ticket
    family: helpdesk
    collection: tickets
    states:
      static: [OPEN, CLOSED]
      transition: [OPENING, CLOSING]
    initial: OPEN
    default_duration: 1s
    failure: {rollback: true}
    create: {name: open, via: [OPENING], to: OPEN}
    actions:
      - {name: close, from: [OPEN], via: [CLOSING], to: CLOSED}
`

// TestAccObjectKindWithoutDeletion creates an object of a kind that declares no deletion modes
// (the plan warns instead of failing), and destroys it: Terraform forgets it and it stays in
// the simulator.
func TestAccObjectKindWithoutDeletion(t *testing.T) {
	kinds, err := lifecycle.Parse("ticket.yaml", []byte(ticketSpec))
	if err != nil {
		t.Fatal(err)
	}
	sim := newTestSim(t, withKinds(kinds...))
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{{
			Config: sim.config(`
resource "lifecycle_object" "t" {
  kind   = "ticket"
  name   = "printer jam"
  status = "CLOSED"
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("lifecycle_object.t", tfjsonpath.New("state"), knownvalue.StringExact("CLOSED")),
			},
			Check: captureID("lifecycle_object.t", &id),
		}},
		CheckDestroy: func(*terraform.State) error { return expectSimState(sim, "tickets", id, "CLOSED") },
	})
}

// TestObjectStateUpgradeV0 upgrades a version-0 lifecycle_object state (spec held the whole
// spec): every attribute is kept and effective_spec starts null, for the refresh to fill.
func TestObjectStateUpgradeV0(t *testing.T) {
	srv, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old := `{"id":"printer-0a","kind":"printer","name":"hall","parent_id":null,"status":"IDLE","state":"IDLE",` +
		`"deletion_mode":"destroy","spec":{"color":"black"},"timeouts":null}`
	resp, err := srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "lifecycle_object", Version: 0, RawState: &tfprotov6.RawState{JSON: []byte(old)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %+v", resp.Diagnostics[0])
	}
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	sch := schemas.ResourceSchemas["lifecycle_object"]
	if got := sch.Version; got != objectSchemaVersion {
		t.Fatalf("lifecycle_object schema version = %d, want %d", got, objectSchemaVersion)
	}
	v, err := resp.UpgradedState.Unmarshal(sch.ValueType())
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	var spec map[string]tftypes.Value
	if err := attrs["spec"].As(&spec); err != nil {
		t.Fatal(err)
	}
	var color, id string
	_ = spec["color"].As(&color)
	_ = attrs["id"].As(&id)
	if color != "black" || id != "printer-0a" {
		t.Errorf("upgraded spec.color = %q, id = %q; want black, printer-0a", color, id)
	}
	if !attrs["effective_spec"].IsNull() {
		t.Errorf("upgraded effective_spec = %v, want null", attrs["effective_spec"])
	}
}

// TestObjectSpecDiff checks what an update of lifecycle_object sends: only values that differ
// from the spec the simulator holds, and removals of configured keys whose value is not their
// declared default.
func TestObjectSpecDiff(t *testing.T) {
	k, err := lifecycle.Builtin().Kind("machine")
	if err != nil {
		t.Fatal(err)
	}
	r := &kindResource{cfg: objectKind()}
	model := func(spec, effective map[string]string) *objectModel {
		m := &objectModel{Spec: types.DynamicNull(), EffectiveSpec: types.MapNull(types.StringType)}
		if spec != nil {
			m.Spec = nativeSpec(stringsAsAny(spec))
		}
		if effective != nil {
			m.EffectiveSpec, _ = types.MapValueFrom(context.Background(), types.StringType, effective)
		}
		return m
	}
	held := map[string]string{"image_id": "image-1", "vcpus": "1", "memory_mb": "2048"}
	tests := []struct {
		name        string
		prior, held map[string]string
		next        map[string]any
		want        map[string]any
	}{
		{"default written out", map[string]string{"image_id": "image-1"}, held,
			map[string]any{"image_id": "image-1", "vcpus": 1.0}, map[string]any{}},
		{"value changed", map[string]string{"image_id": "image-1"}, held,
			map[string]any{"image_id": "image-1", "vcpus": 4.0}, map[string]any{"vcpus": 4.0}},
		{"default dropped", map[string]string{"image_id": "image-1", "vcpus": "1"}, held,
			map[string]any{"image_id": "image-1"}, map[string]any{}},
		{"non-default dropped", map[string]string{"image_id": "image-1", "memory_mb": "2048"}, held,
			map[string]any{"image_id": "image-1"}, map[string]any{"memory_mb": nil}},
		{"no effective spec yet (an upgraded state)", map[string]string{"image_id": "image-1"}, nil,
			map[string]any{"image_id": "image-2"}, map[string]any{"image_id": "image-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, diags := r.specDiff(context.Background(), k, model(tt.prior, tt.held), tt.next)
			if diags.HasError() {
				t.Fatal(diags)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("specDiff(%v, %v) = %v, want %v", tt.prior, tt.next, got, tt.want)
			}
		})
	}
}
