package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

var (
	_ resource.ResourceWithConfigure  = (*actionResource)(nil)
	_ resource.ResourceWithModifyPlan = (*actionResource)(nil)
)

// NewActionResource is lifecycle_action: runs an action that leaves an object in the state it
// started from (reboot, reset, clone...), again whenever its triggers change.
func NewActionResource() resource.Resource { return &actionResource{} }

type actionResource struct {
	data *providerData
}

type actionModel struct {
	ID       types.String `tfsdk:"id"`
	Kind     types.String `tfsdk:"kind"`
	ObjectID types.String `tfsdk:"object_id"`
	Action   types.String `tfsdk:"action"`
	Force    types.Bool   `tfsdk:"force"`
	Triggers types.Map    `tfsdk:"triggers"`
	// ObjectStatus is the status the object is planned to have when the action runs.
	ObjectStatus types.String   `tfsdk:"object_status"`
	State        types.String   `tfsdk:"state"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

func (r *actionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_action"
}

func (r *actionResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Description: "Runs an action that returns an object to the state it started from (a machine's `reboot`, " +
			"`change_disk_limits`, a node's `update`...), or a repair that takes it out of an error state (a cloudlet's " +
			"`fix` from `UpdateError`), and waits for it. Actions that work on another object (`with` in the kind's " +
			"spec: a machine's `attach_disk`, `clone`) are not run: its arguments cannot name that object. The action runs when the resource is created and " +
			"again whenever `triggers` change; destroying the resource does nothing. Whether the action is allowed from " +
			"the status the object will have (`object_status`) is checked at plan time, and again at apply. A plan " +
			"that finds it not allowed warns instead of failing, so that `terraform destroy` (which plans first) is " +
			"never blocked by it; the apply then fails before running the action.\n\n" +
			"With Terraform " + queryVersion + "+, use the kinds' actions instead (`action \"lifecycle_machine\"`, run by " +
			"`action_trigger` or `terraform apply -invoke`): they run the same actions, are checked before anything runs " +
			"and keep nothing in the state. This resource stays for older Terraform.",
		Attributes: map[string]schema.Attribute{
			"id":        schema.StringAttribute{Computed: true, Description: "ID of the operation that ran.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"kind":      schema.StringAttribute{Required: true, PlanModifiers: replace, Description: "Kind of the object, such as `machine`."},
			"object_id": schema.StringAttribute{Required: true, PlanModifiers: replace, Description: "ID of the object to act on."},
			"action":    schema.StringAttribute{Required: true, PlanModifiers: replace, Description: "The action to run; it must return the object to the state it started from, or be a repair (an action that runs only from error states)."},
			"force": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
				Description:   "Run the action from states it is allowed from only when forced."},
			"triggers": schema.MapAttribute{ElementType: types.StringType, Optional: true,
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
				Description:   "Arbitrary values; changing any of them runs the action again."},
			"state": schema.StringAttribute{Computed: true, Description: "The object's state after the action."},
			"object_status": schema.StringAttribute{Optional: true,
				Description: "The status the object will have when the action runs, usually a reference to its resource's " +
					"`status` (`lifecycle_machine.web.status`), which also runs the action after the object's own changes. " +
					"The plan checks the action against it (a value known only after apply is checked then); without it, " +
					"against the object's current state. Changing it does not run the action again."},
		},
		Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true})},
	}
	markdownResourceSchema(&resp.Schema)
}

func (r *actionResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// returnsToStart reports whether the action lands in the state it starts from: from state,
// or, with state "", from at least one state it may start from (a machine's reboot returns a
// running machine to RUNNING, though it takes a paused one to RUNNING too).
func returnsToStart(a *lifecycle.Action, state string) bool {
	if a.Returns {
		return true
	}
	if a.To == "" {
		return false
	}
	if state != "" {
		return a.To == state
	}
	return slices.Contains(a.From, a.To) || slices.Contains(a.ForceFrom, a.To)
}

// ModifyPlan checks the action against the kind and the status the object will have. What
// depends on the object's state or planned status is a warning: Terraform plans before it
// destroys, and no plan request tells the two apart, so an error here would block destroy.
// Create checks again and fails before it runs the action.
func (r *actionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return // destroy, or no provider yet
	}
	if !req.State.Raw.IsNull() && len(resp.RequiresReplace) == 0 {
		return // an in-place change (timeouts, object_status): nothing runs
	}
	var m actionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Kind.IsUnknown() || m.Action.IsUnknown() {
		return
	}
	k, err := r.data.kind(m.Kind.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("kind"), "Unknown kind", err.Error())
		return
	}
	a, ok := k.Action(m.Action.ValueString())
	if !ok || !a.ByUser() {
		resp.Diagnostics.AddAttributeError(path.Root("action"), "Unknown action",
			fmt.Sprintf("%s has no action %q; its actions are %s.", k.Name, m.Action.ValueString(), listOr(k.Allowed("", true), "none")))
		return
	}
	if !returnsToStart(a, "") && !isRepair(k, a) {
		resp.Diagnostics.AddAttributeError(path.Root("action"), "Action changes the object's status",
			fmt.Sprintf("%s %q does not return the object to the state it started from (it goes to %s), and it is not "+
				"a repair (an action that takes the object out of an error state). Set the status on the object's own "+
				"resource instead.", k.Name, a.Name, a.To))
		return
	}
	if m.ObjectStatus.IsUnknown() {
		return // checked at apply
	}
	from, what := m.ObjectStatus.ValueString(), "will be"
	if m.ObjectStatus.IsNull() {
		if m.ObjectID.IsUnknown() {
			return
		}
		o, err := r.data.reads.get(ctx, k.Collection, m.ObjectID.ValueString())
		if err != nil {
			if client.IsNotFound(err) {
				resp.Diagnostics.AddAttributeWarning(path.Root("object_id"), "Object not found",
					fmt.Sprintf("No %s %q exists now; the apply fails unless it is created first.", k.Name, m.ObjectID.ValueString()))
			}
			return // other errors surface at apply
		}
		from, what = settled(k, o), "is"
	}
	if err := checkAction(k, a, from, m.Force.ValueBool()); err != nil {
		detail := fmt.Sprintf("The %s %s %s: %v.\n\nThe apply will fail when it gets to this action.", k.Name, what, from, err)
		if m.ObjectStatus.IsNull() {
			detail += " If the same apply changes the object's status, set object_status to its resource's status " +
				"(for example lifecycle_machine.web.status), so the plan checks the status the apply gives it."
		}
		resp.Diagnostics.AddAttributeWarning(path.Root("action"), "Action not allowed", detail)
	}
}

// runnableActions are the actions a Terraform action (or lifecycle_action) runs on an object
// in state from: allowed there, and returning it to from or repairing it.
func runnableActions(k *lifecycle.Kind, from string) []string {
	var out []string
	for _, name := range k.Allowed(from, false) {
		if a, ok := k.Action(name); ok && offers(k, a, from) {
			out = append(out, name)
		}
	}
	return out
}

// checkAction reports why action a may not run on an object in state from: not allowed
// there, or not returning it to from.
func checkAction(k *lifecycle.Kind, a *lifecycle.Action, from string, force bool) error {
	if a.With != "" {
		return fmt.Errorf("%q works on another object (a %s), which an action's arguments cannot name, so Terraform does "+
			"not run it; run it through the simulator's API (POST /v1/%s/{id}/actions/%s)", a.Name, a.With, k.Collection, a.Name)
	}
	if _, err := k.Check(from, a.Name, force); err != nil {
		var ite *lifecycle.InvalidTransitionError
		if errors.As(err, &ite) && !ite.NeedsForce {
			// Name only the actions a Terraform action runs from there: start or destroy
			// would be refused too.
			refused := *ite
			refused.Allowed = runnableActions(k, from)
			return &refused
		}
		return err
	}
	if !returnsToStart(a, from) && !isRepair(k, a) {
		return fmt.Errorf("%q takes it to %s, not back to %s; set the status on the object's own resource instead, "+
			"or run the action only while the object is %s", a.Name, a.To, from, a.To)
	}
	return nil
}

func (r *actionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !r.data.ready(&resp.Diagnostics) {
		return
	}
	var m actionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := m.Timeouts.Create(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	k, err := r.data.kind(m.Kind.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("kind"), "Unknown kind", err.Error())
	}
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary := fmt.Sprintf("Error running %s %s", k.Name, m.Action.ValueString())
	w := newWalker(r.data, k, m.ObjectID.ValueString(), nil)
	o, err := w.wait(ctx)
	if err != nil {
		resp.Diagnostics.AddError(summary, explain(err))
		return
	}
	from := o.State
	if a, ok := k.Action(m.Action.ValueString()); ok {
		if err := checkAction(k, a, from, m.Force.ValueBool()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("action"), summary, fmt.Sprintf("The %s %s is %s: %v.", k.Name, w.id, from, err))
			return
		}
	}
	started, err := w.actWait(ctx, m.Action.ValueString(), client.ActionRequest{Force: m.Force.ValueBool()})
	if err != nil {
		resp.Diagnostics.AddError(summary, explain(err))
		return
	}
	m.ID = types.StringValue(w.id)
	if started.Operation != nil {
		m.ID = types.StringValue(started.Operation.ID)
	}
	want := from
	if a, ok := k.Action(m.Action.ValueString()); ok && isRepair(k, a) {
		want = a.To // a repair takes the object out of its error state
	}
	o, err = w.wait(ctx)
	switch {
	case err != nil:
	case started.Operation != nil && failedOp(o) == started.Operation.ID:
		// A failed action rolls back to where it started: its recorded error tells it apart.
		err = fmt.Errorf("%s %s: action %q failed and the object is %s: %s", k.Name, w.id, m.Action.ValueString(), o.State, lastError(o))
	case o.State != want:
		err = &stepError{kind: k.Name, id: w.id, action: m.Action.ValueString(), want: want, obj: o}
	}
	if o != nil {
		r.data.reads.put(k.Collection, o)
		m.State = types.StringValue(o.State)
	} else {
		m.State = types.StringValue(from)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	if err != nil {
		resp.Diagnostics.AddError(summary, explain(err))
	}
}

func (r *actionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !r.data.ready(&resp.Diagnostics) {
		return
	}
	var m actionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	k, err := r.data.kind(m.Kind.ValueString())
	if err != nil {
		return
	}
	if _, err := r.data.client.Get(ctx, k.Collection, m.ObjectID.ValueString()); client.IsNotFound(err) {
		resp.State.RemoveResource(ctx) // the object is gone: a new one gets the action again
	}
}

func (r *actionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, prior actionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	m.ID, m.State = prior.ID, prior.State
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *actionResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
