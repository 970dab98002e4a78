package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

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
	diags.Append(r.cfg.shape.readSpec(r.cfg, m, appliedView(k, o), k, imported)...)
	msg := ""
	if le, ok := o.Status["last_error"].(map[string]any); ok {
		msg, _ = le["message"].(string)
	}
	m.LastError = types.StringValue(msg)
	diags.Append(r.readRelated(ctx, m, o)...)
	if a := r.cfg.derived; a != nil {
		v, d := derivedValue(a.typ, k, o)
		diags.Append(d...)
		if v != nil {
			m.Computed[a.name] = v
		}
	}
	if members, ok := r.cfg.members(); ok && r.data != nil {
		vals, d := members.observe(ctx, r.data, o)
		diags.Append(d...)
		if m.Computed == nil {
			m.Computed = map[string]attr.Value{}
		}
		maps.Copy(m.Computed, vals)
	}
	return diags
}

// appliedView is the object as its spec fields' state should read: where a failed update left
// values it did not apply (status.unapplied) and the update can run again from where the
// object is (a cloudlet fixed after a failed upgrade, a ClusterInst in UpdateError), the spec
// holds their last applied values, so the plan shows the update again and the apply retries
// it. Where the update cannot run yet (a cloudlet still in UpdateError), the state keeps the
// values asked for: the plan then waits for the repair the refresh warning names instead of
// failing on a change the object cannot take yet; so does a field that cannot change where the
// object is.
func appliedView(k *lifecycle.Kind, o *client.Object) *client.Object {
	rec, _ := o.Status[client.StatusUnapplied].(map[string]any)
	applied, _ := rec["applied"].(map[string]any)
	if len(applied) == 0 || k.Update == "" || !o.Static {
		return o
	}
	if _, err := k.Check(o.State, k.Update, false); err != nil {
		return o
	}
	view := *o
	view.Spec = maps.Clone(o.Spec)
	for f, v := range applied {
		if fd, ok := k.Field(f); ok && len(fd.UpdatableIn) > 0 && !slices.Contains(fd.UpdatableIn, o.State) {
			continue // not a change the object can take here (a lease's end_date in ERROR)
		}
		if v == nil {
			delete(view.Spec, f)
		} else {
			view.Spec[f] = v
		}
	}
	return &view
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
	parent, err := r.data.kind(o.Kind)
	if err != nil {
		diags.AddError("Error reading "+o.Kind+" children", err.Error())
		return diags
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
		sortChildren(parent, ra.kind, o, kids)
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

// sortChildren puts the children of kind child the object o (of kind k) has in the order
// the docs promise: those made from a list field (`each`) in the list's order (item by item,
// then by their number within the item), the others after them by name.
func sortChildren(k *lifecycle.Kind, child string, o *client.Object, kids []client.Object) {
	rank := map[string]int{}
	for _, ch := range k.Children {
		if ch.Kind != child || ch.Each == "" {
			continue
		}
		items, _ := o.Spec[ch.Each].([]any)
		for i, it := range items {
			item, _ := it.(map[string]any)
			group, _ := item["name"].(string)
			if group == "" {
				group = strconv.Itoa(i + 1)
			}
			name := o.Name + "-" + group
			if ch.Count == "" {
				rank[name] = len(rank)
				continue
			}
			n, _ := item[ch.Count].(float64)
			for j := 1; j <= int(n); j++ {
				rank[name+"-"+strconv.Itoa(j)] = len(rank)
			}
		}
	}
	slices.SortStableFunc(kids, func(a, b client.Object) int {
		ra, oka := rank[a.Name]
		rb, okb := rank[b.Name]
		switch {
		case oka && okb:
			return ra - rb
		case oka:
			return -1
		case okb:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
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
	defer r.identify(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
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
		// The framework (v1.19) wants an identity even from a read that removes the resource.
		if ident, ok := r.identityOf(m); ok {
			resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, ident)...)
		}
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
	if r.cfg.timeDriven {
		if msg := timeNotice(k, o); msg != "" {
			resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s is %s", k.Name, o.ID, o.State), msg)
			noticed = true // one message per situation: the kind's own says it
		}
	}
	if msg := stuckWarning(k, o); msg != "" {
		resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s is stuck in %s", k.Name, o.ID, o.State), msg)
	}
	r.cfg.shape.readWarnings(ctx, r, k, m, o, wanted, noticed, &resp.Diagnostics)
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
		"Terraform plans it as if it will land in %s, so the plan may show no changes although nothing is moving.\n\n%s",
		k.Name, o.State, op.Action, op.PhaseStartedAt.UTC().Format(time.RFC3339),
		o.ReadAt.Sub(started), due, lands, advise(situation{k: k, event: evStuck, state: o.State}).text)
}

func (r *kindResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var id, kind string
	var diags diag.Diagnostics
	if req.ID == "" && req.Identity != nil {
		// import { identity = { ... } } (Terraform 1.12+).
		id, kind, diags = r.importIdentity(ctx, req.Identity)
	} else {
		kind, id = r.cfg.shape.importID(req.ID, &diags)
	}
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(r.cfg.shape.setKind(ctx, &resp.State, types.StringValue(kind))...)
	if r.data != nil {
		resp.Diagnostics.Append(r.checkImport(ctx, kind, id, req.ID == "" && req.Identity != nil)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("deletion_mode"), "destroy")...)
	resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, identityModel{ID: types.StringValue(id), Kind: types.StringValue(kind)})...)
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
// what it is, rather than Terraform's "non-existent remote object". The errors name the
// resource type and the ID or identity given (the import request carries no resource address)
// and hint in the form the user imported with: an identity for an identity import, an ID (or
// lifecycle_object's KIND/ID) otherwise.
func (r *kindResource) checkImport(ctx context.Context, kind, id string, byIdentity bool) diag.Diagnostics {
	var diags diag.Diagnostics
	typ := "lifecycle_" + r.cfg.typeName
	given := fmt.Sprintf("the ID %q", id)
	if byIdentity {
		given = "the identity " + r.cfg.shape.identityForm(kind, id)
	}
	summary := fmt.Sprintf("Cannot import %s by %s", typ, given)
	k, err := r.data.kind(kind)
	if err != nil {
		diags.AddAttributeError(r.cfg.shape.kindPath(), summary, err.Error()+". Load user-defined kinds with `lifecyclesim --kinds FILE`.")
		return diags
	}
	_, err = r.data.client.Get(ctx, k.Collection, id)
	if err == nil {
		return diags
	}
	if !client.IsNotFound(err) {
		diags.AddError(summary, explain(err))
		return diags
	}
	detail := fmt.Sprintf("No %s has the ID %q. Check the ID (`GET /v1/%s` lists them), or find it with a `list %q` block "+
		"(`terraform query`, Terraform %s+).", k.Name, id, k.Collection, typ, queryVersion)
	if other, kerr := r.data.kind(kindPrefix(id)); kerr == nil && other.Name != k.Name {
		if _, gerr := r.data.client.Get(ctx, other.Collection, id); gerr == nil {
			into := r.data.resourceTypeOf(other.Name)
			if byIdentity {
				detail = fmt.Sprintf("%q is %s, not %s. Import it into a %s resource: `import { to = %s.NAME, identity = %s }` "+
					"(or into lifecycle_object with `identity = %s`).", id, withArticle(other.Name), withArticle(k.Name), into, into,
					identityForm(into == "lifecycle_object", other.Name, id), identityForm(true, other.Name, id))
			} else {
				detail = fmt.Sprintf("%q is %s, not %s. Import it into a %s resource (or lifecycle_object as %s/%s).",
					id, withArticle(other.Name), withArticle(k.Name), into, other.Name, id)
			}
		}
	}
	diags.AddAttributeError(path.Root("id"), summary, detail)
	return diags
}

// identityForm writes an identity as an import block's `identity` argument: with the kind
// for lifecycle_object (generic), the ID alone for a typed resource.
func identityForm(generic bool, kind, id string) string {
	if generic {
		return fmt.Sprintf("{ kind = %q, id = %q }", kind, id)
	}
	return fmt.Sprintf("{ id = %q }", id)
}
