package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// nativeObjects are lifecycle_object resources of every built-in kind with nested items, with
// spec as native HCL values and items that leave out fields with declared defaults (an MCI
// subgroup's and a node group's count).
func nativeObjects() string {
	// The lease starts later, so it stays PENDING: without start_date it would start at once
	// and could be ACTIVE before the create's wait reads it.
	start := time.Now().Add(120 * time.Hour).UTC().Format(time.RFC3339)
	end := time.Now().Add(240 * time.Hour).UTC().Format(time.RFC3339)
	return `
resource "lifecycle_object" "mci" {
  kind   = "mci"
  name   = "infra"
  status = "Running"
  spec = {
    subgroups = [
      { name = "web", count = 2, csp = "aws", region = "us-east-1", spec = "t3.small" },
      { name = "db", csp = "gcp", region = "asia-northeast3" },
    ]
  }
}

resource "lifecycle_object" "cluster" {
  kind = "cluster"
  name = "hadoop"
  spec = {
    plugin_name    = "vanilla"
    hadoop_version = "2.7.1"
    node_groups = [
      { name = "masters", flavor = "m1.large", processes = ["namenode"] },
      { name = "workers", flavor = "m1.medium", count = 2 },
    ]
  }
}

resource "lifecycle_object" "lease" {
  kind = "lease"
  name = "capacity"
  spec = {
    start_date = "` + start + `"
    end_date   = "` + end + `"
    reservations = [
      { resource_type = "physical:host", min = 1, max = 2 },
      { resource_type = "virtual:instance", amount = 2, vcpus = 4, memory_mb = 2048, affinity = false },
    ]
  }
}
`
}

// TestAccObjectNativeSpec: lifecycle_object takes spec as native HCL values: nested lists of
// objects whose items leave out defaulted fields apply with no "inconsistent result", keep the
// values as written, make the children they declare, and plan no change afterwards.
func TestAccObjectNativeSpec(t *testing.T) {
	sim := newTestSim(t)
	config := sim.config(nativeObjects()) // once: its dates are the same in both steps
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("lifecycle_object.mci", tfjsonpath.New("state"), knownvalue.StringExact("Running")),
					statecheck.ExpectKnownValue("lifecycle_object.mci", tfjsonpath.New("spec").AtMapKey("subgroups").AtSliceIndex(1),
						knownvalue.MapExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("db"), "csp": knownvalue.StringExact("gcp"),
							"region": knownvalue.StringExact("asia-northeast3")})),
					statecheck.ExpectKnownValue("lifecycle_object.mci", tfjsonpath.New("effective_spec").AtMapKey("subgroups"),
						knownvalue.StringRegexp(regexp.MustCompile(`"count":1,"csp":"gcp"`))),
					statecheck.ExpectKnownValue("lifecycle_object.cluster", tfjsonpath.New("state"), knownvalue.StringExact("Active")),
					statecheck.ExpectKnownValue("lifecycle_object.lease", tfjsonpath.New("state"), knownvalue.StringExact("PENDING")),
				},
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// v1Config is the configuration the version-1 state of testdata/TestAccObjectStateV1 was
// applied with (spec as strings, lists as JSON), by the provider before version 2.
const v1Config = `
resource "lifecycle_object" "cluster" {
  kind = "cluster"
  name = "hadoop"
  spec = {
    plugin_name    = "vanilla"
    hadoop_version = "2.7.1"
    node_groups    = jsonencode([{ name = "workers", flavor = "m1.medium", count = 2 }])
  }
}

resource "lifecycle_object" "mci" {
  kind   = "mci"
  name   = "infra"
  status = "Running"
  spec = {
    subgroups   = jsonencode([{ name = "web", count = 2, csp = "aws", region = "us-east-1" }])
    description = "v1"
  }
}
`

// TestAccObjectStateV1Upgrades plans with a real version-1 state (written by terraform 1.11
// with the provider before schema version 2, commit 987506e, testdata/TestAccObjectStateV1/
// v1-state.json: a name .gitignore's *.tfstate does not hide; only the object IDs are filled
// in): the upgrade to version 2 plans no change with the configuration it was
// written with, and a configuration rewritten with native values applies in place with no
// change to the objects, then plans none.
func TestAccObjectStateV1Upgrades(t *testing.T) {
	sim := newTestSim(t)
	ctx := context.Background()
	create := func(collection, name string, spec map[string]any) string {
		o, err := sim.Client.Create(ctx, collection, client.CreateRequest{Name: name, Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		return sim.waitStatic(t, collection, o.ID).ID
	}
	cluster := create("clusters", "hadoop", map[string]any{"plugin_name": "vanilla", "hadoop_version": "2.7.1",
		"node_groups": []any{map[string]any{"name": "workers", "flavor": "m1.medium", "count": 2}}})
	mci := create("mcis", "infra", map[string]any{"description": "v1",
		"subgroups": []any{map[string]any{"name": "web", "count": 2, "csp": "aws", "region": "us-east-1"}}})

	tf := newTFCLI(t, sim.config(v1Config))
	b, err := os.ReadFile(filepath.Join("testdata", "TestAccObjectStateV1", "v1-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	state := strings.NewReplacer("{{cluster}}", cluster, "{{mci}}", mci).Replace(string(b))
	writeFile(t, filepath.Join(tf.dir, "terraform.tfstate"), state)

	out, ok := tf.run("plan", "-detailed-exitcode", "-no-color")
	if !ok || !strings.Contains(out, "No changes.") {
		t.Fatalf("plan with the upgraded version-1 state changes something (exit status non-zero: %v)", !ok)
	}

	tf.rewrite(sim, `
resource "lifecycle_object" "cluster" {
  kind = "cluster"
  name = "hadoop"
  spec = {
    plugin_name    = "vanilla"
    hadoop_version = "2.7.1"
    node_groups    = [{ name = "workers", flavor = "m1.medium", count = 2 }]
  }
}

resource "lifecycle_object" "mci" {
  kind   = "mci"
  name   = "infra"
  status = "Running"
  spec = {
    subgroups   = [{ name = "web", count = 2, csp = "aws", region = "us-east-1" }]
    description = "v1"
  }
}
`)
	tf.mustRun("apply", "-auto-approve", "-no-color")
	if err := expectActions(sim, "mcis", mci, "create"); err != nil {
		t.Error(err)
	}
	if err := expectActions(sim, "clusters", cluster, "create"); err != nil {
		t.Error(err)
	}
	if out, ok := tf.run("plan", "-detailed-exitcode", "-no-color"); !ok || !strings.Contains(out, "No changes.") {
		t.Error("the plan after rewriting the spec with native values is not empty")
	}
	tf.mustRun("destroy", "-auto-approve", "-no-color")
}

// TestImportedSpec: an import takes what was written when the simulator says what it filled
// in (nested paths included; nothing written is an empty object), and without that (an object
// stored by an earlier simulator) every value that is not its field's default.
func TestImportedSpec(t *testing.T) {
	k := &lifecycle.Kind{Name: "gizmo", Fields: []lifecycle.Field{
		{Name: "size", Type: lifecycle.TypeInteger, Default: 1.0},
		{Name: "parts", Type: lifecycle.TypeList, Items: &lifecycle.Field{Type: lifecycle.TypeObject, Fields: []lifecycle.Field{
			{Name: "name", Type: lifecycle.TypeString}, {Name: "count", Type: lifecycle.TypeInteger, Default: 1.0}}}},
	}}
	held := map[string]any{"size": 1.0, "parts": []any{map[string]any{"name": "a", "count": 1.0}}}
	tests := []struct {
		name      string
		defaulted []string
		want      string
	}{
		{"not known: defaults dropped", nil, `{"parts":[{"count":1,"name":"a"}]}`},
		{"all written", []string{}, `{"parts":[{"count":1,"name":"a"}],"size":1}`},
		{"item default filled in", []string{"parts[0].count"}, `{"parts":[{"name":"a"}],"size":1}`},
		{"nothing written", []string{"parts", "size"}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := importedSpec(k, held, tt.defaulted)
			v, ok := goValue(got)
			if !ok {
				t.Fatalf("importedSpec(%v) = %v, not a known value", tt.defaulted, got)
			}
			b, _ := json.Marshal(v)
			if string(b) != tt.want {
				t.Errorf("importedSpec(%v) = %s, want %s", tt.defaulted, b, tt.want)
			}
		})
	}
}
