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
	reg := lifecycle.Builtin()
	ctx := context.Background()
	typed := map[string]kindConfig{}
	for _, c := range typedKinds() {
		typed[c.kind] = c
	}
	made := map[string]bool{}
	var b, timed strings.Builder
	var checks, timedChecks []plancheck.PlanCheck
	var create func(cfg kindConfig) string
	create = func(cfg kindConfig) string {
		addr := "lifecycle_" + cfg.typeName + "." + cfg.kind
		if made[cfg.kind] {
			return addr
		}
		made[cfg.kind] = true
		k, err := reg.Kind(cfg.kind)
		if err != nil {
			t.Fatal(err)
		}
		var parentID, parentAddr string
		if k.Parent != nil {
			parentAddr = create(typed[k.Parent.Kind])
			pk, err := reg.Kind(k.Parent.Kind)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := sim.Client.ListAll(ctx, pk.Collection, client.ListOptions{})
			if err != nil || len(objs) != 1 {
				t.Fatalf("the %s's parent: %v, %v", cfg.kind, objs, err)
			}
			parentID = objs[0].ID
		}
		o, err := sim.Client.Create(ctx, k.Collection, client.CreateRequest{Name: "imp-" + k.Name, ParentID: parentID, Spec: k.SampleSpec(time.Now())})
		if err != nil {
			t.Fatalf("creating a %s: %v", k.Name, err)
		}
		o = sim.waitStatic(t, k.Collection, o.ID)
		var res strings.Builder
		fmt.Fprintf(&res, "resource \"lifecycle_%s\" %q {\n  name = %q\n", cfg.typeName, cfg.kind, o.Name)
		if parentAddr != "" {
			fmt.Fprintf(&res, "  %s = %s.id\n", cfg.parentAttr, parentAddr)
		}
		for _, f := range cfg.fields {
			if v, ok := o.Spec[f.field.Name]; ok && v != nil && !f.byAction {
				res.WriteString(hclField(f.attr, f.field, v, "  "))
			}
		}
		fmt.Fprintf(&b, "import {\n  to = %s\n  id = %q\n}\n\n%s}\n\n", addr, o.ID, res.String())
		fmt.Fprintf(&timed, "%s  timeouts {\n    create = \"5m\"\n  }\n}\n\n", res.String())
		checks = append(checks, plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop))
		timedChecks = append(timedChecks, onlyTimeoutsChange(addr))
		return addr
	}
	for _, c := range typedKinds() {
		create(c)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: sim.config(b.String()), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: checks}},
			{Config: sim.config(timed.String()), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: timedChecks}},
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
