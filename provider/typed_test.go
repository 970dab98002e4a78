package provider

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// gadgetKind loads the kind declared only in testdata as a user kind, and its typed
// resource: derived from the spec with no Go for it.
func gadgetKind(t *testing.T) (*lifecycle.Kind, userKinds, kindConfig) {
	t.Helper()
	u := loadUserKindFiles("LIFECYCLE_KINDS", filepath.Join("testdata", "TestAccTypedResourceFromSpec", "gadget.yaml"))
	if u.err != nil {
		t.Fatal(u.err)
	}
	cfgs := u.configs(false)
	if len(u.kinds) != 1 || len(cfgs) != 1 {
		t.Fatalf("gadget.yaml gave kinds %v and resources %v", u.kinds, cfgs)
	}
	return u.kinds[0], u, cfgs[0]
}

// TestTypedSchemaFromSpec: the schema of a typed resource is derived from the declared
// fields: types, nested blocks, required/optional/computed, defaults, validators, replacement.
func TestTypedSchemaFromSpec(t *testing.T) {
	_, _, cfg := gadgetKind(t)
	var resp resource.SchemaResponse
	newKindResource(cfg).Schema(context.Background(), resource.SchemaRequest{}, &resp)
	s := resp.Schema
	if diags := s.ValidateImplementation(context.Background()); diags.HasError() {
		t.Fatalf("schema: %v", diags)
	}
	model := s.Attributes["model"].(schema.StringAttribute)
	if !model.Required || len(model.PlanModifiers) != 1 || len(model.Validators) != 2 || model.MarkdownDescription == "" {
		t.Errorf("model = %+v, want required, replaced on change, enum and length validated, described", model)
	}
	starts := s.Attributes["starts_at"].(schema.StringAttribute)
	if !starts.Optional || !starts.Computed || starts.CustomType == nil {
		t.Errorf("starts_at = %+v, want an optional, computed RFC 3339 time", starts)
	}
	power := s.Attributes["power"].(schema.Float64Attribute)
	if power.Default == nil || len(power.Validators) != 2 {
		t.Errorf("power = %+v, want a default and two bounds", power)
	}
	if tags := s.Attributes["tags"].(schema.ListAttribute); tags.ElementType == nil || len(tags.Validators) != 1 {
		t.Errorf("tags = %+v", tags)
	}
	part, ok := s.Blocks["parts"].(schema.ListNestedBlock)
	if !ok {
		t.Fatalf("parts is not a nested block: %T", s.Blocks["parts"])
	}
	if len(part.Validators) != 3 { // at most 4, at least 1, required
		t.Errorf("part block validators = %d, want 3", len(part.Validators))
	}
	count := part.NestedObject.Attributes["count"].(schema.Float64Attribute)
	if count.Default == nil || !count.Computed || len(count.Validators) != 1 {
		t.Errorf("part.count = %+v, want a bounded default", count)
	}
	if _, ok := s.Attributes["parts"]; ok {
		t.Error("the list of objects is also an attribute")
	}
}

func TestAccTypedResourceFromSpec(t *testing.T) {
	k, u, _ := gadgetKind(t)
	sim := newTestSim(t, withKinds(k))
	providers := map[string]func() (tfprotov6.ProviderServer, error){
		"lifecycle": providerserver.NewProtocol6WithError(&lifecycleProvider{version: "test", user: u}),
	}
	gadget := func(extra string) string {
		return sim.config(`resource "lifecycle_gadget" "g" {
  name    = "g1"
  model   = "mk1"
  ends_at = "2099-01-01T00:00:00Z"
  tags    = ["blue"]
` + extra + `
  parts {
    name = "cog"
  }
  parts {
    name  = "coil"
    count = 2
    kind  = "spring"
  }
}`)
	}
	const addr = "lifecycle_gadget.g"
	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []tfresource.TestStep{
			// Validated at plan: an enum in a nested block, a bound, the time order.
			{Config: gadget(`power = 42`), PlanOnly: true, ExpectError: regexp.MustCompile(`power`)},
			{Config: sim.config(`resource "lifecycle_gadget" "g" {
  name    = "g1"
  model   = "mk3"
  ends_at = "2099-01-01T00:00:00Z"
  parts {
    name = "cog"
    kind = "spring"
  }
}`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)model.*mk1`)},
			{Config: gadget(`starts_at = "2099-06-01T00:00:00Z"`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)ends_at.*must be after starts_at`)},
			{Config: sim.config(`resource "lifecycle_gadget" "g" {
  name    = "g1"
  model   = "mk1"
  ends_at = "2099-01-01T00:00:00Z"
}`), PlanOnly: true, ExpectError: regexp.MustCompile(`part`)},
			// Created with its blocks; defaults fill in, the omitted start is now.
			{
				Config: gadget(``),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("IDLE")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("parts").AtSliceIndex(0).AtMapKey("count"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("parts").AtSliceIndex(0).AtMapKey("kind"), knownvalue.StringExact("gear")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("parts").AtSliceIndex(1).AtMapKey("count"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("power"), knownvalue.Float64Exact(1.5)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("armed"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("starts_at"), knownvalue.NotNull()),
				},
			},
			// No drift on the next plan.
			{Config: gadget(``), PlanOnly: true},
			// A change in place runs the update action; a field that cannot change replaces.
			{
				Config: gadget(`power = 3`),
				ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("power"), knownvalue.Float64Exact(3)),
				},
			},
			{
				Config: gadget(`status = "BUSY"`),
			},
			// starts_at can change only while the gadget is IDLE: the plan says so.
			{
				Config:      gadget("status = \"BUSY\"\n  starts_at = \"2098-01-01T00:00:00Z\""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)starts_at.*only while the object is IDLE; it is BUSY.*Set its status to\s+IDLE and apply that first`),
			},
			// What the message says: the status first, then the change, in place.
			{Config: gadget(`status = "IDLE"`)},
			{
				Config: gadget("status = \"IDLE\"\n  starts_at = \"2098-01-01T00:00:00Z\""),
				ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("starts_at"), knownvalue.StringExact("2098-01-01T00:00:00Z")),
				},
			},
			{
				Config: sim.config(`resource "lifecycle_gadget" "g" {
  name    = "g1"
  model   = "mk2"
  ends_at = "2099-01-01T00:00:00Z"
  status  = "BUSY"
  tags    = ["blue"]
  parts {
    name = "cog"
  }
  parts {
    name  = "coil"
    count = 2
    kind  = "spring"
  }
}`),
				ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
	})
}

// lifecycle_object checks its spec against the kind's declared fields at plan time.
func TestAccObjectSpecValidatedAtPlan(t *testing.T) {
	sim := newTestSim(t)
	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []tfresource.TestStep{
			{
				Config: sim.config(`resource "lifecycle_object" "lease" {
  kind = "lease"
  name = "l"
  spec = {
    start_date = "2099-02-01T00:00:00Z"
    end_date   = "2099-01-01T00:00:00Z"
  }
}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)lease: spec.end_date must be after start_date`),
			},
			{
				Config: sim.config(`resource "lifecycle_object" "mci" {
  kind = "mci"
  name = "infra"
  spec = {
    subgroups = "[{\"name\":\"web\",\"count\":500,\"csp\":\"aws\",\"region\":\"us-east-1\"}]"
  }
}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)spec.subgroups\[0\].count.*maximum is 100`),
			},
			{
				Config: sim.config(`resource "lifecycle_object" "mci" {
  kind = "mci"
  name = "infra"
  spec = {
    subgroups = "web x 3"
  }
}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)spec.subgroups of a mci is a list: write it as JSON`),
			},
			{
				Config: sim.config(`resource "lifecycle_object" "mci" {
  kind = "mci"
  name = "infra"
  spec = {
    subgroups = "[{\"name\":\"web\",\"count\":2,\"csp\":\"aws\",\"region\":\"us-east-1\"}]"
  }
}`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("lifecycle_object.mci", tfjsonpath.New("state"), knownvalue.StringExact("Running")),
				},
			},
		},
	})
}
