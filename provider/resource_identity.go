package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ resource.ResourceWithIdentity = (*kindResource)(nil)

// identityVersion notes the Terraform release that reads resource identities, for the docs.
const identityVersion = "1.12"

// IdentitySchema gives every lifecycle resource an identity: the object's ID, and for
// lifecycle_object its kind too (a typed resource's kind is its type). Terraform 1.12+ stores
// it beside the state and imports by it (`import { identity = { id = "..." } }`).
func (r *kindResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	attrs := map[string]identityschema.Attribute{
		"id": identityschema.StringAttribute{RequiredForImport: true, Description: "The object's ID."},
	}
	r.cfg.shape.identityAttrs(attrs)
	resp.IdentitySchema = identityschema.Schema{Attributes: attrs}
}

// identityModel is a resource's identity; Kind only for lifecycle_object.
type identityModel struct {
	ID, Kind types.String
}

// identityOf is the identity of the object a model holds (not known when it has no ID yet).
func (r *kindResource) identityOf(m *objectModel) (identityModel, bool) {
	if m.ID.IsNull() || m.ID.IsUnknown() || m.ID.ValueString() == "" {
		return identityModel{}, false
	}
	return identityModel{ID: m.ID, Kind: m.Kind}, true
}

// setIdentity writes an identity (nil: Terraform sent no identity schema, as before 1.12).
func (r *kindResource) setIdentity(ctx context.Context, dst *tfsdk.ResourceIdentity, id identityModel) diag.Diagnostics {
	if dst == nil {
		return nil
	}
	diags := dst.SetAttribute(ctx, path.Root("id"), id.ID)
	diags.Append(r.cfg.shape.setKind(ctx, dst, id.Kind)...)
	return diags
}

// identify sets the identity from the state a create, update or read leaves, whatever path
// it took: deferred at their start, so no path that keeps an object forgets its identity.
func (r *kindResource) identify(ctx context.Context, st *tfsdk.State, dst *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	if dst == nil || st == nil || st.Raw.IsNull() || !st.Raw.IsKnown() {
		return
	}
	var id types.String
	diags.Append(st.GetAttribute(ctx, path.Root("id"), &id)...)
	kind, d := r.cfg.shape.kindIn(ctx, st)
	diags.Append(d...)
	if m := (&objectModel{ID: id, Kind: kind}); !diags.HasError() {
		if ident, ok := r.identityOf(m); ok {
			diags.Append(r.setIdentity(ctx, dst, ident)...)
		}
	}
}

// importIdentity is the import ID an identity stands for: the ID, and for lifecycle_object
// the kind beside it.
func (r *kindResource) importIdentity(ctx context.Context, src *tfsdk.ResourceIdentity) (id, kind string, diags diag.Diagnostics) {
	var v identityModel
	diags.Append(src.GetAttribute(ctx, path.Root("id"), &v.ID)...)
	k, d := r.cfg.shape.kindIn(ctx, src)
	diags.Append(d...)
	v.Kind = k
	if diags.HasError() {
		return "", "", diags
	}
	if v.ID.ValueString() == "" {
		diags.AddAttributeError(path.Root("id"), "Invalid import identity", "The identity's id is empty: set it to the object's ID.")
	}
	if v.Kind.ValueString() == "" { // a typed resource's kind is never empty
		diags.AddAttributeError(path.Root("kind"), "Invalid import identity",
			fmt.Sprintf("The identity's kind is empty: set it to the object's kind (for example %q).", kindPrefix(v.ID.ValueString())))
	}
	return v.ID.ValueString(), v.Kind.ValueString(), diags
}
