package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

var _ resource.ResourceWithMoveState = (*kindResource)(nil)

// MoveState lets a `moved` block take an object from lifecycle_object to its kind's typed
// resource (lifecycle_object.x to lifecycle_machine.x) without replacing it: the ID, name,
// parent, status and timeouts carry over, and the typed fields come from the spec the
// simulator holds. The refresh that follows fills the rest.
func (r *kindResource) MoveState(context.Context) []resource.StateMover {
	return r.cfg.shape.movers(r)
}

func (r *kindResource) moveFromObject(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	if req.SourceTypeName != "lifecycle_object" {
		return // not ours: the framework reports that no mover took it
	}
	summary := "Cannot move lifecycle_object to lifecycle_" + r.cfg.typeName
	src, err := rawStateObject(req.SourceRawState)
	if err != nil {
		resp.Diagnostics.AddError(summary, "Reading the lifecycle_object state: "+err.Error())
		return
	}
	str := func(name string) string {
		var s string
		_ = json.Unmarshal(src[name], &s)
		return s
	}
	if kind := str("kind"); kind != r.cfg.kind {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("The object is %s, and lifecycle_%s manages %s objects only. "+
			"Move it to %s instead (or keep it in lifecycle_object).", withArticle(kind), r.cfg.typeName, r.cfg.kind, r.data.resourceTypeOf(kind)))
		return
	}
	// Start from a state holding only the timeouts block (the same block in both resources),
	// so every other attribute has its typed null.
	carried := map[string]json.RawMessage{}
	if t, ok := src["timeouts"]; ok {
		carried["timeouts"] = t
	}
	b, err := json.Marshal(carried)
	if err == nil {
		resp.TargetState.Raw, err = (&tfprotov6.RawState{JSON: b}).UnmarshalWithOpts(resp.TargetState.Schema.Type().TerraformType(ctx), tfprotov6.UnmarshalOpts{})
	}
	if err != nil {
		resp.Diagnostics.AddError(summary, "Carrying over the timeouts block: "+err.Error())
		return
	}
	m, diags := r.read(ctx, &resp.TargetState)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	known := func(name string) types.String {
		if s := str(name); s != "" {
			return types.StringValue(s)
		}
		return types.StringNull()
	}
	m.ID, m.Name, m.State = known("id"), known("name"), known("state")
	m.Kind = types.StringValue(r.cfg.kind)
	m.DeletionMode = known("deletion_mode")
	if r.cfg.hasStatus() {
		m.Status = known("status")
	}
	if r.cfg.parentAttr != "" {
		m.ParentID = known("parent_id")
	}
	m.LastError = types.StringValue("")
	// The typed fields take the spec the simulator holds (effective_spec; a version-0 state's
	// spec was all of it).
	var spec map[string]string
	if err := json.Unmarshal(src["effective_spec"], &spec); err != nil || spec == nil {
		_ = json.Unmarshal(src["spec"], &spec)
	}
	k := r.kindDeclared()
	values, diags := typedSpec(k, stringsAsAny(spec))
	resp.Diagnostics.Append(diags...)
	for _, f := range r.cfg.fields {
		v, d := tfValue(values[f.field.Name], f.field)
		resp.Diagnostics.Append(d...)
		m.Fields[f.attr] = v
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(r.write(ctx, &resp.TargetState, m)...)
}

// kindDeclared is the resource's kind as the simulator serves it when the provider is
// configured, else as the resource was derived from it (a `moved` block is planned before any
// resource is configured): the built-in declaration, or the user's kinds file.
func (r *kindResource) kindDeclared() *lifecycle.Kind {
	if r.data != nil {
		if k, err := r.data.kind(r.cfg.kind); err == nil {
			return k
		}
	}
	return r.cfg.declared
}
