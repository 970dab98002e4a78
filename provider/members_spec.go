package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// A kind made of members (a CB-Tumblebug MCI is its VMs) is recognised from its spec, not from
// its name: it makes children one per item of a list field times a count (`children: [{kind: K,
// each: FIELD, count: COUNT}]`) and its actions reach them and wait for them (`propagate:
// [{start: [...], to: {children: K}, wait: true}]`). Everything the resource does with the
// members comes from those declarations: the list of members (named after their collection,
// with the item they came from (`group`) and the fields the propagation's limit groups them
// by), the repair that removes failed members (a propagation with `remove: true`, such as
// `refine`), the counts a scale restores, and the statuses the members are brought to (the
// kind's own statuses). So a renamed copy of the MCI kinds behaves exactly as the original.

// specMembers is the withMembers capability derived from a kind's spec (membersOf).
type specMembers struct {
	// parent is the kind made of members; kind and collection are the members'.
	parent, kind, collection string
	// each is the parent's list field whose items make the members, shown as the attribute
	// eachAttr; count is the items' count field; group is the member field naming its item.
	each, eachAttr, count, group string
	// where are the member fields the list shows besides (what the limit groups them by).
	where []string
	// listAttr is the computed list of members.
	listAttr string
	// repairAction is the action removing the members in removes ("" when the kind has none).
	repairAction string
	removes      []string
	// statuses are the parent's statuses, which the members are brought to.
	statuses []string
	// order breaks ties when the dominant member status is derived; empty is the state of
	// none.
	order []string
	// docs describe the member kind's fields; example is one of its transition states.
	docs    map[string]string
	example string
	// status is what the family's status function (the spec's derive.function) adds, if the
	// provider knows it.
	status *familyStatus
}

var (
	_ withMembers      = specMembers{}
	_ failureDescriber = specMembers{}
	_ withKnownMembers = specMembers{}
)

// familyStatus is what a family's derive function adds to the resource of a kind whose spec
// names it: computed attributes read from the object's status, and the one that describes the
// object in messages.
type familyStatus struct {
	computed []computedAttr
	observe  func(o *client.Object) map[string]attr.Value
	describe string
}

// familyStatuses are the family status functions the provider shows, by derive function name.
func familyStatuses() map[string]*familyStatus {
	return map[string]*familyStatus{tumblebugStatusFunction: tumblebugStatus()}
}

// membersOf derives the members capability of k from its spec; ok is false when k is not made
// of members. cfg is k's typed resource as derived so far (its attribute names and statuses).
func membersOf(reg *lifecycle.Registry, k *lifecycle.Kind, cfg kindConfig) (specMembers, bool) {
	for _, c := range k.Children {
		if c.Each == "" || c.Count == "" || !waitsFor(k, c.Kind) {
			continue
		}
		mk, err := reg.Kind(c.Kind)
		if err != nil {
			continue
		}
		m := specMembers{parent: k.Name, kind: c.Kind, collection: mk.Collection, each: c.Each, eachAttr: c.Each,
			count: c.Count, group: c.Group, listAttr: mk.Collection, statuses: cfg.statuses, docs: map[string]string{}}
		if m.group == "" {
			m.group = "group"
		}
		for _, f := range mk.Fields {
			m.docs[f.Name] = strings.TrimSpace(f.Description)
		}
		for _, s := range mk.States.Transition {
			if !slices.ContainsFunc(mk.Create.Via, func(p lifecycle.Phase) bool { return p.State == s }) {
				m.example = s
				break
			}
		}
		if f, ok := k.Field(c.Each); ok {
			m.eachAttr = cmp.Or(f.ItemName, f.Name)
		}
		if c.Limit != nil {
			m.where = slices.DeleteFunc([]string{c.Limit.Outer, c.Limit.Inner}, func(s string) bool { return s == "" })
		}
		for _, p := range k.Propagate {
			if p.Remove && p.To.Children == c.Kind && len(p.Start) > 0 {
				m.repairAction, m.removes = p.Start[0], p.States
			}
		}
		if d := k.Derive; d != nil && d.From == c.Kind {
			for _, u := range d.Use {
				if u.Function == lifecycle.DeriveDominantState {
					m.order = u.Order
				}
			}
			m.status = familyStatuses()[d.Function]
		}
		return m, true
	}
	return specMembers{}, false
}

// waitsFor reports whether k's actions reach its children of kind child and wait for them.
func waitsFor(k *lifecycle.Kind, child string) bool {
	for _, p := range k.Propagate {
		if len(p.Start) > 0 && p.To.Children == child && p.Wait {
			return true
		}
	}
	return false
}

func (m specMembers) memberKind() string { return m.kind }

// memberType is the type of one element of the list of members.
func (m specMembers) memberType() types.ObjectType {
	t := map[string]attr.Type{"id": types.StringType, "name": types.StringType, "status": types.StringType, m.group: types.StringType}
	for _, f := range m.where {
		t[f] = types.StringType
	}
	return types.ObjectType{AttrTypes: t}
}

func (m specMembers) computed() []computedAttr {
	var out []computedAttr
	if m.status != nil {
		out = append(out, m.status.computed...)
	}
	status := fmt.Sprintf("The %s's status: a static one, or a transition state", m.kind)
	if m.example != "" {
		status += fmt.Sprintf(" such as `%s`", m.example)
	}
	fields := map[string]string{
		"id":     fmt.Sprintf("The %s's ID (read it with the `lifecycle_%s` data source).", m.kind, m.kind),
		"name":   fmt.Sprintf("The %s's name, `<%s>-<%s>-<n>`.", m.kind, m.parent, m.group),
		m.group:  cmp.Or(m.docs[m.group], fmt.Sprintf("The %s the %s belongs to.", m.group, m.kind)),
		"status": status + ".",
	}
	for _, f := range m.where {
		fields[f] = cmp.Or(m.docs[f], fmt.Sprintf("The %s's %s.", m.kind, f))
	}
	return append(out, computedAttr{name: m.listAttr, typ: types.ListType{ElemType: m.memberType()}, fields: fields,
		description: fmt.Sprintf("The %s objects of the %s in configuration order: by the order of their `%s` blocks, then by "+
			"number (`%s[0]` is the first block's first %s).", m.kind, m.parent, m.eachAttr, m.listAttr, m.kind)})
}

// list lists the members of the object with the ID, by item (group), then number.
func (m specMembers) list(ctx context.Context, d *providerData, id string) ([]client.Object, error) {
	out, err := d.client.ListAll(ctx, m.collection, client.ListOptions{ParentID: id})
	if err != nil {
		return nil, fmt.Errorf("listing the %s objects of %s %s: %w", m.kind, m.parent, id, err)
	}
	slices.SortFunc(out, func(a, b client.Object) int {
		return cmp.Or(cmp.Compare(str(a.Spec[m.group]), str(b.Spec[m.group])),
			cmp.Compare(nameIndexOf(a.Name), nameIndexOf(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// inConfigOrder sorts members as the configuration lists them: by the order of their item in
// the spec, then by number.
func (m specMembers) inConfigOrder(members []client.Object, o *client.Object) {
	order := map[string]int{}
	items, _ := o.Spec[m.each].([]any)
	for i, it := range items {
		if g, ok := it.(map[string]any); ok {
			order[str(g["name"])] = i
		}
	}
	rank := func(x client.Object) int {
		if i, ok := order[str(x.Spec[m.group])]; ok {
			return i
		}
		return len(items) // an item no longer in the spec goes last
	}
	slices.SortStableFunc(members, func(a, b client.Object) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(str(a.Spec[m.group]), str(b.Spec[m.group])),
			cmp.Compare(nameIndexOf(a.Name), nameIndexOf(b.Name)))
	})
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// nameIndexOf is the number ending a member's name (infra-web-3 → 3), 0 if none.
func nameIndexOf(name string) int {
	var n int
	_, _ = fmt.Sscanf(name[strings.LastIndex(name, "-")+1:], "%d", &n)
	return n
}

func (m specMembers) observe(ctx context.Context, d *providerData, o *client.Object) (map[string]attr.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := map[string]attr.Value{}
	if m.status != nil {
		maps.Copy(out, m.status.observe(o))
	}
	t := m.memberType()
	members, err := m.list(ctx, d, o.ID)
	if err != nil {
		diags.AddError(fmt.Sprintf("Error reading the %s objects of %s %s", m.kind, m.parent, o.ID), explain(err))
		out[m.listAttr] = types.ListNull(t)
		return out, diags
	}
	m.inConfigOrder(members, o)
	elems := make([]attr.Value, 0, len(members))
	for _, x := range members {
		vals := map[string]attr.Value{"id": types.StringValue(x.ID), "name": types.StringValue(x.Name),
			"status": types.StringValue(x.State), m.group: types.StringValue(str(x.Spec[m.group]))}
		for _, f := range m.where {
			vals[f] = types.StringValue(str(x.Spec[f]))
		}
		elems = append(elems, types.ObjectValueMust(t.AttrTypes, vals))
	}
	out[m.listAttr] = types.ListValueMust(t, elems)
	return out, diags
}

// member is a member as the state records it.
type member struct{ id, name, group, status string }

// stateMembers reads the list of members from a model (nil when unknown).
func (m specMembers) stateMembers(model *objectModel) []member {
	l, ok := model.Computed[m.listAttr].(types.List)
	if !ok || l.IsNull() || l.IsUnknown() {
		return nil
	}
	var out []member
	for _, e := range l.Elements() {
		obj, ok := e.(types.Object)
		if !ok {
			continue
		}
		a := obj.Attributes()
		get := func(k string) string {
			s, _ := a[k].(types.String)
			return s.ValueString()
		}
		out = append(out, member{id: get("id"), name: get("name"), group: get(m.group), status: get("status")})
	}
	return out
}

// planCounts are the member counts per item the model asks for; ok is false when one is not
// known yet.
func (m specMembers) planCounts(model *objectModel) (counts map[string]int, ok bool) {
	v, known := specValue(model.Fields[m.eachAttr])
	if !known || model.Fields[m.eachAttr].IsUnknown() {
		return nil, false
	}
	counts = map[string]int{}
	items, _ := v.([]any)
	for _, it := range items {
		g, _ := it.(map[string]any)
		name, nok := g["name"].(string)
		n, cok := g[m.count].(float64)
		if !nok || !cok {
			return nil, false
		}
		counts[name] += int(n)
	}
	return counts, true
}

// sameCounts compares member counts per item; an item of 0 members is one with none.
func sameCounts(a, b map[string]int) bool {
	drop := func(m map[string]int) map[string]int {
		out := maps.Clone(m)
		maps.DeleteFunc(out, func(_ string, n int) bool { return n == 0 })
		return out
	}
	return maps.Equal(drop(a), drop(b))
}

// counts are the members the state holds, per item.
func (m specMembers) counts(prior *objectModel) map[string]int {
	have := map[string]int{}
	for _, x := range m.stateMembers(prior) {
		have[x.group]++
	}
	return have
}

// kept reports whether the repair keeps a member in this status (it removes the others).
func (m specMembers) kept(status string) bool { return !slices.Contains(m.removes, status) }

// dominant is the status most members have, ties going to the earlier status of the order.
func (m specMembers) dominant(statuses []string) string {
	counts := map[string]int{}
	for _, s := range statuses {
		counts[s]++
	}
	best := ""
	for _, s := range slices.Concat(m.order, slices.Sorted(maps.Keys(counts))) {
		if counts[s] > counts[best] {
			best = s
		}
	}
	return best
}

func (m specMembers) plan(prior, plan *objectModel, from string) (string, string, bool) {
	members := m.stateMembers(prior)
	text := ""
	if m.status != nil {
		if s, ok := prior.Computed[m.status.describe].(types.String); ok && s.ValueString() != "" && s.ValueString() != from {
			text = fmt.Sprintf("%s (%s)", from, s.ValueString())
		}
	}
	if members == nil {
		return from, text, false
	}
	var healthy []string
	converge := false
	have := map[string]int{}
	for _, x := range members {
		if !m.kept(x.status) {
			converge = true
			continue
		}
		healthy = append(healthy, x.status)
		have[x.group]++
	}
	if converge && len(healthy) > 0 {
		// The repair removes the failed members first: routes start from what is left.
		from = m.dominant(healthy)
	}
	if want, ok := m.planCounts(plan); ok && !sameCounts(want, have) {
		converge = true
	}
	if desired := plan.Status.ValueString(); !plan.Status.IsUnknown() && desired != "" {
		for _, s := range healthy {
			if s != desired && slices.Contains(m.statuses, s) {
				converge = true
			}
		}
	}
	return from, text, converge
}

// failed lists the members the repair would remove.
func (m specMembers) failed(members []client.Object) []client.Object {
	var out []client.Object
	for _, x := range members {
		if !m.kept(x.State) {
			out = append(out, x)
		}
	}
	return out
}

// describe names members with their state and last error, one a line.
func (m specMembers) describe(members []client.Object) string {
	var b strings.Builder
	for _, x := range members {
		fmt.Fprintf(&b, "\n  - %s (%s, %s %s): %s", x.Name, x.ID, m.group, str(x.Spec[m.group]), x.State)
		if le := lastError(&x); le != "" {
			fmt.Fprintf(&b, ": %s", le)
		}
	}
	return b.String()
}

// shortfallWarning says which members failed and what the next apply does about them (the
// advice about the shortfall, advice.go).
func (m specMembers) shortfallWarning(diags *diag.Diagnostics, verb string, o *client.Object, members, failed []client.Object) {
	how := ""
	if m.status != nil {
		how = fmt.Sprintf(" (%s)", str(o.Status["text"]))
	}
	diags.AddWarning(fmt.Sprintf("%d of %d %s objects of %s %s failed", len(failed), len(members), m.kind, m.parent, o.ID), fmt.Sprintf(
		"The %s of %s %s succeeded in part%s. These %s objects failed:%s\n\n%s",
		verb, m.parent, o.ID, how, m.kind, m.describe(failed), m.shortfall("").text))
}

// attrNames are the names of computed attributes.
func attrNames(as []computedAttr) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.name
	}
	return out
}

// failures names the object's failed members with their recorded messages.
func (m specMembers) failures(ctx context.Context, d *providerData, o *client.Object) string {
	members, err := m.list(ctx, d, o.ID)
	if err != nil {
		return ""
	}
	m.inConfigOrder(members, o)
	failed := m.failed(members)
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of its %d %s objects failed:%s", len(failed), len(members), m.kind, m.describe(failed))
}

func (m specMembers) landed(ctx context.Context, d *providerData, k *lifecycle.Kind, verb string, o *client.Object, err error) (*client.Object, bool, diag.Diagnostics, error) {
	var diags diag.Diagnostics
	var se *stepError
	if err != nil && !errors.As(err, &se) {
		return o, false, diags, err // a timeout or an interruption: the engine reports it
	}
	members, lerr := m.list(ctx, d, o.ID)
	if lerr != nil {
		return o, false, diags, cmp.Or(err, lerr)
	}
	failed := m.failed(members)
	if len(failed) == 0 || len(failed) == len(members) {
		// All well, or every member failed: a failed object is an error (Terraform taints it).
		if err != nil && len(failed) > 0 {
			err = fmt.Errorf("%w; every %s failed:%s", err, m.kind, m.describe(failed))
		}
		return o, err == nil, diags, err
	}
	m.inConfigOrder(members, o)
	m.shortfallWarning(&diags, verb, o, members, m.failed(members))
	// A partly failed object whose dominant status is a failure has no route until it is
	// repaired: the next apply walks it (and the plan shows that).
	return o, err == nil, diags, nil
}

func (m specMembers) repairMembers(ctx context.Context, d *providerData, k *lifecycle.Kind, id string) (*client.Object, error) {
	w := newWalker(d, k, id, nil)
	o, err := w.wait(ctx)
	if err != nil {
		return o, err
	}
	members, err := m.list(ctx, d, o.ID)
	if err != nil {
		return o, err
	}
	failed := m.failed(members)
	a, ok := k.Action(m.repairAction)
	if len(failed) == 0 || !ok || !slices.Contains(a.From, o.State) {
		return o, nil
	}
	tflog.Info(ctx, "repairing: removing failed members", map[string]any{"id": o.ID, "action": m.repairAction, "members": len(failed)})
	if _, err := d.client.Act(ctx, k.Collection, o.ID, m.repairAction, client.ActionRequest{}); err != nil {
		return nil, fmt.Errorf("%s %s: %w", m.repairAction, o.ID, err)
	}
	return w.wait(ctx)
}

func (m specMembers) repair(ctx context.Context, d *providerData, k *lifecycle.Kind, model *objectModel) (*client.Object, error) {
	return m.repairMembers(ctx, d, k, model.ID.ValueString())
}

func (m specMembers) complete(ctx context.Context, d *providerData, k *lifecycle.Kind, model *objectModel, o *client.Object) (*client.Object, diag.Diagnostics, error) {
	var diags diag.Diagnostics
	id := model.ID.ValueString()
	w := newWalker(d, k, id, nil)
	members, err := m.list(ctx, d, id)
	if err != nil {
		return o, diags, err
	}
	// Replacements up to each item's count: the same items sent again make the simulator
	// scale each to its count (a scale counts the members it has).
	if want, ok := m.planCounts(model); ok {
		have := map[string]int{}
		for _, x := range members {
			have[str(x.Spec[m.group])]++
		}
		if !sameCounts(want, have) {
			items, _ := specValue(model.Fields[m.eachAttr])
			tflog.Info(ctx, "scaling to the items' counts", map[string]any{"id": id, "want": want, "have": have})
			if o, err = w.patch(ctx, map[string]any{m.each: items}); err != nil {
				return o, diags, err
			}
			if members, err = m.list(ctx, d, id); err != nil {
				return o, diags, err
			}
		}
	}
	// Members whose status differs from the object's (one resumed or suspended out of band)
	// walk their own state machine there, in parallel.
	if desired := model.Status.ValueString(); desired != "" {
		mk, err := d.kind(m.kind)
		if err != nil {
			return o, diags, err
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
			sem  = make(chan struct{}, 8)
		)
		for _, x := range members {
			if x.State == desired || !m.kept(x.State) || !mk.CanTransition(x.State, desired, false) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				tflog.Info(ctx, "bringing a member to its parent's status", map[string]any{"member": x.ID, "from": x.State, "to": desired})
				if _, err := newWalker(d, mk, x.ID, nil).converge(ctx, nil, desired); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return o, diags, err
		}
	}
	if o, err = w.wait(ctx); err != nil {
		return o, diags, err
	}
	if members, err = m.list(ctx, d, o.ID); err != nil {
		return o, diags, err
	}
	if failed := m.failed(members); len(failed) > 0 {
		m.shortfallWarning(&diags, "update", o, members, failed)
	}
	return o, diags, nil
}

// keptInPlan keeps the members known through an update that neither adds nor removes one:
// the items as they were, and no member the repair would remove. Their IDs, names, items and
// grouping fields stay; their statuses are known after apply.
func (m specMembers) keptInPlan(prior, plan *objectModel) map[string]attr.Value {
	held, ok := prior.Computed[m.listAttr].(types.List)
	if !ok || held.IsNull() || held.IsUnknown() {
		return nil
	}
	was, is := prior.Fields[m.eachAttr], plan.Fields[m.eachAttr]
	if was == nil || is == nil || is.IsUnknown() || !is.Equal(was) {
		return nil
	}
	for _, x := range m.stateMembers(prior) {
		if !m.kept(x.status) {
			return nil
		}
	}
	if want, ok := m.planCounts(plan); ok && !sameCounts(want, m.counts(prior)) {
		return nil // members are still to be made (a held create that continues)
	}
	t := m.memberType()
	items := make([]attr.Value, 0, len(held.Elements()))
	for _, e := range held.Elements() {
		obj, ok := e.(types.Object)
		if !ok {
			return nil
		}
		vals := maps.Clone(obj.Attributes())
		vals["status"] = types.StringUnknown()
		ov, d := types.ObjectValue(t.AttrTypes, vals)
		if d.HasError() {
			return nil
		}
		items = append(items, ov)
	}
	l, d := types.ListValue(t, items)
	if d.HasError() {
		return nil
	}
	return map[string]attr.Value{m.listAttr: l}
}
