package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// modifyPlan validates the desired status against the state machine, so an impossible change
// fails the plan rather than half an apply, and plans the state the object will end in.
func (r *kindResource) modifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data == nil {
		return // the provider is not configured yet
	}
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			var id types.String
			if d := req.State.GetAttribute(ctx, path.Root("id"), &id); !d.HasError() && !id.IsNull() {
				r.data.destroys.add(id.ValueString())
			}
			r.warnDestroy(ctx, req.State, &resp.Diagnostics)
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
	r.cfg.shape.planSpec(ctx, r, k, plan, req.State, &resp.Plan, &resp.Diagnostics)
	r.cfg.shape.checkParent(r.cfg, k, plan, &resp.Diagnostics)
	desired := r.desiredState(plan)
	var cfgStatus types.String
	if r.cfg.hasStatus() {
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("status"), &cfgStatus)...)
	}
	if (!r.cfg.hasStatus() && desired == "") || cfgStatus.IsUnknown() {
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
		if k.IsHeld(desired) {
			from = desired // a held create (the create waits there)
		}
		if desired == "" {
			desired = from
			if r.cfg.hasStatus() {
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
		if members, ok := r.cfg.members(); ok {
			// Routes start where the object stands once its members are repaired (an MCI
			// whose dominant status is Failed is Running once its failed VMs are refined).
			var converge bool
			from, describe, converge = members.plan(prior, plan, from)
			if converge {
				resp.Diagnostics.Append(r.planMembersUnknown(ctx, &resp.Plan)...)
			}
		}
		// An object found in the recycle bin whose configuration names no status is restored
		// in place, to the status a new one would have.
		if r.cfg.hasStatus() && cfgStatus.IsNull() && slices.Contains(k.DeletionTargets("delete"), from) {
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
		if !r.cfg.hasStatus() {
			attrPath = path.Root("state")
		}
		detail := fmt.Sprintf("%s, and the route to %s cannot be told: %v.", what, desired, err)
		var noRoute *lifecycle.NoRouteError
		if errors.As(err, &noRoute) {
			detail = fmt.Sprintf("%s, and no sequence of actions leads from %s to %s.\n\nStates reachable from %s: %s.",
				what, from, desired, from, listOr(noRoute.Reachable, "none"))
			adv := advise(situation{c: r.cfg, k: k, event: evStatus, state: from, asked: desired, isNew: prior == nil})
			if adv.row == rowNoRoute {
				// Only a new object gets there: the plan replaces this one (see plan_spec.go).
				r.planReplace(ctx, resp, attrPath, fmt.Sprintf("%s %s will be replaced", k.Name, prior.ID.ValueString()), detail+
					fmt.Sprintf(" A new %s gets to %s.", k.Name, desired), adv.text)
				return
			}
			detail += " " + adv.text
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
	if _, ok := r.cfg.members(); ok && prior != nil && !resp.Plan.Raw.Equal(req.State.Raw) {
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
	members, ok := r.cfg.members()
	if !ok {
		return nil
	}
	for _, a := range members.computed() {
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

// plannedDestroys are the IDs of the objects whose destroy a run's plan includes. Terraform
// plans (and applies) the destroy of a child before its parent's, since the child refers to
// it, so when a parent's destroy is planned its managed children's are already recorded.
type plannedDestroys struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (p *plannedDestroys) add(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = map[string]bool{}
	}
	p.ids[id] = true
}

func (p *plannedDestroys) has(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ids[id]
}

// liveChildren lists the live objects under the object that its deletion refuses to remove
// (ClusterInsts on a cloudlet), as a refusal's details name them.
func (r *kindResource) liveChildren(ctx context.Context, k *lifecycle.Kind, id string) ([]client.Dependent, error) {
	return r.liveChildrenBut(ctx, k, id, func(string) bool { return false })
}

// liveChildrenBut is liveChildren without the children for which skip is true.
func (r *kindResource) liveChildrenBut(ctx context.Context, k *lifecycle.Kind, id string, skip func(id string) bool) ([]client.Dependent, error) {
	var out []client.Dependent
	for _, ck := range r.data.kinds.Kinds() {
		if ck.Parent == nil || ck.Parent.Kind != k.Name || ck.DeletePolicy() != lifecycle.DeleteRefuse {
			continue
		}
		objs, err := r.data.client.ListAll(ctx, ck.Collection, client.ListOptions{ParentID: id})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if !ck.IsGone(o.State) && !skip(o.ID) {
				out = append(out, client.Dependent{ID: o.ID, Kind: ck.Name, Name: o.Name, State: o.State, Via: client.ViaParent})
			}
		}
	}
	return out, nil
}

// warnDestroy warns about what a plan that destroys the object (from its state st) will meet:
// live children or objects in use that refuse its deletion, or a kind no action removes. It
// has nothing to say when the state names no object of a loaded kind.
func (r *kindResource) warnDestroy(ctx context.Context, st tfsdk.State, diags *diag.Diagnostics) {
	m, d := r.read(ctx, st)
	if d.HasError() || m.ID.IsNull() || m.Kind.IsUnknown() || m.Kind.IsNull() {
		return
	}
	k, err := r.data.kind(m.Kind.ValueString())
	if err != nil {
		return
	}
	id := m.ID.ValueString()
	r.warnChildren(ctx, k, id, diags)
	r.warnInUse(ctx, k, id, diags)
	warnUndeletable(k, id, diags)
}

// warnChildren warns, when a plan destroys the object id of kind k, about live children that
// refuse its deletion and that the same plan does not destroy. Terraform destroys the children
// the configuration manages first; others (managed elsewhere, or by no one) make the apply
// refuse.
func (r *kindResource) warnChildren(ctx context.Context, k *lifecycle.Kind, id string, diags *diag.Diagnostics) {
	// Children whose destroy the same plan includes go first: they do not outlive it.
	children, err := r.liveChildrenBut(ctx, k, id, r.data.destroys.has)
	if err != nil || len(children) == 0 {
		return
	}
	diags.AddWarning(fmt.Sprintf("%s %s still has live children", k.Name, id),
		fmt.Sprintf("A %s with live children cannot be deleted, and it has: %s.\n\n%s", k.Name, dependentList(children),
			advise(situation{c: r.cfg, k: k, event: evLiveChildren, atPlan: true}).text))
}

// linkersBut lists the live objects whose refusing link (`delete: refuse`) names the object id
// of kind k, as a refusal's details name them, without those for which skip is true. Each
// kind with such links is listed once.
func (r *kindResource) linkersBut(ctx context.Context, k *lifecycle.Kind, id string, skip func(id string) bool) ([]client.Dependent, error) {
	var out []client.Dependent
	for _, lk := range r.data.kinds.Kinds() {
		var fields []string
		for _, l := range lk.Links {
			if l.Kind == k.Name && l.Refuses() {
				fields = append(fields, l.Field)
			}
		}
		if len(fields) == 0 {
			continue
		}
		objs, err := r.data.client.ListAll(ctx, lk.Collection, client.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if lk.IsGone(o.State) || skip(o.ID) {
				continue
			}
			for _, f := range fields {
				if named, _ := o.Spec[f].(string); named == id {
					out = append(out, client.Dependent{ID: o.ID, Kind: lk.Name, Name: o.Name, State: o.State, Via: f})
				}
			}
		}
	}
	return out, nil
}

// warnInUse warns, when a plan destroys the object id of kind k, about objects whose refusing
// link names it and that the same plan does not destroy: the simulator refuses the object's
// deletion while they name it.
func (r *kindResource) warnInUse(ctx context.Context, k *lifecycle.Kind, id string, diags *diag.Diagnostics) {
	linkers, err := r.linkersBut(ctx, k, id, r.data.destroys.has)
	if err != nil || len(linkers) == 0 {
		return
	}
	diags.AddWarning(fmt.Sprintf("%s %s is in use", k.Name, id),
		fmt.Sprintf("A %s is not deleted while objects name it through a link that refuses it, and these do: %s.\n\n%s", k.Name,
			dependentList(linkers), advise(situation{c: r.cfg, k: k, event: evInUse, atPlan: true}).text))
}
