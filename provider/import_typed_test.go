package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// TestAccImportEveryTypedResource imports an object of every typed resource's kind, made
// outside Terraform, with import blocks and a configuration of the values the object has: the
// plan only imports and the plan after it is empty; a timeouts block added then changes the
// timeouts and nothing else (no computed attribute, children or members included, becomes
// unknown).
func TestAccImportEveryTypedResource(t *testing.T) {
	sim := newTestSim(t)
	typed := map[string]kindConfig{}
	for _, c := range typedKinds() {
		typed[c.kind] = c
	}
	var ic importConfigs
	for _, m := range createEveryKind(t, sim) {
		cfg := typed[m.kind.Name]
		var res strings.Builder
		fmt.Fprintf(&res, "resource \"lifecycle_%s\" %q {\n  name = %q\n", cfg.typeName, cfg.kind, m.obj.Name)
		if p := m.kind.Parent; p != nil {
			fmt.Fprintf(&res, "  %s = lifecycle_%s.%s.id\n", cfg.parentAttr, typed[p.Kind].typeName, p.Kind)
		}
		for _, f := range cfg.fields {
			if v, ok := m.obj.Spec[f.field.Name]; ok && v != nil && !f.byAction {
				res.WriteString(hclField(f.attr, f.field, v, "  "))
			}
		}
		ic.add("lifecycle_"+cfg.typeName+"."+cfg.kind, m.obj.ID, res.String())
	}
	ic.test(t, sim)
}

// madeObject is an object made outside Terraform, with the spec it was made with.
type madeObject struct {
	kind *lifecycle.Kind
	obj  *client.Object
	spec map[string]any
}

// createEveryKind makes, through the simulator's API, one object of every built-in kind that
// can be managed on its own (its parents first, each with its kind's sample spec) and waits
// until each is static.
func createEveryKind(t *testing.T, sim *testSim) []madeObject {
	t.Helper()
	reg := lifecycle.Builtin()
	var out []madeObject
	byKind := map[string]*client.Object{}
	var create func(k *lifecycle.Kind) *client.Object
	create = func(k *lifecycle.Kind) *client.Object {
		if o, ok := byKind[k.Name]; ok {
			return o
		}
		var parentID string
		if k.Parent != nil {
			pk, err := reg.Kind(k.Parent.Kind)
			if err != nil {
				t.Fatal(err)
			}
			parentID = create(pk).ID
		}
		spec := k.SampleSpec(time.Now())
		o, err := sim.Client.Create(context.Background(), k.Collection, client.CreateRequest{Name: "imp-" + k.Name, ParentID: parentID, Spec: spec})
		if err != nil {
			t.Fatalf("creating a %s: %v", k.Name, err)
		}
		o = sim.waitStatic(t, k.Collection, o.ID)
		byKind[k.Name] = o
		out = append(out, madeObject{k, o, spec})
		return o
	}
	for _, k := range reg.Kinds() {
		if !k.MadeByParent {
			create(k)
		}
	}
	if len(out) < 12 {
		t.Fatalf("only %d kinds can be managed on their own", len(out))
	}
	return out
}

// importConfigs builds two configurations of imported objects: one with an import block beside
// each resource, and the same resources with a timeouts block added.
type importConfigs struct {
	imports, timed      strings.Builder
	checks, timedChecks []plancheck.PlanCheck
}

// add adds the resource at addr, imported with importID; body is its block without the
// closing brace.
func (ic *importConfigs) add(addr, importID, body string) {
	fmt.Fprintf(&ic.imports, "import {\n  to = %s\n  id = %q\n}\n\n%s}\n\n", addr, importID, body)
	fmt.Fprintf(&ic.timed, "%s  timeouts {\n    create = \"5m\"\n  }\n}\n\n", body)
	ic.checks = append(ic.checks, plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop))
	ic.timedChecks = append(ic.timedChecks, onlyTimeoutsChange(addr))
}

// test imports every resource (the plan only imports; the harness's plan after the apply is
// empty), then adds the timeouts blocks (the plan changes the timeouts and nothing else).
func (ic *importConfigs) test(t *testing.T, sim *testSim) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: sim.config(ic.imports.String()), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: ic.checks}},
			{Config: sim.config(ic.timed.String()), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: ic.timedChecks}},
		},
	})
}

// hclField writes a typed resource's attribute (or blocks) for a declared field's value.
func hclField(name string, f *lifecycle.Field, v any, indent string) string {
	if isBlock(f) {
		var out strings.Builder
		items, _ := v.([]any)
		for _, it := range items {
			item, _ := it.(map[string]any)
			fmt.Fprintf(&out, "%s%s {\n", indent, name)
			for i := range f.Items.Fields {
				sub := &f.Items.Fields[i]
				if sv, ok := item[sub.Name]; ok && sv != nil {
					out.WriteString(hclField(sub.Name, sub, sv, indent+"  "))
				}
			}
			fmt.Fprintf(&out, "%s}\n", indent)
		}
		return out.String()
	}
	return fmt.Sprintf("%s%s = %s\n", indent, name, hclValue(f, v))
}

// hclValue is a declared field's value as an HCL expression.
func hclValue(f *lifecycle.Field, v any) string {
	switch f.Type {
	case lifecycle.TypeInteger, lifecycle.TypeNumber, lifecycle.TypeBool:
		return stringOf(v)
	case lifecycle.TypeList:
		items, _ := v.([]any)
		item := f.Items
		if item == nil {
			item = &lifecycle.Field{Type: lifecycle.TypeString}
		}
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = hclValue(item, it)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case lifecycle.TypeObject:
		m, _ := v.(map[string]any)
		var parts []string
		for key, e := range m {
			ev := hclString(stringOf(e))
			for i := range f.Fields {
				if f.Fields[i].Name == key {
					ev = hclValue(&f.Fields[i], e)
				}
			}
			parts = append(parts, fmt.Sprintf("%q = %s", key, ev))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return hclString(stringOf(v))
}
