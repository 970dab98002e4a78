package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// The rule for plans that cannot change an object in place (docs: the state-machine guide's
// "When an object cannot get there in place"): a plan never fails with replacement as its
// remedy, because Terraform plans the in-place change with the prior state before it honours
// `terraform apply -replace`, and a plan error would block that too. Where only a new object
// can give what the configuration asks (a status no action leads back to, a field that changes
// only in states the object cannot return to, an immutable field), the plan replaces the
// object and a warning says why. Where the object can get there in place, the plan fails and
// says which status to set first.

// checkSpec validates the planned spec against the kind's declared fields at plan time, as the
// simulator will: the rules a schema cannot say (a time after another, a field that changes
// only in some states, a lifecycle_object's spec values) fail the plan naming the field, or
// plan a replacement where only a new object can take the value. Values known only at apply
// are checked by the simulator then.
func (r *kindResource) checkSpec(ctx context.Context, k *lifecycle.Kind, plan *objectModel, state tfsdk.State, resp *resource.ModifyPlanResponse) {
	if len(k.Fields) == 0 || !r.specKnown(plan) {
		return
	}
	spec, d := r.spec(ctx, plan, k)
	resp.Diagnostics.Append(d...)
	if d.HasError() {
		return
	}
	if state.Raw.IsNull() {
		r.fieldError(k, k.CheckSpec(spec, time.Now()), resp)
		return
	}
	prior, d := r.read(ctx, state)
	if d.HasError() || !r.specKnown(prior) {
		return
	}
	old, changes, _ := r.specDiff(ctx, k, prior, spec)
	if len(changes) == 0 {
		return
	}
	if k.NeedsNew(old, changes) {
		// A field that cannot change does: a typed resource's schema replaces the object
		// (RequiresReplace); lifecycle_object's spec is one map, so the plan says it here. The
		// new object's spec is checked as a create.
		resp.RequiresReplace = append(resp.RequiresReplace, r.cfg.shape.replacePaths()...)
		r.fieldError(k, k.CheckSpec(spec, time.Now()), resp)
		return
	}
	err := k.CheckUpdate(prior.State.ValueString(), old, changes, spec, time.Now())
	var fe *lifecycle.FieldError
	if errors.As(err, &fe) && fe.State != "" {
		r.changeInState(ctx, k, prior, fe, resp)
		return
	}
	if err != nil {
		r.fieldError(k, err, resp)
		return
	}
	r.checkUpdateAllowed(ctx, k, prior, changes, resp)
}

// fieldError fails the plan at the attribute of a field the spec check refused.
func (r *kindResource) fieldError(k *lifecycle.Kind, err error, resp *resource.ModifyPlanResponse) {
	var fe *lifecycle.FieldError
	if !errors.As(err, &fe) {
		return
	}
	resp.Diagnostics.AddAttributeError(r.fieldPath(fe.Field), "Invalid "+fe.Field,
		fmt.Sprintf("%s: spec.%s %s.", k.Name, fe.Field, strings.TrimSuffix(fe.Msg, ".")))
}

// fieldPath is the attribute a spec field (or a path inside one, "node_groups[1].count") is
// configured at.
func (r *kindResource) fieldPath(field string) path.Path {
	at, _, _ := strings.Cut(field, "[")
	at, _, _ = strings.Cut(at, ".")
	for _, f := range r.cfg.fields {
		if f.field.Name == at {
			return path.Root(f.attr)
		}
	}
	return path.Root("spec").AtName(at)
}

// changeInState handles a field that changes only in some states (a lease's end_date while
// PENDING or ACTIVE) on an object in another one. If a route leads back there, the plan fails
// saying so; if none does (a lease that ended), only a new object takes the value: the plan
// replaces it.
func (r *kindResource) changeInState(ctx context.Context, k *lifecycle.Kind, prior *objectModel, fe *lifecycle.FieldError, resp *resource.ModifyPlanResponse) {
	from := r.settledFrom(k, prior)
	var back []string
	if f, ok := k.Field(fe.Field); ok {
		for _, s := range f.UpdatableIn {
			if s == from || k.CanTransition(from, s, false) {
				back = append(back, s)
			}
		}
	}
	at := r.fieldPath(fe.Field)
	what := fmt.Sprintf("%s: spec.%s %s.", k.Name, fe.Field, strings.TrimSuffix(fe.Msg, "."))
	if len(back) == 0 {
		r.planReplace(ctx, resp, at, fmt.Sprintf("%s %s will be replaced", k.Name, prior.ID.ValueString()),
			fmt.Sprintf("%s No action brings the %s back to a state where %s can change, so only a new %s takes the "+
				"new value.", what, k.Name, fe.Field, k.Name), r.fieldAdvice(k, from, fe.Field, nil))
		return
	}
	resp.Diagnostics.AddAttributeError(at, "Field cannot change now", what+" "+r.fieldAdvice(k, from, fe.Field, back))
}

// fieldAdvice is the advice about a change of field that needs the object (in from) in other
// states, back those a route leads to (none: only a new object takes it).
func (r *kindResource) fieldAdvice(k *lifecycle.Kind, from, field string, back []string) string {
	return advise(situation{c: r.cfg, k: k, event: evField, state: from, field: field, back: back}).text
}

// checkUpdateAllowed handles a spec change that runs the kind's update action on an object in a
// state the action does not run from (a Savanna cluster scales only from Active): the plan
// fails naming the status to set first, or, when no route leads back (a cluster in Error),
// replaces the object.
func (r *kindResource) checkUpdateAllowed(ctx context.Context, k *lifecycle.Kind, prior *objectModel, changes map[string]any, resp *resource.ModifyPlanResponse) {
	if k.Update == "" {
		return
	}
	from := r.settledFrom(k, prior)
	a, _ := k.Action(k.Update)
	if ok, _ := a.AllowedFrom(from); ok {
		return
	}
	names := slices.Sorted(maps.Keys(changes))
	at := r.fieldPath(names[0])
	what := fmt.Sprintf("Changing %s of the %s %s runs its %s action, which runs only from %s; the %s is %s.",
		strings.Join(names, ", "), k.Name, prior.ID.ValueString(), a.Name, quoted(a.From), k.Name, from)
	var back []string
	for _, s := range a.From {
		if k.CanTransition(from, s, false) {
			back = append(back, s)
		}
	}
	if len(back) == 0 {
		r.planReplace(ctx, resp, at, fmt.Sprintf("%s %s will be replaced", k.Name, prior.ID.ValueString()),
			what+fmt.Sprintf(" No action brings it back to %s, so only a new %s takes the change.", quoted(a.From), k.Name),
			r.fieldAdvice(k, from, names[0], nil))
		return
	}
	resp.Diagnostics.AddAttributeError(at, "Change not possible in "+from, what+" "+r.fieldAdvice(k, from, names[0], back))
}

// settledFrom is the state a plan starts from: a transition that lands where the plan
// expects is waited for at apply.
func (r *kindResource) settledFrom(k *lifecycle.Kind, prior *objectModel) string {
	from := prior.State.ValueString()
	if ps := prior.Status.ValueString(); k.IsTransition(from) && k.IsStatic(ps) {
		return ps
	}
	if k.IsTransition(from) {
		if lands, err := k.Lands(from, ""); err == nil {
			return lands
		}
	}
	return from
}

// newObjectReaches reports whether a new object of the kind can be brought to state: where its
// create lands, or a route from there.
func newObjectReaches(k *lifecycle.Kind, state string) bool {
	lands, err := k.Lands(k.Create.To, "")
	if err != nil {
		lands = k.Create.To
	}
	return lands == state || k.CanTransition(lands, state, false)
}

// planReplace makes the plan replace the object because of the change at `at`, with a warning
// saying why and the advice (advise). The state is unknown for the new object, which also makes
// the replacement stick where the attribute itself keeps its value (the state of a kind with no
// status attribute).
func (r *kindResource) planReplace(ctx context.Context, resp *resource.ModifyPlanResponse, at path.Path, summary, why, advice string) {
	resp.RequiresReplace = append(resp.RequiresReplace, at, path.Root("state"))
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("state"), types.StringUnknown())...)
	resp.Diagnostics.AddAttributeWarning(at, summary, strings.TrimSpace(why+"\n\n"+advice))
}
