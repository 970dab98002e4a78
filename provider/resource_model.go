package provider

import (
	"context"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// getter reads a plan, state or config.
type getter interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}

// read loads the model from a plan, state or config. It converts the whole object once:
// reading attribute by attribute walks the schema for each one, which costs more than the
// rest of a plan.
func (r *kindResource) read(ctx context.Context, src getter) (*objectModel, diag.Diagnostics) {
	m := &objectModel{Fields: map[string]attr.Value{}, Computed: map[string]attr.Value{}}
	var obj types.Object
	diags := src.Get(ctx, &obj)
	if diags.HasError() {
		return m, diags
	}
	attrs := obj.Attributes()
	str := func(name string) types.String { return attrAs[types.String](attrs, name, &diags) }
	m.ID = str("id")
	m.Name = str("name")
	m.Timeouts = attrAs[timeouts.Value](attrs, "timeouts", &diags)
	m.State = str("state")
	m.DeletionMode = str("deletion_mode")
	if r.cfg.hasStatus() {
		m.Status = str("status")
	}
	if r.cfg.parentAttr != "" {
		m.ParentID = str(r.cfg.parentAttr)
	}
	m.LastError = str("last_error")
	if len(r.cfg.waitFor) > 0 {
		m.WaitFor = str("wait_for")
	}
	r.cfg.shape.readModel(attrs, m, &diags)
	for _, f := range r.cfg.fields {
		m.Fields[f.attr] = attrs[f.attr]
	}
	for _, a := range r.computed {
		m.Computed[a.name] = attrs[a.name]
	}
	return m, diags
}

// attrAs is the attribute's value as the type the schema gives it; the zero value (null) when
// the object has none.
func attrAs[T attr.Value](attrs map[string]attr.Value, name string, diags *diag.Diagnostics) T {
	var t T
	v, ok := attrs[name]
	if !ok || v == nil {
		return t
	}
	t, ok = v.(T)
	if !ok {
		diags.AddAttributeError(path.Root(name), "Value Conversion Error",
			fmt.Sprintf("Expected %T, got %T. This is a bug in the provider.", t, v))
	}
	return t
}

// write stores the model into a state, replacing the whole object at once (see read).
// Attributes the model has no value for keep the ones the state has.
func (r *kindResource) write(ctx context.Context, st *tfsdk.State, m *objectModel) diag.Diagnostics {
	vals := map[string]attr.Value{
		"id": m.ID, "name": m.Name, "state": m.State, "deletion_mode": m.DeletionMode,
		// The configured timeouts stay as they are (a new state starts without them).
		"timeouts": m.Timeouts,
	}
	if r.cfg.hasStatus() {
		vals["status"] = m.Status
	}
	if r.cfg.parentAttr != "" {
		vals[r.cfg.parentAttr] = m.ParentID
	}
	vals["last_error"] = m.LastError
	if len(r.cfg.waitFor) > 0 {
		vals["wait_for"] = m.WaitFor
	}
	r.cfg.shape.writeModel(m, vals)
	for _, f := range r.cfg.fields {
		vals[f.attr] = m.Fields[f.attr]
	}
	for _, a := range r.computed {
		if v := m.Computed[a.name]; v != nil {
			vals[a.name] = v
		}
	}
	raw, diags := objectValue(ctx, st.Schema.Type().TerraformType(ctx), st.Raw, vals)
	if !diags.HasError() {
		st.Raw = raw
	}
	return diags
}

// objectValue is the object of type typ with the attributes vals sets, and the others as
// they are in prior (null when prior has none).
func objectValue(ctx context.Context, typ tftypes.Type, prior tftypes.Value, vals map[string]attr.Value) (tftypes.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	ot, ok := typ.(tftypes.Object)
	if !ok {
		diags.AddError("Value Conversion Error", fmt.Sprintf("The schema's type is %s, not an object. This is a bug in the provider.", typ))
		return prior, diags
	}
	var had map[string]tftypes.Value
	if !prior.IsNull() && prior.IsKnown() {
		if err := prior.As(&had); err != nil {
			diags.AddError("Value Conversion Error", err.Error())
			return prior, diags
		}
	}
	for name, v := range vals {
		if _, ok := ot.AttributeTypes[name]; !ok && v != nil {
			diags.AddAttributeError(path.Root(name), "Value Conversion Error",
				fmt.Sprintf("The schema has no attribute %q. This is a bug in the provider.", name))
		}
	}
	out := make(map[string]tftypes.Value, len(ot.AttributeTypes))
	for name, at := range ot.AttributeTypes {
		v := vals[name]
		if v == nil {
			if h, ok := had[name]; ok {
				out[name] = h
			} else {
				out[name] = tftypes.NewValue(at, nil)
			}
			continue
		}
		tv, err := v.ToTerraformValue(ctx)
		if err != nil {
			diags.AddAttributeError(path.Root(name), "Value Conversion Error", err.Error())
			continue
		}
		// A dynamic attribute (lifecycle_object's spec) holds a value of a concrete type.
		if !tv.Type().Equal(at) && !(at.Is(tftypes.DynamicPseudoType) && tv.Type().UsableAs(at)) {
			diags.AddAttributeError(path.Root(name), "Value Conversion Error",
				fmt.Sprintf("The value's type is %s, the schema's %s. This is a bug in the provider.", tv.Type(), at))
			continue
		}
		out[name] = tv
	}
	if diags.HasError() {
		return prior, diags
	}
	return tftypes.NewValue(ot, out), diags
}

// spec is the object spec the model asks for (fields changed by actions left out).
// lifecycle_object's string spec takes the types the kind declares for its fields.
func (r *kindResource) spec(ctx context.Context, m *objectModel, k *lifecycle.Kind) (map[string]any, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := map[string]any{}
	for _, f := range r.cfg.fields {
		if f.byAction {
			continue
		}
		if v, ok := specValue(m.Fields[f.attr]); ok {
			out[f.field.Name] = v
		}
	}
	typed, d := typedSpec(k, knownSpec(m.Spec))
	diags.Append(d...)
	maps.Copy(out, typed)
	return out, diags
}

// specKnown reports whether every spec value of the model is known (not waiting for apply).
func (r *kindResource) specKnown(m *objectModel) bool {
	if !specFullyKnown(m.Spec) {
		return false
	}
	for _, v := range m.Fields {
		if v != nil && !fullyKnown(v) {
			return false
		}
	}
	return true
}

// fullyKnown reports whether v and everything in it is known: a list of blocks is known while
// an attribute of one is still unknown (a node group's template ID from a resource made in the
// same apply).
func fullyKnown(v attr.Value) bool {
	if v.IsUnknown() {
		return false
	}
	tv, err := v.ToTerraformValue(context.Background())
	return err == nil && tv.IsFullyKnown()
}

// specChanges lists the fields that differ, with nil for removed ones.
func specChanges(old, next map[string]any) map[string]any {
	out := map[string]any{}
	for key, v := range next {
		if fmt.Sprint(old[key]) != fmt.Sprint(v) {
			out[key] = v
		}
	}
	for key := range old {
		if _, ok := next[key]; !ok {
			out[key] = nil
		}
	}
	return out
}
