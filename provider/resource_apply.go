package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

func (r *kindResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	defer r.identify(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
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
	// A status that is the kind's hold state holds the create (CB-Tumblebug's option=hold):
	// a later status runs the action that continues it.
	creq := client.CreateRequest{Name: plan.Name.ValueString(), ParentID: plan.ParentID.ValueString(), Spec: spec, Hold: k.IsHeld(desired)}
	key := client.NewIdempotencyKey()
	err := w.unblocked(opCtx, k.Create.Name, func() error {
		var err error
		o, err = w.create(client.WithIdempotencyKey(opCtx, key), creq)
		return err
	})
	if err != nil && ctx.Err() != nil {
		// Interrupted with the create in flight: the simulator may have made the object
		// without its answer arriving. The same request with the same key, on a context the
		// interruption did not cancel, returns that object (or makes it): it is kept in state
		// below instead of being orphaned.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		if again, rerr := r.data.client.Create(client.WithIdempotencyKey(rctx, key), k.Collection, creq); rerr == nil {
			o, err = again, nil
			w.id = o.ID
		}
		rcancel()
	}
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
	if members, ok := r.cfg.members(); ok && o != nil && ctx.Err() == nil {
		var warns diag.Diagnostics
		o, walk, warns, err = members.landed(opCtx, r.data, k, "create", o, err)
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
			err = &createTimeoutError{err: err, advice: advise(situation{c: r.cfg, k: k, event: evCreateFailed, timedOut: true}).text}
		} else if err != nil {
			err = &failedCreateError{err: err}
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
		resp.Diagnostics.AddError(summary, fmt.Sprintf("%v.\n\nThe %s %s is %s and its create did not succeed. %s", err, k.Name,
			plan.ID.ValueString(), state, advise(situation{c: r.cfg, k: k, event: evCreateFailed, state: state}).text))
		return
	}
	resp.Diagnostics.AddWarning("Create of "+k.Name+" interrupted", fmt.Sprintf("The apply was interrupted while the %s %s was %s. %s",
		k.Name, plan.ID.ValueString(), orUnknown(plan.State.ValueString()),
		advise(situation{c: r.cfg, k: k, event: evCreateInterrupted, state: plan.State.ValueString()}).text))
}

// healthyCreate reports whether an object whose create was interrupted is on its way: its
// create operation still runs and is not failing.
func healthyCreate(o *client.Object) bool {
	return o != nil && o.Operation != nil && o.Operation.Error == ""
}

// createTimeoutError is a create that ran out of time. Terraform taints the resource, so the
// message says what the next apply does and how to keep the object instead (advice).
type createTimeoutError struct {
	err    error
	advice string
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
		if err == nil && r.cfg.hasStatus() && !planned.IsUnknown() && !planned.IsNull() {
			// The route ended where the plan said: keep its status, also when the system is
			// about to move the object on (self-healing), which the next refresh shows.
			m.Status = planned
		}
		diags.Append(r.write(ctx, st, m)...)
	}
	if err != nil {
		detail := explain(err)
		var fc *failedCreateError
		switch {
		case o == nil || !k.IsError(o.State) || o.Operation != nil:
		case errors.As(err, &fc) && slices.Contains(r.cfg.holds, o.State):
			// Tainted: the repair alone would not keep it (the next apply replaces it).
			detail = err.Error() + ".\n\n" + advise(situation{c: r.cfg, k: k, event: evCreateFailed, state: o.State}).text
		case errors.As(err, &fc) && hasMembers(r.cfg):
			// Every member failed (a partly failed create is a warning, not an error).
			detail += "\n\n" + advise(situation{c: r.cfg, k: k, event: evCreateFailed, state: o.State, allMembers: true}).text
		default:
			if advice := r.objectAdvice(k, m, o, wanted); advice != "" {
				detail += "\n\n" + advice
			}
		}
		diags.AddError(summary, detail)
	}
}

func (r *kindResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer r.identify(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
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
	before, d := r.spec(ctx, prior, k)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	members, hasMembers := r.cfg.members()
	if hasMembers {
		o, err = members.repair(ctx, r.data, k, prior)
	}
	partial := false
	// Values the configuration writes anew that the object holds already go with the
	// changes, or alone (no value changes, no action runs), so the simulator records them.
	written := r.cfg.shape.writtenOut(before, after, changes)
	if err == nil && len(changes) == 0 && len(written) > 0 {
		o, err = w.writeOut(ctx, written)
	}
	if err == nil && len(changes) > 0 {
		send := changes
		if len(written) > 0 {
			send = maps.Clone(changes)
			maps.Copy(send, written)
		}
		o, err = w.patch(ctx, send)
		if hasMembers && o != nil {
			// Members that failed in part (a scale-out where some VMs fail) are a warning
			// naming them: the state shows the shortfall, and the next apply converges it.
			var warns diag.Diagnostics
			var walk bool
			o, walk, warns, err = members.landed(ctx, r.data, k, k.Update, o, err)
			resp.Diagnostics.Append(warns...)
			partial = err == nil && !walk
		}
	}
	if partial {
		r.finish(ctx, k, plan, o, nil, summary, &resp.State, &resp.Diagnostics)
		return
	}
	if err == nil {
		if via := r.cfg.linkVia(prior, plan); via != "" {
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
	if err == nil && hasMembers {
		var warns diag.Diagnostics
		o, warns, err = members.complete(ctx, r.data, k, plan, o)
		resp.Diagnostics.Append(warns...)
	}
	r.finish(ctx, k, plan, o, err, summary, &resp.State, &resp.Diagnostics)
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
	// delete too, but only after a route to it had run), unless they are being removed already
	// (the same destroy deletes them at the same time): then wait until they are gone.
	w := r.walker(k, m)
	if children, err := r.liveChildren(ctx, k, m.ID.ValueString()); err == nil && len(children) > 0 {
		if waited, werr := w.waitRemoved(ctx, children); werr != nil || !waited {
			resp.Diagnostics.AddError("Error deleting "+k.Name, fmt.Sprintf("The %s %s still has live children.\n\n%s",
				k.Name, m.ID.ValueString(), advise(situation{c: r.cfg, k: k, event: evLiveChildren, deps: children}).text))
			return
		}
	}
	err := w.remove(ctx, mode, m.State.ValueString())
	r.data.reads.forget(k.Collection, m.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Error deleting "+k.Name, explain(err))
	}
}
