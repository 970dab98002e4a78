package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

const defaultTimeout = 20 * time.Minute

var (
	_ resource.ResourceWithConfigure   = (*kindResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*kindResource)(nil)
	_ resource.ResourceWithImportState = (*kindResource)(nil)
)

// kindResource is the one lifecycle resource implementation; a kindConfig makes it a machine,
// a disk, or (with no kind) the generic lifecycle_object.
type kindResource struct {
	cfg  kindConfig
	data *providerData
	// computed is cfg.computedAttrs(), made once: every read and write of a model walks it.
	computed []computedAttr
}

func newKindResource(cfg kindConfig) resource.Resource {
	return &kindResource{cfg: cfg, computed: cfg.computedAttrs()}
}

func (r *kindResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.cfg.typeName
}

func (r *kindResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	cfg := r.cfg
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed: true, Description: "The object's ID.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"name": schema.StringAttribute{
			Required: true, Description: "Name of the object. Changing it replaces the object.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"state": schema.StringAttribute{
			Computed: true,
			Description: "The object's current state as last read: a static state, or a transition state " +
				"(such as `DEPLOYING`) while an action runs.",
		},
		"deletion_mode": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("destroy"),
			Description: "How `terraform destroy` removes the object: `destroy` (the default) removes it permanently; " +
				"`delete` moves it to the kind's recycle bin (`DELETED`; an attached disk goes to `TOBEDELETED`), where " +
				"the kinds that can be restored (machines, cloudspaces, disks) plan a restore in place when the " +
				"resource is declared again. The plan fails if the kind has no such mode.",
			Validators: []validator.String{stringvalidator.OneOf("destroy", "delete")},
		},
	}
	if cfg.kind == "" {
		dm := attrs["deletion_mode"].(schema.StringAttribute)
		dm.Description += " A kind that declares no deletion modes at all cannot be removed: the plan warns, and " +
			"destroying the resource only removes it from the Terraform state (the object stays in the simulator)."
		attrs["deletion_mode"] = dm
		attrs["kind"] = schema.StringAttribute{
			Required: true, Description: "The object's kind, as listed by `GET /v1/kinds` (built-in or loaded with `lifecyclesim --kinds`). Changing it replaces the object.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		}
		attrs["spec"] = schema.MapAttribute{
			ElementType: types.StringType, Optional: true,
			Description: "The spec fields this configuration sets, as strings (numbers, booleans, lists and objects " +
				"written as the kind declares them; lists and objects as JSON). Only these keys are compared with the " +
				"object: fields the simulator fills in (declared defaults) show in `effective_spec` and are not drift. " +
				"Values known only after apply (another resource's ID) are checked by the simulator then.",
		}
		attrs["effective_spec"] = schema.MapAttribute{
			ElementType: types.StringType, Computed: true,
			Description: "Every spec field the object has, as the simulator holds it: the configured ones and the " +
				"defaults the kind declares for the others.",
		}
	}
	if cfg.parentAttr != "" {
		a := schema.StringAttribute{
			Description:   fmt.Sprintf("ID of the %s the object lives in. Changing it replaces the object.", cfg.parentKind),
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		}
		if cfg.kind == "" {
			a.Optional = true
			a.Description = "ID of the parent object, for kinds that have one. Changing it replaces the object."
		} else {
			a.Required = true
		}
		attrs[cfg.parentAttr] = a
	}
	if cfg.desired == nil {
		a := schema.StringAttribute{
			Optional: true, Computed: true,
			Description: "The desired static state. Checked at plan time: a plan fails if no sequence of actions " +
				"leads from the current state to this one. Apply walks the shortest route, action by action.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		}
		if len(cfg.statuses) > 0 {
			a.Description += " One of " + quoted(cfg.statuses) + "."
			a.Validators = []validator.String{stringvalidator.OneOf(cfg.statuses...)}
		}
		attrs["status"] = a
	}
	if len(cfg.waitFor) > 0 {
		attrs["wait_for"] = schema.StringAttribute{Optional: true,
			Description: "A state the create waits for, besides the end of the create itself, bounded by the create timeout: one of " +
				quoted(cfg.waitFor) + ". Unset, the create returns as soon as the object exists.",
			Validators: []validator.String{stringvalidator.OneOf(cfg.waitFor...)}}
	}
	if cfg.lastError {
		attrs["last_error"] = schema.StringAttribute{Computed: true,
			Description: "The message of the object's last failed operation (a failed scale rolled back, a failed create), empty when the last one succeeded."}
	}
	blocks := map[string]schema.Block{
		"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
	}
	for _, f := range cfg.fields {
		if f.block() {
			blocks[f.attr] = resourceBlock(f.field)
		} else {
			attrs[f.attr] = resourceAttribute(f.field)
		}
	}
	for _, a := range cfg.computedAttrs() {
		attrs[a.name] = a.resourceAttr()
	}
	desc := cfg.description
	if cfg.kind != "" {
		desc += "\n\nImport with the object's ID."
	}
	resp.Schema = schema.Schema{
		Version:     r.schemaVersion(),
		Description: desc,
		Attributes:  attrs,
		Blocks:      blocks,
	}
	markdownResourceSchema(&resp.Schema)
}

func (r *kindResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

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
	if r.cfg.desired == nil {
		m.Status = str("status")
	}
	if r.cfg.parentAttr != "" {
		m.ParentID = str(r.cfg.parentAttr)
	}
	if r.cfg.lastError {
		m.LastError = str("last_error")
	}
	if len(r.cfg.waitFor) > 0 {
		m.WaitFor = str("wait_for")
	}
	if r.cfg.kind == "" {
		m.Kind = str("kind")
		m.Spec = attrAs[types.Map](attrs, "spec", &diags)
		m.EffectiveSpec = attrAs[types.Map](attrs, "effective_spec", &diags)
	} else {
		m.Kind = types.StringValue(r.cfg.kind)
	}
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
	if r.cfg.desired == nil {
		vals["status"] = m.Status
	}
	if r.cfg.parentAttr != "" {
		vals[r.cfg.parentAttr] = m.ParentID
	}
	if r.cfg.lastError {
		vals["last_error"] = m.LastError
	}
	if len(r.cfg.waitFor) > 0 {
		vals["wait_for"] = m.WaitFor
	}
	if r.cfg.kind == "" {
		vals["kind"] = m.Kind
		vals["spec"] = m.Spec
		vals["effective_spec"] = m.EffectiveSpec
	}
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
		if !tv.Type().Equal(at) {
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
	typed, d := typedSpec(k, knownStrings(m.Spec))
	diags.Append(d...)
	maps.Copy(out, typed)
	return out, diags
}

// fromObject updates the model from the object as the server has it. The status becomes the
// static state the object is in or will settle in, so drift plans as an in-place update.
func (r *kindResource) fromObject(ctx context.Context, m *objectModel, o *client.Object, k *lifecycle.Kind) diag.Diagnostics {
	var diags diag.Diagnostics
	// A state just imported has no name yet: nothing in it was configured.
	imported := m.Name.IsNull()
	m.ID = types.StringValue(o.ID)
	m.Name = types.StringValue(o.Name)
	m.Kind = types.StringValue(o.Kind)
	m.State = types.StringValue(o.State)
	if r.cfg.parentAttr != "" {
		if o.ParentID != "" || !m.ParentID.IsNull() {
			m.ParentID = types.StringValue(o.ParentID)
		}
	}
	if m.DeletionMode.IsNull() || m.DeletionMode.IsUnknown() {
		m.DeletionMode = types.StringValue("destroy")
	}
	// A static object whose status is what was asked keeps it, even where the system would
	// move it on by itself (a cloudspace asked to be PAUSED). An object that failed into an
	// error state keeps the status it was asked for too: `state` shows the failure, and the
	// plan converges to (or replaces for) that status instead of taking the failure as the
	// status wanted.
	asked := m.Status.ValueString()
	keep := o.Static && asked == o.State
	if to := settled(k, o); k.IsError(to) && k.IsStatic(asked) && !k.IsError(asked) && !k.IsGone(asked) {
		keep = true
	}
	if !keep {
		m.Status = types.StringValue(settled(k, o))
	}
	for _, f := range r.cfg.fields {
		v, d := tfValue(o.Spec[f.field.Name], f.field)
		diags.Append(d...)
		if keepPastTime(f.field, m.Fields[f.attr], o.Spec[f.field.Name]) {
			continue
		}
		m.Fields[f.attr] = v
	}
	if r.cfg.lastError {
		msg := ""
		if le, ok := o.Status["last_error"].(map[string]any); ok {
			msg, _ = le["message"].(string)
		}
		m.LastError = types.StringValue(msg)
	}
	diags.Append(r.readRelated(ctx, m, o)...)
	if r.cfg.members != nil && r.data != nil {
		vals, d := r.cfg.members.observe(ctx, r.data, o)
		diags.Append(d...)
		if m.Computed == nil {
			m.Computed = map[string]attr.Value{}
		}
		maps.Copy(m.Computed, vals)
	}
	if r.cfg.kind == "" {
		diags.Append(objectSpecFrom(m, o, k, imported)...)
	}
	return diags
}

// readRelated fills the computed lists of the object's children.
func (r *kindResource) readRelated(ctx context.Context, m *objectModel, o *client.Object) diag.Diagnostics {
	var diags diag.Diagnostics
	if len(r.cfg.related) == 0 {
		return nil
	}
	if m.Computed == nil {
		m.Computed = map[string]attr.Value{}
	}
	for _, ra := range r.cfg.related {
		k, err := r.data.kind(ra.kind)
		if err != nil {
			diags.AddError("Error reading "+ra.kind+" objects", err.Error())
			continue
		}
		kids, err := r.data.client.ListAll(ctx, k.Collection, client.ListOptions{ParentID: o.ID})
		if err != nil {
			diags.AddError("Error reading "+ra.kind+" objects", explain(err))
			continue
		}
		slices.SortFunc(kids, func(a, b client.Object) int { return strings.Compare(a.Name, b.Name) })
		t := ra.objectType()
		items := make([]attr.Value, 0, len(kids))
		for _, kid := range kids {
			vals := map[string]attr.Value{"id": types.StringValue(kid.ID), "name": types.StringValue(kid.Name), "state": types.StringValue(kid.State)}
			for _, f := range ra.fields {
				vals[f] = types.StringNull()
				if v, ok := kid.Spec[f]; ok {
					vals[f] = types.StringValue(stringOf(v))
				}
			}
			ov, d := types.ObjectValue(t.AttrTypes, vals)
			diags.Append(d...)
			items = append(items, ov)
		}
		l, d := types.ListValue(t, items)
		diags.Append(d...)
		m.Computed[ra.attr] = l
	}
	return diags
}

// kindOf resolves the model's kind against the kinds the simulator serves.
func (r *kindResource) kindOf(m *objectModel) (*lifecycle.Kind, diag.Diagnostics) {
	var diags diag.Diagnostics
	k, err := r.data.kind(m.Kind.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("kind"), "Unknown kind", err.Error()+". Load user-defined kinds with `lifecyclesim --kinds FILE`.")
	}
	return k, diags
}

// desiredState is the static state the configuration asks for ("" when not known yet).
func (r *kindResource) desiredState(m *objectModel) string {
	if r.cfg.desired != nil {
		return r.cfg.desired(m)
	}
	if m.Status.IsNull() || m.Status.IsUnknown() {
		return ""
	}
	return m.Status.ValueString()
}

func (r *kindResource) params(m *objectModel) map[string]any {
	if r.cfg.params == nil {
		return nil
	}
	return r.cfg.params(m)
}

// modifyPlan validates the desired status against the state machine, so an impossible change
// fails the plan rather than half an apply, and plans the state the object will end in.
func (r *kindResource) modifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data == nil {
		return // the provider is not configured yet
	}
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			r.warnChildren(ctx, req.State, &resp.Diagnostics)
			r.warnUndeletable(ctx, req.State, &resp.Diagnostics)
		}
		return
	}
	plan, diags := r.read(ctx, req.Plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || plan.Kind.IsUnknown() {
		return
	}
	k, diags := r.kindOf(plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.checkDeletionMode(k, plan, req.State.Raw.IsNull(), &resp.Diagnostics)
	if k.MadeByParent {
		resp.Diagnostics.AddAttributeError(path.Root("kind"), "Kind made by its parent",
			fmt.Sprintf("%s objects are made and removed by their %s (from its spec), never on their own: manage the %s "+
				"instead, and read its %s objects with data sources.", k.Name, k.Parent.Kind, k.Parent.Kind, k.Name))
		return
	}
	r.checkSpec(ctx, k, plan, req.State, resp)
	r.planEffectiveSpec(ctx, k, plan, req.State, &resp.Plan, &resp.Diagnostics)
	if r.cfg.kind == "" && r.cfg.parentAttr != "" && !plan.ParentID.IsUnknown() {
		if k.Parent != nil && plan.ParentID.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root(r.cfg.parentAttr), "Missing parent",
				fmt.Sprintf("%s objects live in a %s: set %s to its ID.", k.Name, k.Parent.Kind, r.cfg.parentAttr))
		}
	}
	desired := r.desiredState(plan)
	var cfgStatus types.String
	if r.cfg.desired == nil {
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("status"), &cfgStatus)...)
	}
	if (r.cfg.desired != nil && desired == "") || cfgStatus.IsUnknown() {
		// The desired state depends on values known only at apply (apply checks the route),
		// or time drives the object (a lease): the state is known after apply, except when
		// nothing changes.
		if !req.State.Raw.IsNull() && req.Plan.Raw.Equal(req.State.Raw) {
			return
		}
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("state"), types.StringUnknown())...)
		return
	}
	var prior *objectModel
	from, describe := "", ""
	if req.State.Raw.IsNull() {
		lands, err := k.Lands(k.Create.To, "")
		if err != nil {
			lands = k.Create.To
		}
		from = lands
		if desired == "" {
			desired = from
			if r.cfg.desired == nil {
				resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringValue(desired))...)
			}
		}
	} else {
		prior, diags = r.read(ctx, req.State)
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
		from = prior.State.ValueString()
		// Inside a transition the refresh could settle (an action that returns, such as a
		// clone), start from where it settles.
		if ps := prior.Status.ValueString(); k.IsTransition(from) && k.IsStatic(ps) {
			from = ps
		}
		if r.cfg.members != nil {
			// Routes start where the object stands once its members are repaired (an MCI
			// whose dominant status is Failed is Running once its failed VMs are refined).
			var converge bool
			from, describe, converge = r.cfg.members.plan(prior, plan, from)
			if converge {
				resp.Diagnostics.Append(r.planMembersUnknown(ctx, &resp.Plan)...)
			}
		}
		// An object found in the recycle bin whose configuration names no status is restored
		// in place, to the status a new one would have.
		if r.cfg.desired == nil && cfgStatus.IsNull() && slices.Contains(k.DeletionTargets("delete"), from) {
			if lands, err := k.Lands(k.Create.To, ""); err == nil && k.CanTransition(from, lands, false) {
				desired = lands
				resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), types.StringValue(desired))...)
			}
		}
		// A state the resource holds (an administrator's repair) is left as it is.
		if slices.Contains(r.cfg.holds, from) {
			desired = from
		}
		if desired == "" {
			return
		}
	}
	if !k.IsStatic(desired) || k.IsGone(desired) {
		resp.Diagnostics.AddAttributeError(path.Root("status"), "Invalid status",
			fmt.Sprintf("%q is not a state a %s can be asked to be in. Choose one of %s.", desired, k.Name, quoted(k.RequestableStates())))
		return
	}
	route, err := k.Route(from, "", desired, false)
	if err != nil {
		what := fmt.Sprintf("The %s is %s", k.Name, from)
		if describe != "" {
			what = fmt.Sprintf("The %s is %s", k.Name, describe)
		}
		if prior == nil {
			what = fmt.Sprintf("A new %s starts %s", k.Name, from)
		}
		attrPath := path.Root("status")
		if r.cfg.desired != nil {
			attrPath = path.Root("state")
		}
		detail := fmt.Sprintf("%s, and the route to %s cannot be told: %v.", what, desired, err)
		var noRoute *lifecycle.NoRouteError
		if errors.As(err, &noRoute) {
			detail = fmt.Sprintf("%s, and no sequence of actions leads from %s to %s.\n\nStates reachable from %s: %s.",
				what, from, desired, from, listOr(noRoute.Reachable, "none"))
			if prior != nil && newObjectReaches(k, desired) {
				// Only a new object gets there: the plan replaces this one (see plan_spec.go).
				keep := ""
				if r.cfg.desired == nil && len(noRoute.Reachable) > 0 {
					keep = "To keep this one, ask for one of the states reachable from " + from + "."
				}
				r.planReplace(ctx, resp, attrPath, fmt.Sprintf("%s %s will be replaced", k.Name, prior.ID.ValueString()), detail+
					fmt.Sprintf(" A new %s gets to %s.", k.Name, desired), keep)
				return
			}
			detail += " Choose one of them."
		}
		resp.Diagnostics.AddAttributeError(attrPath, "Impossible status change", detail)
		return
	}
	// The object ends in the desired state, except when it is static somewhere the system
	// will move it from by itself (a PAUSED cloudspace that self-healing resumes). Apply does
	// not wait for that: with nothing else to change the plan is empty; otherwise the state
	// after apply is not known in advance.
	planned := types.StringValue(desired)
	if prior == nil {
		// Known only after the create: an interrupted create is kept in the state wherever it
		// got to (a plan cannot promise the state it ends in).
		planned = types.StringUnknown()
	}
	if prior != nil && len(route) == 0 && prior.State.ValueString() != desired {
		// Nothing to run: the object is on its way (a transition that ends at the desired
		// state, or the system about to move it there). With nothing else to change the plan
		// is empty; otherwise apply waits for a transition to end, but does not wait for the
		// system, so the state after apply is not known then.
		planned = prior.State
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("state"), planned)...)
		if !resp.Plan.Raw.Equal(req.State.Raw) {
			planned = types.StringUnknown()
			if k.IsTransition(prior.State.ValueString()) {
				planned = types.StringValue(desired)
			}
		}
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("state"), planned)...)
	if r.cfg.members != nil && prior != nil && !resp.Plan.Raw.Equal(req.State.Raw) {
		// An update may leave members short (a VM that fails): the state after it is not
		// known in advance.
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("state"), types.StringUnknown())...)
		resp.Diagnostics.Append(r.planMembersUnknown(ctx, &resp.Plan)...)
	}
	if len(route) > 0 {
		tflog.Debug(ctx, "planned lifecycle route", map[string]any{"kind": k.Name, "from": from, "to": desired, "actions": route.Actions()})
	}
	actions := route.Actions()
	if prior == nil {
		actions = append([]string{k.Create.Name}, actions...)
	} else if k.Update != "" && r.specKnown(plan) && r.specKnown(prior) {
		after, _ := r.spec(ctx, plan, k)
		if _, changes, _ := r.specDiff(ctx, k, prior, after); len(changes) > 0 {
			actions = append([]string{k.Update}, actions...)
		}
	}
	r.warnGuards(ctx, k, plan, actions, &resp.Diagnostics)
}

// planMembersUnknown marks the attributes the members give as known after apply.
func (r *kindResource) planMembersUnknown(ctx context.Context, plan *tfsdk.Plan) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, a := range r.cfg.members.computed() {
		v, err := a.unknown(ctx)
		if err != nil {
			diags.AddError("Error planning "+a.name, err.Error())
			continue
		}
		diags.Append(plan.SetAttribute(ctx, path.Root(a.name), v)...)
	}
	return diags
}

// warnGuards warns when the parent, or an ancestor a guard looks at (a cloudlet two levels
// up), is right now in a state the planned actions cannot run under. It is a warning, not an
// error: the system may be moving it there (the apply waits), or the same apply may.
//
// It reads only the ancestors the planned actions' guards name, through the run's cache:
// the children of one parent read it once, not once each.
func (r *kindResource) warnGuards(ctx context.Context, k *lifecycle.Kind, m *objectModel, actions []string, diags *diag.Diagnostics) {
	if k.Parent == nil || len(actions) == 0 || m.ParentID.IsNull() || m.ParentID.IsUnknown() {
		return
	}
	type guarded struct {
		action string
		guard  lifecycle.Guard
	}
	var guards []guarded
	named := map[string]bool{}
	for _, name := range actions {
		a, ok := k.Action(name)
		if !ok {
			continue
		}
		for _, g := range k.GuardsFor(a) {
			if g.Ancestor != "" { // guards on linked objects are the apply's to check
				guards = append(guards, guarded{name, g})
				named[g.Ancestor] = true
			}
		}
	}
	if len(guards) == 0 {
		return
	}
	type related struct {
		k *lifecycle.Kind
		o *client.Object
	}
	// The ancestors, nearest first, each read once, up to the farthest one a guard names.
	var chain []related
	for ck, id := k, m.ParentID.ValueString(); ck.Parent != nil && id != "" && len(named) > 0 && len(chain) < 8; {
		pk, err := r.data.kind(ck.Parent.Kind)
		if err != nil {
			break
		}
		p, err := r.data.reads.get(ctx, pk.Collection, id)
		if err != nil {
			break // a missing parent is reported by the apply, with the server's words
		}
		chain = append(chain, related{pk, p})
		delete(named, pk.Name)
		ck, id = pk, p.ParentID
	}
	for _, ga := range guards {
		name, g := ga.action, ga.guard
		for _, c := range chain {
			if c.k.Name != g.Ancestor || slices.Contains(g.States, c.o.State) {
				continue
			}
			what := fmt.Sprintf("The %s's %s %s is %s, but %s %q needs it %s.", k.Name, c.k.Name, c.o.ID, c.o.State, k.Name, name, strings.Join(g.States, " or "))
			if to := settled(c.k, c.o); to != c.o.State && slices.Contains(g.States, to) {
				diags.AddAttributeWarning(path.Root(r.cfg.parentAttr), fmt.Sprintf("%s %s is %s", c.k.Name, c.o.ID, c.o.State),
					fmt.Sprintf("%s The system is moving it to %s: the apply waits for that before it runs %q.", what, to, name))
			} else {
				diags.AddAttributeWarning(path.Root(r.cfg.parentAttr), "Parent not ready",
					fmt.Sprintf("%s The apply will fail unless the %s gets there first.", what, c.k.Name))
			}
			return
		}
	}
}

// liveChildren lists the live objects under the object that its deletion refuses to remove
// (ClusterInsts on a cloudlet), as "kind id (name)".
func (r *kindResource) liveChildren(ctx context.Context, k *lifecycle.Kind, id string) ([]string, error) {
	var out []string
	for _, ck := range r.data.kinds.Kinds() {
		if ck.Parent == nil || ck.Parent.Kind != k.Name || ck.DeletePolicy() != lifecycle.DeleteRefuse {
			continue
		}
		objs, err := r.data.client.ListAll(ctx, ck.Collection, client.ListOptions{ParentID: id})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if !ck.IsGone(o.State) {
				out = append(out, fmt.Sprintf("%s %s (%q, %s)", ck.Name, o.ID, o.Name, o.State))
			}
		}
	}
	return out, nil
}

// warnChildren warns, when a plan destroys the object, about live children that refuse its
// deletion. Terraform destroys the children the configuration manages first; others (managed
// elsewhere, or by no one) make the apply refuse.
func (r *kindResource) warnChildren(ctx context.Context, st tfsdk.State, diags *diag.Diagnostics) {
	m, d := r.read(ctx, st)
	if d.HasError() || m.ID.IsNull() || m.Kind.IsUnknown() {
		return
	}
	k, err := r.data.kind(m.Kind.ValueString())
	if err != nil {
		return
	}
	children, err := r.liveChildren(ctx, k, m.ID.ValueString())
	if err != nil || len(children) == 0 {
		return
	}
	diags.AddWarning(fmt.Sprintf("%s %s still has live children", k.Name, m.ID.ValueString()),
		fmt.Sprintf("A %s with live children cannot be deleted, and it has: %s.\n\nTerraform destroys the ones this configuration "+
			"manages first. If others remain when the %s's turn comes, the apply refuses to delete it, naming them: delete them "+
			"first (or remove the %s from this configuration with terraform state rm).",
			k.Name, strings.Join(children, ", "), k.Name, k.Name))
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}

// timeoutFor picks one of the timeouts block's values.
type timeoutFor func(timeouts.Value, context.Context, time.Duration) (time.Duration, diag.Diagnostics)

// begin reads the model and its kind, and bounds ctx by the operation's timeout. The caller
// must call cancel when ok.
func (r *kindResource) begin(ctx context.Context, src getter, pick timeoutFor, diags *diag.Diagnostics) (
	m *objectModel, k *lifecycle.Kind, opCtx context.Context, cancel context.CancelFunc, ok bool,
) {
	if !r.data.ready(diags) {
		return nil, nil, nil, nil, false
	}
	m, d := r.read(ctx, src)
	diags.Append(d...)
	if diags.HasError() {
		return nil, nil, nil, nil, false
	}
	k, d = r.kindOf(m)
	diags.Append(d...)
	timeout, d := pick(m.Timeouts, ctx, defaultTimeout)
	diags.Append(d...)
	if diags.HasError() {
		return nil, nil, nil, nil, false
	}
	opCtx, cancel = context.WithTimeout(ctx, timeout)
	return m, k, opCtx, cancel, true
}

func (r *kindResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, k, opCtx, cancel, ok := r.begin(ctx, req.Plan, timeouts.Value.Create, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()

	summary := "Error creating " + k.Name
	desired := r.desiredState(plan)
	spec, diags := r.spec(ctx, plan, k)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	// A create refused for the state of a related object the system moves on (a cloudlet
	// upgrading) waits for it, then asks again. The server answers at once with the new
	// object and again, on the same request, once it is static: the walker's wait reads that.
	w := r.walker(k, plan)
	var o *client.Object
	err := w.unblocked(opCtx, k.Create.Name, func() error {
		var err error
		o, err = w.create(opCtx, client.CreateRequest{Name: plan.Name.ValueString(), ParentID: plan.ParentID.ValueString(), Spec: spec})
		return err
	})
	if err != nil {
		resp.Diagnostics.AddError(summary, explain(err))
		return
	}
	// Save the ID before any wait: whatever happens next, the object is in state and never
	// orphaned.
	plan.ID = types.StringValue(o.ID)
	early := *plan
	early.Fields = maps.Clone(plan.Fields)
	resp.Diagnostics.Append(r.fromObject(ctx, &early, o, k)...)
	early.Status = plan.Status
	resp.Diagnostics.Append(r.write(ctx, &resp.State, &early)...)
	tflog.Info(ctx, "created object, waiting for it to become static", map[string]any{"kind": k.Name, "id": o.ID, "state": o.State})

	created := false
	o, err = w.waitCreated(opCtx, o)
	walk := err == nil
	if r.cfg.members != nil && o != nil && ctx.Err() == nil {
		var warns diag.Diagnostics
		o, walk, warns, err = r.cfg.members.landed(opCtx, r.data, k, "create", o, err)
		resp.Diagnostics.Append(warns...)
	}
	if err == nil {
		created = true
		if walk {
			o, err = w.converge(opCtx, o, desired)
		}
	}
	if err == nil && !plan.WaitFor.IsNull() && !plan.WaitFor.IsUnknown() {
		o, err = w.waitState(opCtx, o, plan.WaitFor.ValueString())
	}
	if err == nil || ctx.Err() == nil {
		if err != nil && opCtx.Err() != nil {
			err = &createTimeoutError{kind: k.Name, err: err}
		}
		r.finish(ctx, k, plan, o, err, summary, &resp.State, &resp.Diagnostics)
		return
	}
	// Interrupted (Ctrl-C: Terraform cancelled the request). Terraform taints every create
	// that returns an error and replaces it on the next apply, so a healthy object is
	// returned with a warning instead: untainted, and the next apply resumes it.
	if o == nil || o.Operation != nil {
		// The last object seen may be stale (or none was seen): read it once more, on a
		// context the interruption did not cancel.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		if fresh, gerr := r.data.client.Get(rctx, k.Collection, plan.ID.ValueString()); gerr == nil {
			o = fresh
		}
		rcancel()
	}
	var fin diag.Diagnostics
	r.finish(ctx, k, plan, o, nil, summary, &resp.State, &fin)
	resp.Diagnostics.Append(fin.Errors()...)
	resp.Diagnostics.Append(fin.Warnings()...)
	if state := plan.State.ValueString(); !created && !healthyCreate(o) {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("%v.\n\nThe %s %s is %s and its create did not succeed. Terraform marks it "+
			"tainted: the next apply replaces it (terraform untaint ADDRESS keeps it instead).", err, k.Name, plan.ID.ValueString(), state))
		return
	}
	resp.Diagnostics.AddWarning("Create of "+k.Name+" interrupted", fmt.Sprintf(
		"The apply was interrupted while the %s %s was %s. It is kept in the state and not tainted: the next "+
			"terraform apply waits for it and carries on from where it is (it is not replaced).",
		k.Name, plan.ID.ValueString(), orUnknown(plan.State.ValueString())))
}

// healthyCreate reports whether an object whose create was interrupted is on its way: its
// create operation still runs and is not failing.
func healthyCreate(o *client.Object) bool {
	return o != nil && o.Operation != nil && o.Operation.Error == ""
}

// createTimeoutError is a create that ran out of time. Terraform taints the resource, so the
// message says what the next apply does and how to keep the object instead.
type createTimeoutError struct {
	kind string
	err  error
}

func (e *createTimeoutError) Error() string { return e.err.Error() }

func (e *createTimeoutError) Unwrap() error { return e.err }

// finish records the object's final state after an apply step, on a context detached from a
// cancelled one, so an interrupted apply keeps the object in state; then reports err.
func (r *kindResource) finish(ctx context.Context, k *lifecycle.Kind, m *objectModel, o *client.Object, err error, summary string, st *tfsdk.State, diags *diag.Diagnostics) {
	// Every read from here on (the object, its children, its members) runs on a context the
	// user's interruption or the timeout did not cancel: the state must record the object.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	wanted := r.desiredState(m)
	if err != nil || o == nil {
		if fresh, gerr := r.data.client.Get(rctx, k.Collection, m.ID.ValueString()); gerr == nil {
			o = fresh
		} else if client.IsNotFound(gerr) && err != nil {
			r.data.reads.forget(k.Collection, m.ID.ValueString())
			st.RemoveResource(ctx)
			diags.AddError(summary, explain(err)+"\n\nThe object no longer exists, so it was removed from the state.")
			return
		}
	}
	if o != nil {
		r.data.reads.put(k.Collection, o)
		planned := m.Status
		diags.Append(r.fromObject(rctx, m, o, k)...)
		if err == nil && r.cfg.desired == nil && !planned.IsUnknown() && !planned.IsNull() {
			// The route ended where the plan said: keep its status, also when the system is
			// about to move the object on (self-healing), which the next refresh shows.
			m.Status = planned
		}
		diags.Append(r.write(ctx, st, m)...)
	}
	if err != nil {
		detail := explain(err)
		if o != nil && k.IsError(o.State) && o.Operation == nil {
			if advice := errorStateAdvice(k, o.State, wanted, slices.Contains(r.cfg.holds, o.State)); advice != "" {
				detail += "\n\n" + advice
			}
		}
		diags.AddError(summary, detail)
	}
}

// settled is the static state the object is in, or will settle in without user action; the
// state itself when that cannot be told.
func settled(k *lifecycle.Kind, o *client.Object) string {
	var (
		s   string
		err error
	)
	if o.Operation != nil {
		s, err = k.Settles(o.State, o.Operation.Action, o.Operation.From)
	} else {
		s, err = k.Lands(o.State, "")
	}
	if err != nil {
		return o.State
	}
	return s
}

func (r *kindResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !r.data.ready(&resp.Diagnostics) {
		return
	}
	m, diags := r.read(ctx, req.State)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	k, diags := r.kindOf(m)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	o, err := r.data.client.Get(ctx, k.Collection, m.ID.ValueString())
	if client.IsNotFound(err) {
		tflog.Info(ctx, "object is gone; removing it from the state", map[string]any{"kind": k.Name, "id": m.ID.ValueString()})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Error reading "+k.Name, explain(err))
		return
	}
	r.data.reads.put(k.Collection, o)
	// The status the state asks for, before the refresh records where the object is.
	wanted := r.desiredState(m)
	resp.Diagnostics.Append(r.fromObject(ctx, m, o, k)...)
	resp.Diagnostics.Append(r.write(ctx, &resp.State, m)...)
	noticed := false
	if r.cfg.notice != nil {
		if msg := r.cfg.notice(o); msg != "" {
			resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s is %s", k.Name, o.ID, o.State), msg)
			noticed = true // one message per situation: the kind's own says it
		}
	}
	if msg := stuckWarning(k, o); msg != "" {
		resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s is stuck in %s", k.Name, o.ID, o.State), msg)
	}
	if r.cfg.kind != "" && !noticed && k.IsError(o.State) && o.Operation == nil {
		msg := "Its last action failed."
		if why := r.failureText(ctx, o); why != "" {
			msg = fmt.Sprintf("Its last action failed: %s.", strings.TrimSuffix(why, "."))
		}
		if advice := errorStateAdvice(k, o.State, wanted, slices.Contains(r.cfg.holds, o.State)); advice != "" {
			msg += " " + advice
		}
		resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s is in %s", k.Name, o.ID, o.State), msg)
	}
}

// stuckAfter is how long past its due time (or, for a phase that announced none, after it
// began) a transition counts as stuck.
const stuckAfter = time.Minute

// stuckWarning explains an object whose transition has overrun by more than stuckAfter, by
// the server's clock; "" when it has not. Terraform plans such an object as if it will land
// where the transition leads, so without this warning a plan would say "No changes".
func stuckWarning(k *lifecycle.Kind, o *client.Object) string {
	op := o.Operation
	if op == nil || o.ReadAt.IsZero() || op.PhaseStartedAt.IsZero() {
		return ""
	}
	// ReadAt is the server's Date header, in whole seconds: the phase's start is taken at that
	// resolution too, so a phase that started 3m ago never reads as 2m59s.
	started := op.PhaseStartedAt.Truncate(time.Second)
	late := o.ReadAt.Sub(started)
	due := "announced no time it would finish"
	if !op.DueAt.IsZero() {
		late = o.ReadAt.Sub(op.DueAt)
		due = "was due to finish at " + op.DueAt.UTC().Format(time.RFC3339)
	}
	if late <= stuckAfter {
		return ""
	}
	lands := settled(k, o)
	return fmt.Sprintf("The %s has been %s (action %q) since %s, %s ago by the simulator's clock, and %s. "+
		"Terraform plans it as if it will land in %s, so the plan may show no changes although nothing is moving.\n\n"+
		"What to do: wait for the simulator's self-healing (it repairs transitions stuck longer than its heal_after, 10m by "+
		"default), look for a fault rule that hangs it (GET /v1/sim/faults), then run terraform apply again: it waits for "+
		"the object to be static before it changes anything.",
		k.Name, o.State, op.Action, op.PhaseStartedAt.UTC().Format(time.RFC3339),
		o.ReadAt.Sub(started), due, lands)
}

func (r *kindResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if _, only := terraformOnlyChange(req.Plan.Schema.GetAttributes(), req.State.Raw, req.Plan.Raw); only {
		// Only Terraform's own settings change (a timeouts block): the object is not touched.
		resp.State.Raw = req.Plan.Raw
		return
	}
	plan, k, ctx, cancel, ok := r.begin(ctx, req.Plan, timeouts.Value.Update, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	prior, diags := r.read(ctx, req.State)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	summary := "Error updating " + k.Name
	plan.ID = prior.ID
	w := r.walker(k, plan)
	var o *client.Object
	var err error
	after, d := r.spec(ctx, plan, k)
	resp.Diagnostics.Append(d...)
	_, changes, d := r.specDiff(ctx, k, prior, after)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.cfg.members != nil {
		o, err = r.cfg.members.repair(ctx, r.data, k, prior)
	}
	partial := false
	if err == nil && len(changes) > 0 {
		o, err = w.patch(ctx, changes)
		if r.cfg.members != nil && o != nil {
			// Members that failed in part (a scale-out where some VMs fail) are a warning
			// naming them: the state shows the shortfall, and the next apply converges it.
			var warns diag.Diagnostics
			var walk bool
			o, walk, warns, err = r.cfg.members.landed(ctx, r.data, k, k.Update, o, err)
			resp.Diagnostics.Append(warns...)
			partial = err == nil && !walk
		}
	}
	if partial {
		r.finish(ctx, k, plan, o, nil, summary, &resp.State, &resp.Diagnostics)
		return
	}
	if err == nil && r.cfg.via != nil {
		if via := r.cfg.via(prior, plan); via != "" {
			o, err = r.walker(k, prior).convergeFrom(ctx, o, prior.State.ValueString(), via)
		}
	}
	if err == nil {
		desired := r.desiredState(plan)
		if slices.Contains(r.cfg.holds, prior.State.ValueString()) {
			desired = "" // left where it is: only wait for it to be static
		}
		// With nothing read yet (o nil), this starts from where the plan saw the object.
		o, err = w.convergeFrom(ctx, o, prior.State.ValueString(), desired)
	}
	if err == nil && r.cfg.members != nil {
		var warns diag.Diagnostics
		o, warns, err = r.cfg.members.complete(ctx, r.data, k, plan, o)
		resp.Diagnostics.Append(warns...)
	}
	r.finish(ctx, k, plan, o, err, summary, &resp.State, &resp.Diagnostics)
}

// specKnown reports whether every spec value of the model is known (not waiting for apply).
func (r *kindResource) specKnown(m *objectModel) bool {
	if m.Spec.IsUnknown() {
		return false
	}
	for _, v := range m.Spec.Elements() {
		if v.IsUnknown() {
			return false
		}
	}
	for _, v := range m.Fields {
		if v != nil && v.IsUnknown() {
			return false
		}
	}
	return true
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

func (r *kindResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m, k, ctx, cancel, ok := r.begin(ctx, req.State, timeouts.Value.Delete, &resp.Diagnostics)
	if !ok {
		return
	}
	defer cancel()
	mode := m.DeletionMode.ValueString()
	if mode == "" {
		mode = "destroy"
	}
	if len(k.Deletion) == 0 {
		resp.Diagnostics.AddWarning(k.Name+" "+m.ID.ValueString()+" left in the simulator", undeletableDetail(k))
		return
	}
	// Refuse before deleting anything when live children forbid it (the server would refuse the
	// delete too, but only after a route to it had run).
	if children, err := r.liveChildren(ctx, k, m.ID.ValueString()); err == nil && len(children) > 0 {
		resp.Diagnostics.AddError("Error deleting "+k.Name, fmt.Sprintf(
			"The %s %s still has live children, and a %s with children cannot be deleted: %s.\n\n"+
				"Nothing was deleted. Delete them first (they are not managed by this configuration), then apply again.",
			k.Name, m.ID.ValueString(), k.Name, strings.Join(children, ", ")))
		return
	}
	err := r.walker(k, m).remove(ctx, mode, m.State.ValueString())
	r.data.reads.forget(k.Collection, m.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Error deleting "+k.Name, explain(err))
	}
}

func (r *kindResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	kind := r.cfg.kind
	if kind == "" {
		// lifecycle_object: "KIND/ID", or an ID whose prefix names its kind (machine-0a1b...).
		var rest string
		var ok bool
		kind, rest, ok = strings.Cut(id, "/")
		if !ok {
			if kind = kindPrefix(id); kind == "" {
				resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("%q: import lifecycle_object as KIND/ID (for example machine/machine-0a1b2c3d4e5f6a7b).", id))
				return
			}
			rest = id
		}
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("kind"), kind)...)
		id = rest
	}
	if r.data != nil {
		resp.Diagnostics.Append(r.checkImport(ctx, kind, id)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("deletion_mode"), "destroy")...)
}

// kindPrefix is the kind an object ID names (machine-0a1b... is a machine), "" if none.
func kindPrefix(id string) string {
	i := strings.LastIndex(id, "-")
	if i <= 0 {
		return ""
	}
	return id[:i]
}

// checkImport makes sure an object of the kind has the ID, so a wrong ID fails the import with
// what it is, rather than Terraform's "non-existent remote object".
func (r *kindResource) checkImport(ctx context.Context, kind, id string) diag.Diagnostics {
	var diags diag.Diagnostics
	k, err := r.data.kind(kind)
	if err != nil {
		diags.AddError("Unknown kind", err.Error()+". Load user-defined kinds with `lifecyclesim --kinds FILE`.")
		return diags
	}
	_, err = r.data.client.Get(ctx, k.Collection, id)
	if err == nil {
		return diags
	}
	if !client.IsNotFound(err) {
		diags.AddError("Error importing "+k.Name, explain(err))
		return diags
	}
	detail := fmt.Sprintf("No %s has the ID %q.", k.Name, id)
	if other, kerr := r.data.kind(kindPrefix(id)); kerr == nil && other.Name != k.Name {
		if _, gerr := r.data.client.Get(ctx, other.Collection, id); gerr == nil {
			detail = fmt.Sprintf("%q is %s, not %s. Import it into a %s resource (or lifecycle_object as %s/%s).",
				id, withArticle(other.Name), withArticle(k.Name), resourceTypeOf(other.Name), other.Name, id)
		}
	}
	diags.AddError("Cannot import "+k.Name, detail)
	return diags
}

// withArticle puts "a" or "an" before a kind's name.
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// resourceTypeOf names the resource type that manages a kind.
func resourceTypeOf(kind string) string {
	for _, c := range typedKinds() {
		if c.kind == kind {
			return "lifecycle_" + c.typeName
		}
	}
	return "lifecycle_object"
}
