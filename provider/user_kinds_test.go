package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// userKindsTest loads user kinds files as LIFECYCLE_KINDS would, and returns the provider
// with their typed resources and the simulator option that serves the same kinds.
func userKindsTest(t *testing.T, files ...string) (map[string]func() (tfprotov6.ProviderServer, error), simtest.Option) {
	t.Helper()
	u := loadUserKindFiles(userKindsEnv, files...)
	if u.err != nil {
		t.Fatal(u.err)
	}
	return map[string]func() (tfprotov6.ProviderServer, error){
		"lifecycle": providerserver.NewProtocol6WithError(&lifecycleProvider{version: "test", user: u}),
	}, simtest.WithKinds(u.kinds...)
}

// copiesFile holds renamed copies of the built-in lease, reservation, event and disk kinds.
var copiesFile = filepath.Join("testdata", "TestAccUserKindCopies", "copies.yaml")

// bookingKit is the renamed copy of the Blazar kinds: a booking makes slots (its reservations
// field's items, the list named after the kind because the field has its name) and ticks.
func bookingKit(t *testing.T) leaseKit {
	providers, serve := userKindsTest(t, copiesFile)
	return leaseKit{typ: "booking", block: "reservations", reservations: "slots", events: "ticks", twoEvents: true,
		collection: "bookings", providers: providers, opts: []simtest.Option{serve}}
}

// The renamed copies pass the built-in lease's and disk's scenarios: children shown, wait
// targets, timers, an in-place update that keeps the children known, the replacement of a
// started booking's start, import, the link's attach, detach and move, with no Go for them.

func TestAccUserKindLeaseNowUntilActive(t *testing.T) { testLeaseNowUntilActive(t, bookingKit(t)) }

func TestAccUserKindLeaseFutureStart(t *testing.T) { testLeaseFutureStart(t, bookingKit(t)) }

func TestAccUserKindLeaseStartFails(t *testing.T) { testLeaseStartFails(t, bookingKit(t)) }

func TestAccUserKindLeaseDeleteWhileStarting(t *testing.T) {
	testLeaseDeleteWhileStarting(t, bookingKit(t))
}

func TestAccUserKindDiskAttachDetachMove(t *testing.T) {
	providers, serve := userKindsTest(t, copiesFile)
	testDiskAttachDetachMove(t, diskKit{typ: "volume", collection: "volumes", providers: providers, opts: []simtest.Option{serve}})
}

// TestUserKindsNamesAndErrors: a user kind named like a built-in kind or one of the provider's
// own types is refused with what to do; a file that does not load says how to check it.
func TestUserKindsNamesAndErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, body)
		return p
	}
	kind := func(name string) string {
		return "kinds:\n  - name: " + name + "\n    family: x\n    collection: " + name + "s\n    states: {static: [ON], transition: [MAKING]}\n" +
			"    create: {via: [MAKING], to: ON}\n    failure: {to: ON}\n"
	}
	tests := []struct {
		name, file, want string
	}{
		{"a provider type", write("object.yaml", kind("object")), `kind "object" would be lifecycle_object, which is the provider's own; rename the kind`},
		{"a built-in kind", write("machine.yaml", kind("machine")), `duplicate kind name: machine is already a kind`},
		{"a broken file", write("broken.yaml", "kinds:\n  - name: x\n    statez: {}\n"), `unknown key "statez"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := loadUserKindFiles(userKindsEnv, tt.file)
			if u.err == nil || !strings.Contains(u.err.Error(), tt.want) {
				t.Fatalf("loadUserKindFiles(%s) error = %v, want one saying %q", tt.file, u.err, tt.want)
			}
			if len(u.configs(false)) != 0 {
				t.Errorf("a refused file gave typed resources")
			}
		})
	}
	u := loadUserKindFiles(userKindsEnv, write("ok.yaml", kind("widget")))
	if u.err != nil || len(u.configs(false)) != 1 || u.configs(false)[0].typeName != "widget" {
		t.Fatalf("widget.yaml: %v, %v", u.err, u.configs(false))
	}
}

// TestAccUserKindGreenhouse manages the kind tutorial's last step (examples/kinds/tutorial)
// through its generated typed resource: defaults, a list of child items shown as computed
// children, a bound refused at plan, an in-place change, a replacement for an immutable field,
// a guard (a shed in it is stocked only while it is open: refused, naming the greenhouse) and
// import.
func TestAccUserKindGreenhouse(t *testing.T) {
	providers, serve := userKindsTest(t, filepath.Join("..", "examples", "kinds", "tutorial", "step5.yaml"),
		filepath.Join("testdata", "TestAccUserKindGreenhouse", "shed.yaml"))
	sim := newTestSim(t, serve)
	const addr = "lifecycle_greenhouse.g"
	greenhouse := func(status, area, extra string) string {
		return sim.config(`resource "lifecycle_greenhouse" "g" {
  name    = "north"
  status  = "` + status + `"
  crop    = "tomatoes"
  area_m2 = ` + area + `
` + extra + `
  beds {
    name  = "east"
    plant = "basil"
  }
  beds {
    name = "west"
  }
}
`)
	}
	shed := func(status string) string {
		return `
resource "lifecycle_shed" "s" {
  name          = "tools"
  greenhouse_id = lifecycle_greenhouse.g.id
  status        = "` + status + `"
}
`
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{Config: greenhouse("CLOSED", "5", ""), PlanOnly: true, ExpectError: errorLike(`area_m2.*between 10 and 1000`)},
			{
				Config: greenhouse("CLOSED", "50", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("CLOSED")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("heated"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("bed_states"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("north-east"), "state": knownvalue.StringExact("EMPTY")}),
						knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("north-west"), "state": knownvalue.StringExact("EMPTY")}),
					})),
				},
			},
			{Config: greenhouse("CLOSED", "50", "") + shed("EMPTY")},
			{
				// The shed's guard: stocked only while its greenhouse is OPEN.
				Config:      greenhouse("CLOSED", "50", "") + shed("STOCKED"),
				ExpectError: errorLike(`greenhouse.*CLOSED.*OPEN`),
			},
			{
				Config: greenhouse("OPEN", "50", "  heated = true") + shed("STOCKED"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("OPEN")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("heated"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("lifecycle_shed.s", tfjsonpath.New("state"), knownvalue.StringExact("STOCKED")),
				},
			},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config: greenhouse("OPEN", "80", "  heated = true") + shed("STOCKED"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
	})
}

// TestWriteKindDocs renders the page of a user kind's typed resource from its file, and says
// how to check a file that does not load.
func TestWriteKindDocs(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	if err := WriteKindDocs(&out, dir, filepath.Join("..", "examples", "kinds", "tutorial", "step5.yaml")); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "lifecycle_greenhouse.md")
	if strings.TrimSpace(out.String()) != page {
		t.Errorf("WriteKindDocs listed %q, want %q", out.String(), page)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# lifecycle_greenhouse (Resource)", "- `crop` (String) What grows inside.",
		"`area_m2` (Number)", "Changing it replaces the object", "`bed_states` (List)", "### Nested block `beds`",
		"terraform import lifecycle_greenhouse.example"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page does not say %q:\n%s", want, b)
		}
	}
	if err := WriteKindDocs(&out, dir, filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "lifecyclesim check") {
		t.Errorf("WriteKindDocs(missing file) = %v, want an error naming lifecyclesim check", err)
	}
}

// TestUserKindsCheckAgainstSimulator: at Configure, a kind of the file the simulator does not
// serve, or serves differently, is an error saying what to restart; kinds it serves that the
// file lacks are a warning naming the variable to set.
func TestUserKindsCheckAgainstSimulator(t *testing.T) {
	u := loadUserKindFiles(userKindsEnv, copiesFile)
	if u.err != nil {
		t.Fatal(u.err)
	}
	served := slices.Clone(builtinKinds.Kinds())
	all := append(slices.Clone(served), u.kinds...)
	other := loadUserKindFiles(userKindsEnv, filepath.Join("testdata", "TestAccTypedResourceFromSpec", "gadget.yaml"))
	tests := []struct {
		name   string
		served []*lifecycle.Kind
		want   string
		errors bool
	}{
		{"all served", all, "", false},
		{"not served", served, `does not serve the kind "booking"`, true},
		{"an extra kind", append(slices.Clone(all), other.kinds...), `serves user-defined kinds the provider has no typed resources for: gadget`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var diags diag.Diagnostics
			u.check("http://sim", tt.served, &diags)
			if diags.HasError() != tt.errors {
				t.Fatalf("check: errors = %v, want %v: %v", diags.HasError(), tt.errors, diags)
			}
			text := fmt.Sprint(diags)
			if tt.want != "" && !strings.Contains(text, tt.want) {
				t.Errorf("check said %s, want %q", text, tt.want)
			}
		})
	}
	// A kind served with other fields than the file's, or the same fields with another bound,
	// default or `required`: the message names the field.
	last := u.kinds[len(u.kinds)-1]
	three := 3000.0
	variants := []struct {
		name, field string
		change      func(k *lifecycle.Kind)
	}{
		{"a field less", "`" + last.Fields[1].Name + "`", func(k *lifecycle.Kind) { k.Fields = k.Fields[:1] }},
		{"another maximum", "`" + last.Fields[0].Name + "`", func(k *lifecycle.Kind) { k.Fields[0].Max = &three }},
		{"required", "`" + last.Fields[0].Name + "`", func(k *lifecycle.Kind) { k.Fields[0].Required = !k.Fields[0].Required }},
		{"another default", "`" + last.Fields[0].Name + "`", func(k *lifecycle.Kind) { k.Fields[0].Default = 7.0 }},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			changed := *last
			changed.Fields = slices.Clone(last.Fields)
			v.change(&changed)
			var diags diag.Diagnostics
			u.check("http://sim", append(append(slices.Clone(served), u.kinds[:len(u.kinds)-1]...), &changed), &diags)
			text := fmt.Sprint(diags)
			if !strings.Contains(text, "is not the one the simulator at http://sim serves") || !strings.Contains(text, "declaration of "+v.field) {
				t.Errorf("a kind served with %s: %v, want an error naming %s", v.name, diags, v.field)
			}
		})
	}
	// Descriptions are not behaviour: a kind whose fields are described otherwise is the same.
	described := *last
	described.Fields = slices.Clone(last.Fields)
	described.Fields[0].Description = "described otherwise"
	var diags diag.Diagnostics
	u.check("http://sim", append(append(slices.Clone(served), u.kinds[:len(u.kinds)-1]...), &described), &diags)
	if diags.HasError() {
		t.Errorf("a kind whose field is described otherwise: %v", diags)
	}
}

// TestResourceTypeOf: messages that name the resource to use name a user kind's typed
// resource when the provider has it, a built-in kind's always, and lifecycle_object otherwise.
func TestResourceTypeOf(t *testing.T) {
	d := &providerData{typed: map[string]string{"greenhouse": "greenhouse", "machine": "machine"}}
	tests := []struct {
		d          *providerData
		kind, want string
	}{
		{d, "greenhouse", "lifecycle_greenhouse"},
		{d, "machine", "lifecycle_machine"},
		{nil, "machine", "lifecycle_machine"},
		{nil, "greenhouse", "lifecycle_object"},
		{d, "vm", "lifecycle_object"},
	}
	for _, tt := range tests {
		if got := tt.d.resourceTypeOf(tt.kind); got != tt.want {
			t.Errorf("resourceTypeOf(%q) = %q, want %q", tt.kind, got, tt.want)
		}
	}
}
