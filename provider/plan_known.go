package provider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// ModifyPlan plans the change (modifyPlan), then keeps known what an update cannot change. The
// framework marks every computed attribute unknown in any update; that would make a resource
// fed a lease's reservation ID plan a replacement whenever the lease's end_date moves, and a
// timeouts block added after an import would show every computed attribute as changing.
func (r *kindResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.modifyPlan(ctx, req, resp)
	if resp.Diagnostics.HasError() || req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || len(resp.RequiresReplace) > 0 {
		return
	}
	if v, only := terraformOnlyChange(resp.Plan.Schema.GetAttributes(), req.State.Raw, resp.Plan.Raw); only {
		resp.Plan.Raw = v
		return
	}
	if !resp.Plan.Raw.Equal(req.State.Raw) {
		// Something runs (a walk that converges the object, even with the configuration as
		// it was): the outcome of its last operation is known after apply.
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("last_error"), types.StringUnknown())...)
	}
	r.planChildrenKnown(ctx, req, resp)
	r.planMembersKnown(ctx, req, resp)
}

// withKnownMembers is the capability of a kind made of members to say which of its computed
// attributes an update cannot change (an MCI's VMs when it only suspends or resumes).
type withKnownMembers interface {
	// keptInPlan returns the computed attributes the update from prior to plan keeps, with
	// what stays known in them; none when the members may change.
	keptInPlan(prior, plan *objectModel) map[string]attr.Value
}

// planMembersKnown keeps known what the members' capability says an update keeps.
func (r *kindResource) planMembersKnown(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	members, ok := r.cfg.family.(withKnownMembers)
	if !ok {
		return
	}
	plan, d := r.read(ctx, resp.Plan)
	prior, d2 := r.read(ctx, req.State)
	if d.HasError() || d2.HasError() {
		return
	}
	for name, v := range members.keptInPlan(prior, plan) {
		if planned, ok := plan.Computed[name]; ok && planned.IsUnknown() {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), v)...)
		}
	}
}

// schemaAttribute is what terraformOnlyChange asks of a schema attribute.
type schemaAttribute interface {
	IsComputed() bool
	IsOptional() bool
	IsRequired() bool
}

// terraformOnlyChange reports whether plan changes nothing of the object but Terraform's own
// settings (the timeouts block): every attribute a configuration sets is as in state, and the
// others differ only by being unknown (the framework marks computed attributes so in any
// update). It returns the state with the plan's timeouts, which is then the whole plan.
func terraformOnlyChange[A schemaAttribute](attrs map[string]A, state, plan tftypes.Value) (tftypes.Value, bool) {
	var sv, pv map[string]tftypes.Value
	if state.IsNull() || plan.IsNull() || !state.IsKnown() || !plan.IsKnown() || state.As(&sv) != nil || plan.As(&pv) != nil {
		return plan, false
	}
	if pv["timeouts"].Equal(sv["timeouts"]) {
		return plan, false // no change at all, or a change that is not Terraform's
	}
	for name, p := range pv {
		if name == "timeouts" || p.Equal(sv[name]) {
			continue
		}
		a, ok := attrs[name]
		if !ok || p.IsKnown() || !a.IsComputed() || a.IsOptional() || a.IsRequired() {
			return plan, false
		}
	}
	out := make(map[string]tftypes.Value, len(sv))
	for name, v := range sv {
		out[name] = v
	}
	out["timeouts"] = pv["timeouts"]
	return tftypes.NewValue(state.Type(), out), true
}

// planChildrenKnown keeps the IDs and names of the children a kind's spec makes with it (a
// lease's reservations and events) known through an in-place update that cannot add or remove
// any: the children made from a list field (`each`) stay when that field does not change, and
// the fixed ones always. Their states and copied fields are known after apply.
func (r *kindResource) planChildrenKnown(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if len(r.cfg.related) == 0 {
		return
	}
	plan, d := r.read(ctx, resp.Plan)
	prior, d2 := r.read(ctx, req.State)
	if d.HasError() || d2.HasError() {
		return
	}
	k, err := r.data.kind(prior.Kind.ValueString())
	if err != nil || k.IsHeld(prior.State.ValueString()) {
		return // a held create's children are made when it continues
	}
	var changed map[string]any
	if r.specKnown(plan) {
		next, d := r.spec(ctx, plan, k)
		if d.HasError() {
			return
		}
		_, changed, _ = r.specDiff(ctx, k, prior, next)
	}
	for _, ra := range r.cfg.related {
		if !childrenStay(k, ra.kind, changed, r.specKnown(plan)) {
			continue
		}
		if planned, ok := plan.Computed[ra.attr]; !ok || !planned.IsUnknown() {
			continue // known already: the plan changes nothing, or kept it
		}
		held, ok := prior.Computed[ra.attr].(types.List)
		if !ok || held.IsNull() || held.IsUnknown() {
			continue
		}
		v, diags := keepIdentity(ra, held)
		resp.Diagnostics.Append(diags...)
		if !diags.HasError() {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(ra.attr), v)...)
		}
	}
}

// childrenStay reports whether an update with these spec changes keeps the children of kind
// child the kind's spec makes: those from a list field go when the field changes (or may,
// when the plan's spec is not known yet).
func childrenStay(k *lifecycle.Kind, child string, changed map[string]any, known bool) bool {
	made := false
	for _, c := range k.Children {
		if c.Kind != child {
			continue
		}
		made = true
		if c.Each == "" {
			continue
		}
		if _, moves := changed[c.Each]; moves || !known {
			return false
		}
	}
	return made
}

// keepIdentity is the list of children with their IDs and names kept and every other attribute
// unknown.
func keepIdentity(ra relatedAttr, held types.List) (types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	t := ra.objectType()
	items := make([]attr.Value, 0, len(held.Elements()))
	for _, e := range held.Elements() {
		obj, ok := e.(types.Object)
		if !ok {
			continue
		}
		vals := map[string]attr.Value{}
		for name, v := range obj.Attributes() {
			if slices.Contains([]string{"id", "name"}, name) {
				vals[name] = v
			} else {
				vals[name] = types.StringUnknown()
			}
		}
		ov, d := types.ObjectValue(t.AttrTypes, vals)
		diags.Append(d...)
		items = append(items, ov)
	}
	l, d := types.ListValue(t, items)
	diags.Append(d...)
	return l, diags
}
