package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dataschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

var _ resource.ResourceWithUpgradeState = (*kindResource)(nil)

func objectKind() kindConfig {
	derived := objectDerivedAttr()
	return kindConfig{
		typeName: "object",
		description: "An object of any kind the simulator serves, including user-defined kinds loaded with " +
			"`lifecyclesim --kinds FILE`. The kind's state machine is read from the simulator (`GET /v1/kinds`) and " +
			"checked at plan time exactly as for the typed resources.\n\n" +
			"`spec` holds the fields the configuration sets; the defaults the simulator fills in for the others show " +
			"in `effective_spec` and are not drift. A kind whose spec declares no `deletion:` cannot be removed: " +
			"the plan warns, and `terraform destroy` forgets the object (it stays in the simulator until a reset).\n\n" +
			"Import with `KIND/ID`, or with an ID whose prefix names its kind, or with Terraform 1.12+ by identity " +
			"(`import { identity = { kind = \"machine\", id = \"...\" } }`). An imported object's `spec` holds " +
			"what its creator and later changes wrote, without the values the simulator filled in from the kind's " +
			"defaults (the object's `defaulted` paths), so the configuration that made it plans no changes, whether " +
			"it writes a default out, leaves one out, or writes `spec = {}`. `moved` blocks from `lifecycle_object` " +
			"to the kind's typed resource (for example `lifecycle_machine`) keep the object.",
		shape:      objectShape{},
		parentAttr: "parent_id",
		parentKind: "parent",
		derived:    &derived,
	}
}

// NewObjectResource is lifecycle_object: the generic resource for any kind.
func NewObjectResource() resource.Resource { return newKindResource(objectKind()) }

// objectShape is lifecycle_object's: its kind is an attribute (in its state, its identity
// and the configurations of its data source, list resource and action), and its spec is one
// dynamic value holding the fields the configuration sets, with the whole spec beside it
// (effective_spec).
type objectShape struct{}

func (objectShape) kindIn(ctx context.Context, src attrGetter) (types.String, diag.Diagnostics) {
	var kind types.String
	diags := src.GetAttribute(ctx, path.Root("kind"), &kind)
	return kind, diags
}

func (objectShape) setKind(ctx context.Context, dst attrSetter, kind types.String) diag.Diagnostics {
	return dst.SetAttribute(ctx, path.Root("kind"), kind)
}

// hasStatus: every lifecycle_object has a status, checked against its kind at plan time.
func (objectShape) hasStatus(kindConfig) bool { return true }

func (objectShape) noun() string    { return "object" }
func (objectShape) objects() string { return "objects" }

// describe is the description alone: it says the import forms.
func (objectShape) describe(c kindConfig) string { return c.description }

func (objectShape) resourceAttrs(c kindConfig, attrs map[string]rschema.Attribute) {
	if dm, ok := attrs["deletion_mode"].(rschema.StringAttribute); ok {
		dm.Description += " A kind that declares no deletion modes at all cannot be removed: the plan warns, and " +
			"destroying the resource only removes it from the Terraform state (the object stays in the simulator)."
		attrs["deletion_mode"] = dm
	}
	attrs["kind"] = rschema.StringAttribute{
		Required: true, Description: "The object's kind, as listed by `GET /v1/kinds` (built-in or loaded with `lifecyclesim --kinds`). Changing it replaces the object.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
	attrs["spec"] = rschema.DynamicAttribute{
		// Computed only so that an imported object with nothing written (spec = {}) and a
		// configuration without spec both plan no change (specOmitted).
		Optional: true, Computed: true, PlanModifiers: []planmodifier.Dynamic{specOmitted{}},
		Description: "The spec fields this configuration sets, as an object of HCL values: strings, numbers, " +
			"booleans, lists and objects as the kind declares them (`spec = { vcpus = 2, subgroups = [{ name = " +
			"\"web\", csp = \"aws\", region = \"us-east-1\" }] }`). Strings in the form of earlier releases " +
			"(`\"2\"`, JSON for lists and objects) are still taken for declared fields. Only these keys are compared " +
			"with the object: fields the simulator fills in (declared defaults, nested ones included) show in " +
			"`effective_spec` and are not drift. Values known only after apply (another resource's ID) are checked " +
			"by the simulator then.",
	}
	attrs["effective_spec"] = rschema.MapAttribute{
		ElementType: types.StringType, Computed: true,
		Description: "Every spec field the object has, as the simulator holds it: the configured ones and the " +
			"defaults the kind declares for the others.",
	}
	// The parent is optional: kinds without one are managed too (checkParent).
	attrs[c.parentAttr] = rschema.StringAttribute{
		Optional:      true,
		Description:   "ID of the parent object, for kinds that have one. Changing it replaces the object.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
}

// specOmitted plans lifecycle_object's spec where the configuration leaves it out: null (the
// configured keys all go), except that an empty object in the state stays (an import of an
// object whose creator wrote nothing, with `spec = {}` or without spec: both are no change).
type specOmitted struct{}

func (specOmitted) Description(context.Context) string {
	return "A spec the configuration leaves out is null; an empty one in the state stays."
}

func (m specOmitted) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (specOmitted) PlanModifyDynamic(_ context.Context, req planmodifier.DynamicRequest, resp *planmodifier.DynamicResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	if entries, ok := specEntries(req.StateValue); ok && len(entries) == 0 {
		resp.PlanValue = req.StateValue
		return
	}
	resp.PlanValue = types.DynamicNull()
}

func (objectShape) dataSourceAttrs(_ kindConfig, attrs map[string]dataschema.Attribute) {
	attrs["kind"] = dataschema.StringAttribute{Required: true, Description: "The object's kind."}
	attrs["spec"] = dataschema.MapAttribute{ElementType: types.StringType, Computed: true, Description: "The object's spec fields, as strings."}
}

func (objectShape) listAttrs(attrs map[string]listschema.Attribute) {
	attrs["kind"] = listschema.StringAttribute{Required: true, Description: "The kind of the objects to list, as listed by `GET /v1/kinds`."}
}

func (objectShape) actionAttrs(attrs map[string]actionschema.Attribute) {
	attrs["kind"] = actionschema.StringAttribute{Required: true, Description: "Kind of the object, as listed by `GET /v1/kinds`."}
}

func (objectShape) identityAttrs(attrs map[string]identityschema.Attribute) {
	attrs["kind"] = identityschema.StringAttribute{RequiredForImport: true,
		Description: "The object's kind, as listed by `GET /v1/kinds`."}
}

func (objectShape) filterDocs() []string { return []string{"`kind`"} }

func (objectShape) actionDoc(_ kindConfig, typ string) string {
	return fmt.Sprintf("; `action %q` blocks run any kind's actions that return an object to where it started, and its repairs", typ)
}

func (objectShape) readModel(attrs map[string]attr.Value, m *objectModel, diags *diag.Diagnostics) {
	m.Kind = attrAs[types.String](attrs, "kind", diags)
	m.Spec = attrAs[types.Dynamic](attrs, "spec", diags)
	m.EffectiveSpec = attrAs[types.Map](attrs, "effective_spec", diags)
}

func (objectShape) writeModel(m *objectModel, vals map[string]attr.Value) {
	vals["kind"] = m.Kind
	vals["spec"] = m.Spec
	vals["effective_spec"] = m.EffectiveSpec
}

// writeData shows the whole spec the simulator holds, as strings.
func (objectShape) writeData(m *objectModel, set func(name string, v any)) {
	set("kind", m.Kind)
	set("spec", m.EffectiveSpec)
}

func (objectShape) readSpec(_ kindConfig, m *objectModel, o *client.Object, k *lifecycle.Kind, imported bool) diag.Diagnostics {
	return objectSpecFrom(m, o, k, imported)
}

// replacePaths is the whole spec: Terraform marks no replacement inside a dynamic value.
func (objectShape) replacePaths() []path.Path { return []path.Path{path.Root("spec")} }

// checkParent fails a plan that leaves out the parent of a kind that has one (the attribute
// is optional, as kinds without a parent are managed too).
func (objectShape) checkParent(c kindConfig, k *lifecycle.Kind, plan *objectModel, diags *diag.Diagnostics) {
	if plan.ParentID.IsUnknown() || k.Parent == nil || !plan.ParentID.IsNull() {
		return
	}
	diags.AddAttributeError(path.Root(c.parentAttr), "Missing parent",
		fmt.Sprintf("%s objects live in a %s: set %s to its ID.", k.Name, k.Parent.Kind, c.parentAttr))
}

// readWarnings adds nothing: lifecycle_object's state shows an error state and last_error.
func (objectShape) readWarnings(context.Context, *kindResource, *lifecycle.Kind, *objectModel, *client.Object, string, bool, *diag.Diagnostics) {
}

// importID takes "KIND/ID", or an ID whose prefix names its kind (machine-0a1b...).
func (objectShape) importID(id string, diags *diag.Diagnostics) (kind, objectID string) {
	kind, rest, ok := strings.Cut(id, "/")
	if ok {
		return kind, rest
	}
	if kind = kindPrefix(id); kind == "" {
		diags.AddError("Invalid import ID", fmt.Sprintf("%q: import lifecycle_object as KIND/ID (for example machine/machine-0a1b2c3d4e5f6a7b).", id))
	}
	return kind, id
}

func (objectShape) kindPath() path.Path { return path.Root("kind") }

func (objectShape) identityForm(kind, id string) string { return identityForm(true, kind, id) }

// objectSchemaVersion is lifecycle_object's schema version. Version 1: `spec` holds only the
// keys the configuration sets (version 0 copied the simulator's whole spec into it, defaults
// included) and `effective_spec` holds the whole spec. Version 2: `spec` is a dynamic value
// (native HCL values) instead of a map of strings.
const objectSchemaVersion = 2

// UpgradeState upgrades the states of the resource type's earlier schema versions
// (resourceShape.upgraders).
func (r *kindResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return r.cfg.shape.upgraders(r)
}

func (objectShape) schemaVersion() int64 { return objectSchemaVersion }

// upgraders upgrade lifecycle_object states of versions 0 and 1.
func (objectShape) upgraders(r *kindResource) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{
		0: {StateUpgrader: r.upgradeObjectV0},
		1: {StateUpgrader: r.upgradeObjectV1},
	}
}

// movers: lifecycle_object takes no objects from other resource types.
func (objectShape) movers(*kindResource) []resource.StateMover { return nil }

// upgradeObjectV0 keeps a version-0 state's attributes. Its spec was the whole spec the
// simulator held: fields equal to their declared default are dropped from it when the kind is
// known (a configuration seldom sets a default), and the next refresh fills effective_spec.
// Either way the next plan sends nothing for a field whose value does not change (specDiff).
func (r *kindResource) upgradeObjectV0(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	old, spec, ok := oldObjectState(req, resp)
	if !ok {
		return
	}
	var kind string
	_ = json.Unmarshal(old["kind"], &kind)
	if r.data != nil && spec != nil {
		if k, err := r.data.kind(kind); err == nil {
			for key, v := range spec {
				if f, ok := k.Field(key); ok && f.Default != nil && stringOf(f.Default) == v {
					delete(spec, key)
				}
			}
		}
	}
	old["effective_spec"] = json.RawMessage("null")
	upgradedObjectState(ctx, old, spec, resp)
}

// upgradeObjectV1 turns a version-1 state's spec, a map of strings, into the dynamic value of
// version 2: an object of the same strings, which is what a configuration written for version
// 1 (`spec = { vcpus = "2" }`) gives, so the upgraded state plans no change.
func (r *kindResource) upgradeObjectV1(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	old, spec, ok := oldObjectState(req, resp)
	if !ok {
		return
	}
	upgradedObjectState(ctx, old, spec, resp)
}

// oldObjectState reads the attributes of a lifecycle_object state of version 0 or 1, and its
// spec (a map of strings; nil when null).
func oldObjectState(req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) (map[string]json.RawMessage, map[string]string, bool) {
	if req.RawState == nil || len(req.RawState.JSON) == 0 {
		resp.Diagnostics.AddError("Error upgrading lifecycle_object state", "The state has no JSON to upgrade. This is a bug in the provider.")
		return nil, nil, false
	}
	var old map[string]json.RawMessage
	if err := json.Unmarshal(req.RawState.JSON, &old); err != nil {
		resp.Diagnostics.AddError("Error upgrading lifecycle_object state", err.Error())
		return nil, nil, false
	}
	var spec map[string]string
	if raw, ok := old["spec"]; ok {
		_ = json.Unmarshal(raw, &spec)
	}
	return old, spec, true
}

// upgradedObjectState writes the upgraded state: old's attributes with spec as the dynamic
// object of its strings.
func upgradedObjectState(ctx context.Context, old map[string]json.RawMessage, spec map[string]string, resp *resource.UpgradeStateResponse) {
	old["spec"] = json.RawMessage("null")
	if spec != nil {
		types := map[string]string{}
		for key := range spec {
			types[key] = "string"
		}
		b, err := json.Marshal(map[string]any{"value": spec, "type": []any{"object", types}})
		if err != nil {
			resp.Diagnostics.AddError("Error upgrading lifecycle_object state", err.Error())
			return
		}
		old["spec"] = b
	}
	upgraded, err := json.Marshal(old)
	if err != nil {
		resp.Diagnostics.AddError("Error upgrading lifecycle_object state", err.Error())
		return
	}
	typ := resp.State.Schema.Type().TerraformType(ctx)
	v, err := (&tfprotov6.RawState{JSON: upgraded}).UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{})
	if err != nil {
		resp.Diagnostics.AddError("Error upgrading lifecycle_object state", err.Error())
		return
	}
	resp.State.Raw = v
}

// knownStrings is a string map's known, non-null elements: a spec value known only after
// apply (another resource's ID) is left out at plan and sent at apply, when it is known.
func knownStrings(m types.Map) map[string]string {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	for key, v := range m.Elements() {
		if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			out[key] = s.ValueString()
		}
	}
	return out
}

// objectSpecFrom fills lifecycle_object's spec and effective_spec from the object as the
// simulator holds it. effective_spec is all of it; spec keeps the keys the configuration set,
// written as it wrote them when the value is the same, so defaults the simulator fills in are
// never drift. Right after an import nothing is configured yet: spec takes every value that is
// not its field's default, which is what a configuration of the object sets.
func objectSpecFrom(m *objectModel, o *client.Object, k *lifecycle.Kind, imported bool) diag.Diagnostics {
	var diags diag.Diagnostics
	all := make(map[string]attr.Value, len(o.Spec))
	for key, v := range o.Spec {
		if v != nil {
			all[key] = types.StringValue(stringOf(v))
		}
	}
	eff, d := types.MapValue(types.StringType, all)
	diags.Append(d...)
	m.EffectiveSpec = eff
	switch {
	case m.Spec.IsUnknown():
		// A plan's unknown spec (known after apply) never reaches a read.
	case m.Spec.IsNull() && imported:
		m.Spec = importedSpec(k, o.Spec, o.Defaulted)
	case m.Spec.IsNull():
	default:
		entries, ok := specEntries(m.Spec)
		if !ok {
			break
		}
		kept := map[string]attr.Value{}
		for key, prev := range entries {
			v, ok := o.Spec[key]
			if !ok || v == nil {
				continue // gone on the server: the plan adds it back
			}
			if w, known := goValue(prev); known && sameWritten(k, key, w, v) {
				kept[key] = prev // as the configuration wrote it
				continue
			}
			kept[key] = nativeValue(v)
		}
		m.Spec = types.DynamicValue(attrsObject(kept))
	}
	return diags
}

// importedSpec is the spec an imported object is taken to be configured with: what its
// creator and later changes wrote, when the simulator says which values it filled in
// (defaulted, nested ones included), as native values, an empty object when nothing was
// written. A simulator that does not say (an object stored by an earlier version) leaves
// every value that is not its declared field's default, null when that leaves nothing.
func importedSpec(k *lifecycle.Kind, spec map[string]any, defaulted []string) types.Dynamic {
	if defaulted != nil {
		written := nativeSpec(lifecycle.WithoutPaths(spec, defaulted))
		if written.IsNull() {
			return types.DynamicValue(attrsObject(map[string]attr.Value{}))
		}
		return written
	}
	out := map[string]any{}
	for key, v := range spec {
		if v == nil {
			continue
		}
		if f, ok := k.Field(key); ok && f.Default != nil && stringOf(f.Default) == stringOf(v) {
			continue
		}
		out[key] = v
	}
	return nativeSpec(out)
}

// specDiff is what an update must send to turn the prior object's spec into next: the fields
// whose value changes, with nil for those to remove. For lifecycle_object it compares with
// the spec the simulator holds (effective_spec), so a configured value equal to the current
// one (a default written out) changes nothing, and a key dropped from the configuration whose
// value is its field's default is no change either. current is the spec the change applies
// to, as CheckUpdate takes it.
func (r *kindResource) specDiff(ctx context.Context, k *lifecycle.Kind, prior *objectModel, next map[string]any) (current, changes map[string]any, diags diag.Diagnostics) {
	before, diags := r.spec(ctx, prior, k)
	current, changes, d := r.cfg.shape.diffSpec(k, prior, before, next)
	diags.Append(d...)
	return current, changes, diags
}

// diffSpec compares with the spec the simulator holds (effective_spec; a state without it, as
// upgraded from version 0, compares with the spec it asked for).
func (objectShape) diffSpec(k *lifecycle.Kind, prior *objectModel, before, next map[string]any) (current, changes map[string]any, diags diag.Diagnostics) {
	if prior.EffectiveSpec.IsNull() || prior.EffectiveSpec.IsUnknown() {
		return before, specChanges(before, next), nil
	}
	current, diags = typedSpec(k, stringsAsAny(knownStrings(prior.EffectiveSpec)))
	changes = map[string]any{}
	for key, v := range next {
		// Compared as the simulator fills it in: an item leaving out a field with a default
		// (which the simulator holds filled in) is no change.
		want := v
		if filled, ok := k.Filled(key, v, time.Now()); ok && v != nil {
			want = filled
		}
		if fmt.Sprint(current[key]) != fmt.Sprint(want) {
			changes[key] = v
		}
	}
	for key := range before {
		if _, kept := next[key]; kept {
			continue
		}
		have, ok := current[key]
		if !ok {
			continue
		}
		if f, declared := k.Field(key); declared && f.Default != nil && stringOf(f.Default) == stringOf(have) {
			continue
		}
		changes[key] = nil
	}
	return current, changes, diags
}

// writtenOut are the keys the configuration now writes (or writes another way) with the
// value the object holds already: a default written out, an item spelling out its defaulted
// fields. No value changes, but the simulator records them as written (its defaulted paths),
// so an import reads them back as the configuration writes them.
func (objectShape) writtenOut(before, next, changes map[string]any) map[string]any {
	out := map[string]any{}
	for key, v := range next {
		if _, changed := changes[key]; changed {
			continue
		}
		if b, ok := before[key]; !ok || !reflect.DeepEqual(normalJSON(b), normalJSON(v)) {
			out[key] = v
		}
	}
	// A key dropped whose value is its default (no change): null, so it is defaulted again.
	for key := range before {
		_, kept := next[key]
		if _, changed := changes[key]; !kept && !changed {
			out[key] = nil
		}
	}
	return out
}

// planSpec keeps lifecycle_object's effective_spec known in a plan that sends no spec
// change to the simulator: one that adds a timeouts block after an import, or writes out a
// value the object already has.
func (objectShape) planSpec(ctx context.Context, r *kindResource, k *lifecycle.Kind, plan *objectModel, state tfsdk.State, p *tfsdk.Plan, diags *diag.Diagnostics) {
	if state.Raw.IsNull() || !r.specKnown(plan) {
		return
	}
	prior, d := r.read(ctx, state)
	if d.HasError() || prior.EffectiveSpec.IsNull() || !plan.Kind.Equal(prior.Kind) {
		return
	}
	if !plan.Spec.Equal(prior.Spec) {
		next, d := r.spec(ctx, plan, k)
		if d.HasError() {
			return
		}
		if _, changes, d := r.specDiff(ctx, k, prior, next); d.HasError() || len(changes) > 0 {
			return
		}
	}
	diags.Append(p.SetAttribute(ctx, path.Root("effective_spec"), prior.EffectiveSpec)...)
}

// checkDeletionMode checks the planned deletion_mode against the kind's deletion modes. A kind
// that has none cannot be removed at all: a new object of it gets a warning saying what
// terraform destroy does, rather than a plan error that leaves the user nothing to do.
func (r *kindResource) checkDeletionMode(k *lifecycle.Kind, plan *objectModel, create bool, diags *diag.Diagnostics) {
	if plan.DeletionMode.IsUnknown() {
		return
	}
	if len(k.Deletion) == 0 {
		if create {
			diags.AddAttributeWarning(path.Root("deletion_mode"), k.Name+" objects cannot be removed", undeletableDetail(k))
		}
		return
	}
	if _, ok := k.Deletion[plan.DeletionMode.ValueString()]; !ok {
		diags.AddAttributeError(path.Root("deletion_mode"), "Deletion mode not supported",
			fmt.Sprintf("%s objects cannot be removed with deletion_mode %q; use one of %s.",
				k.Name, plan.DeletionMode.ValueString(), quoted(slices.Sorted(maps.Keys(k.Deletion)))))
	}
}

// warnUndeletable warns, when a plan destroys the object id of kind k, a kind with no deletion
// modes, that destroying only forgets it.
func warnUndeletable(k *lifecycle.Kind, id string, diags *diag.Diagnostics) {
	if len(k.Deletion) > 0 {
		return
	}
	diags.AddWarning(k.Name+" "+id+" will be left in the simulator", undeletableDetail(k))
}

// undeletableDetail says what Terraform does with an object no action can remove, and what the
// user can do (advise).
func undeletableDetail(k *lifecycle.Kind) string {
	return advise(situation{k: k, event: evUndeletable}).text
}

// rawStateObject is the attribute values of a raw state, as JSON.
func rawStateObject(raw *tfprotov6.RawState) (map[string]json.RawMessage, error) {
	if raw == nil || len(raw.JSON) == 0 {
		return nil, fmt.Errorf("the state has no JSON")
	}
	var out map[string]json.RawMessage
	err := json.Unmarshal(raw.JSON, &out)
	return out, err
}
