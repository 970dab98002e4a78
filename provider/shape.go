package provider

import (
	"context"
	"fmt"
	"strings"

	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dataschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// resourceShape is what sets one resource type apart from the others that share the lifecycle
// engine (kindResource, and its list, action and data source): where its kind comes from and
// how it holds the object's spec. A typed resource (lifecycle_machine) has its kind fixed by
// its type and one attribute per spec field (typedShape, below); lifecycle_object takes the
// kind as an attribute and the spec as one dynamic value (objectShape, resource_object.go).
type resourceShape interface {
	kindSource
	specHolder
	stateVersions
	// hasStatus reports whether the resource has a status attribute users set.
	hasStatus(c kindConfig) bool
	// describe is the resource's description (the import forms it takes included), and
	// resourceAttrs adds the shape's attributes to the resource's schema.
	describe(c kindConfig) string
	resourceAttrs(c kindConfig, attrs map[string]schema.Attribute)
	// checkParent fails a plan that leaves out a parent the kind needs, where the schema
	// cannot require it.
	checkParent(c kindConfig, k *lifecycle.Kind, plan *objectModel, diags *diag.Diagnostics)
	// readWarnings adds what a refresh of o has to say beyond the warnings every resource
	// gives (noticed: the kind's own notice said it already); wanted is the status the state
	// asked for before the refresh.
	readWarnings(ctx context.Context, r *kindResource, k *lifecycle.Kind, m *objectModel, o *client.Object, wanted string, noticed bool, diags *diag.Diagnostics)
}

// kindSource is where a resource type's kind comes from: its type, or an attribute of its
// state, identity, import ID and of the configurations of its data source, list and action.
type kindSource interface {
	// kindIn is the kind a configuration, plan, state or identity is of.
	kindIn(ctx context.Context, src attrGetter) (types.String, diag.Diagnostics)
	// setKind records the kind in a state or identity that holds it.
	setKind(ctx context.Context, dst attrSetter, kind types.String) diag.Diagnostics
	// importID splits an import ID into the kind and the object's ID.
	importID(id string, diags *diag.Diagnostics) (kind, objectID string)
	// kindPath is the attribute an unknown kind is reported at.
	kindPath() path.Path
	// identityForm writes an identity as an import block's `identity` argument.
	identityForm(kind, id string) string
	// noun names the objects in descriptions ("machine", "object"); objects names them in
	// the plural ("machine objects", "objects").
	noun() string
	objects() string
	// listAttrs, actionAttrs and identityAttrs add the kind's attribute, where it has one,
	// to the schemas of the list resource, the action and the identity; filterDocs and
	// actionDoc describe the list filters and the action for the resource's docs.
	listAttrs(attrs map[string]listschema.Attribute)
	actionAttrs(attrs map[string]actionschema.Attribute)
	identityAttrs(attrs map[string]identityschema.Attribute)
	filterDocs() []string
	actionDoc(c kindConfig, typ string) string
}

// specHolder is how a resource type holds the object's spec: typed attributes, or one
// dynamic value beside the whole spec the simulator holds.
type specHolder interface {
	// readModel and writeModel read and write the shape's own attributes of a state, plan or
	// config; dataSourceAttrs and writeData are the data source's schema and state.
	readModel(attrs map[string]attr.Value, m *objectModel, diags *diag.Diagnostics)
	writeModel(m *objectModel, vals map[string]attr.Value)
	dataSourceAttrs(c kindConfig, attrs map[string]dataschema.Attribute)
	writeData(m *objectModel, set func(name string, v any))
	// readSpec fills the model's spec from the object the simulator holds (imported: a state
	// just imported, nothing in it configured).
	readSpec(c kindConfig, m *objectModel, o *client.Object, k *lifecycle.Kind, imported bool) diag.Diagnostics
	// diffSpec is what an update sends to turn the prior object's spec (before, as the
	// prior model asks for it) into next, and the spec the change applies to (specDiff).
	diffSpec(k *lifecycle.Kind, prior *objectModel, before, next map[string]any) (current, changes map[string]any, diags diag.Diagnostics)
	// writtenOut are the fields an update sends beside its changes (the diffSpec of before
	// and next) only so that the simulator records them as written: nil when the shape reads
	// back every field anyway.
	writtenOut(before, next, changes map[string]any) map[string]any
	// planSpec fills in a plan what the shape can tell of the spec before apply.
	planSpec(ctx context.Context, r *kindResource, k *lifecycle.Kind, plan *objectModel, state tfsdk.State, p *tfsdk.Plan, diags *diag.Diagnostics)
	// replacePaths are the attributes a plan marks for replacement when a spec field that
	// cannot change does (none where the schema's plan modifiers say it).
	replacePaths() []path.Path
}

// stateVersions are a resource type's state versions: the current one, the upgraders from
// the earlier ones, and the resource types `moved` blocks take objects from.
type stateVersions interface {
	schemaVersion() int64
	upgraders(r *kindResource) map[int64]resource.StateUpgrader
	movers(r *kindResource) []resource.StateMover
}

// attrGetter reads one attribute of a plan, state, config or identity.
type attrGetter interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}

// attrSetter writes one attribute of a state or identity.
type attrSetter interface {
	SetAttribute(ctx context.Context, p path.Path, val any) diag.Diagnostics
}

var (
	_ resourceShape = typedShape{}
	_ resourceShape = objectShape{}
)

// typedShape is a typed resource's: lifecycle_<kind>, whose kind is its type and whose spec
// fields are attributes of their own (kindConfig.fields).
type typedShape struct {
	kind string
}

// readModel holds the kind in the model for the shared code: it is the resource type's.
func (s typedShape) readModel(_ map[string]attr.Value, m *objectModel, _ *diag.Diagnostics) {
	m.Kind = types.StringValue(s.kind)
}

func (s typedShape) kindIn(context.Context, attrGetter) (types.String, diag.Diagnostics) {
	return types.StringValue(s.kind), nil
}

func (typedShape) setKind(context.Context, attrSetter, types.String) diag.Diagnostics { return nil }

func (typedShape) hasStatus(c kindConfig) bool { return len(c.statuses) > 0 }

func (s typedShape) noun() string    { return s.kind }
func (s typedShape) objects() string { return s.kind + " objects" }

func (typedShape) describe(c kindConfig) string {
	return c.description + "\n\nImport with the object's ID or, with Terraform " + identityVersion + "+, by its identity " +
		"(`import { identity = { id = \"...\" } }`)."
}

func (typedShape) resourceAttrs(c kindConfig, attrs map[string]schema.Attribute) {
	if c.parentAttr != "" {
		attrs[c.parentAttr] = schema.StringAttribute{
			Required:      true,
			Description:   fmt.Sprintf("ID of the %s the object lives in. Changing it replaces the object.", c.parentKind),
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		}
	}
}

// A typed resource has no kind attribute anywhere, and its spec fields are attributes of their
// own, read and written with the others (kindConfig.fields): nothing to add.
func (typedShape) dataSourceAttrs(kindConfig, map[string]dataschema.Attribute) {}
func (typedShape) listAttrs(map[string]listschema.Attribute)                   {}
func (typedShape) actionAttrs(map[string]actionschema.Attribute)               {}
func (typedShape) identityAttrs(map[string]identityschema.Attribute)           {}
func (typedShape) filterDocs() []string                                        { return nil }
func (typedShape) writeModel(*objectModel, map[string]attr.Value)              {}
func (typedShape) writeData(*objectModel, func(string, any))                   {}

func (typedShape) actionDoc(c kindConfig, typ string) string {
	if len(c.actions) == 0 {
		return ""
	}
	return fmt.Sprintf("; `action %q` blocks run %s", typ, quoted(c.actions))
}

// readSpec takes each typed field's value from the object's spec.
func (typedShape) readSpec(c kindConfig, m *objectModel, o *client.Object, _ *lifecycle.Kind, _ bool) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, f := range c.fields {
		v, d := tfValue(o.Spec[f.field.Name], f.field)
		diags.Append(d...)
		if keepPastTime(f.field, m.Fields[f.attr], o.Spec[f.field.Name]) {
			continue
		}
		m.Fields[f.attr] = v
	}
	return diags
}

// diffSpec compares the fields the prior model asks for: a typed resource's state holds every
// field the object has.
func (typedShape) diffSpec(_ *lifecycle.Kind, _ *objectModel, before, next map[string]any) (current, changes map[string]any, diags diag.Diagnostics) {
	return before, specChanges(before, next), nil
}

// writtenOut is nil: a typed resource's import reads every field, written or defaulted.
func (typedShape) writtenOut(_, _, _ map[string]any) map[string]any { return nil }

// planSpec has nothing to add: the typed fields are planned by their schema.
func (typedShape) planSpec(context.Context, *kindResource, *lifecycle.Kind, *objectModel, tfsdk.State, *tfsdk.Plan, *diag.Diagnostics) {
}

// replacePaths is empty: the immutable fields' attributes replace the object (RequiresReplace).
func (typedShape) replacePaths() []path.Path { return nil }

// checkParent has nothing to check: the schema requires the parent attribute.
func (typedShape) checkParent(kindConfig, *lifecycle.Kind, *objectModel, *diag.Diagnostics) {}

// readWarnings explains an object its last action left in an error state: why it failed,
// and the repair the kind offers for it.
func (typedShape) readWarnings(ctx context.Context, r *kindResource, k *lifecycle.Kind, m *objectModel, o *client.Object, wanted string, noticed bool, diags *diag.Diagnostics) {
	if noticed || !k.IsError(o.State) || o.Operation != nil {
		return
	}
	msg := "Its last action failed."
	if why := r.failureText(ctx, o); why != "" {
		msg = fmt.Sprintf("Its last action failed: %s.", strings.TrimSuffix(why, "."))
	}
	if advice := r.objectAdvice(k, m, o, wanted); advice != "" {
		msg += " " + advice
	}
	diags.AddWarning(fmt.Sprintf("%s %s is in %s", k.Name, o.ID, o.State), msg)
}

// importID takes the ID as it is: the kind is the resource's.
func (s typedShape) importID(id string, _ *diag.Diagnostics) (kind, objectID string) {
	return s.kind, id
}

func (typedShape) kindPath() path.Path { return path.Root("id") }

func (typedShape) identityForm(kind, id string) string { return identityForm(false, kind, id) }

// schemaVersion: the typed resources have had one version only.
func (typedShape) schemaVersion() int64                                     { return 0 }
func (typedShape) upgraders(*kindResource) map[int64]resource.StateUpgrader { return nil }

// movers take objects from lifecycle_object (move.go).
func (typedShape) movers(r *kindResource) []resource.StateMover {
	return []resource.StateMover{{StateMover: r.moveFromObject}}
}
