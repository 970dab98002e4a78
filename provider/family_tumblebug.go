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

// lifecycle_mci: a CB-Tumblebug MCI managed as one, with its VMs as members. The generic
// resource walks the MCI's own state machine; mciMembers (the engine's memberHooks) adds what
// an MCI is made of: the VM list and the aggregated status as computed attributes, where a
// partly failed MCI stands for routes, refine before an update, and after it replacements up
// to each subgroup's count and VMs brought to the MCI's status.

// tumblebugDocs are the CB-Tumblebug kinds as their resources describe them; an MCI's VMs are
// its members (mciMembers), and subgroup keeps the name of earlier releases.
func tumblebugDocs() map[string]familyDoc {
	return map[string]familyDoc{
		"mci": {description: "A CB-Tumblebug multi-cloud infrastructure (MCI): `subgroup` blocks of identical VMs across clouds, " +
			"managed as one. `status` is `Running` or `Suspended` for the whole MCI; its state is the dominant status of " +
			"its VMs, and `status_text`, `status_count` and `vms` show each VM. Changing a subgroup's `count` scales it " +
			"in place. VMs that fail leave the apply successful with a warning; the next plan refines them and " +
			"provisions replacements.",
			names: map[string]string{"subgroups": "subgroup"}, family: mciMembers{}},
		"vm": {description: "A CB-Tumblebug VM of an MCI, made by the MCI's create or scale-out."},
	}
}

// mciVMsCollection is where an MCI's VMs are listed (GET /v1/vms?parent_id=MCI_ID).
const mciVMsCollection = "vms"

var (
	mciVMType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"id": types.StringType, "name": types.StringType, "subgroup": types.StringType, "status": types.StringType,
		"csp": types.StringType, "region": types.StringType,
	}}
	mciCountKeys = []string{
		"total", "creating", "running", "failed", "suspended", "rebooting", "terminated",
		"suspending", "resuming", "terminating", "undefined",
	}
)

type mciMembers struct{}

func (mciMembers) computed() []computedAttr {
	return []computedAttr{
		{name: "status_text", typ: types.StringType, description: "The MCI's status as CB-Tumblebug shows it: " +
			"`(Partial-)Dominant:count (R:running/total)`, such as `Partial-Running:2 (R:2/3)`. The dominant status is the " +
			"most frequent among the VMs (ties go to the earlier of Failed, Suspended, Running, Terminated, Creating, " +
			"Suspending, Resuming, Rebooting, Terminating, Undefined); `Partial-` means not every VM has it."},
		{name: "status_count", typ: types.MapType{ElemType: types.Int64Type}, description: "How many VMs have each status: " +
			"keys " + quoted(mciCountKeys) + "."},
		{name: "target_action", typ: types.StringType, description: "The action running on the MCI (`create`, `suspend`, `scale`...), `None` when none runs."},
		{name: "target_status", typ: types.StringType, description: "The status the running action leads to, `None` when none runs."},
		{name: "vms", typ: types.ListType{ElemType: mciVMType}, description: "The MCI's VMs in configuration order: by the order of their `subgroup` blocks, then by number (`vms[0]` is the first block's first VM).",
			fields: map[string]string{
				"id": "The VM's ID (read it with the `lifecycle_vm` data source).", "name": "The VM's name, `<mci>-<subgroup>-<n>`.",
				"subgroup": "The subgroup the VM belongs to.", "status": "The VM's status: a static one, or a transition such as `Resuming`.",
				"csp": "The VM's cloud service provider.", "region": "The VM's region.",
			}},
	}
}

// vms lists an MCI's VMs by subgroup, then number.
func mciVMs(ctx context.Context, d *providerData, mciID string) ([]client.Object, error) {
	vms, err := d.client.ListAll(ctx, mciVMsCollection, client.ListOptions{ParentID: mciID})
	if err != nil {
		return nil, fmt.Errorf("listing the VMs of mci %s: %w", mciID, err)
	}
	slices.SortFunc(vms, func(a, b client.Object) int {
		return cmp.Or(cmp.Compare(str(a.Spec["subgroup"]), str(b.Spec["subgroup"])),
			cmp.Compare(nameIndexOf(a.Name), nameIndexOf(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	return vms, nil
}

// inConfigOrder sorts an MCI's VMs as its configuration lists them: by the order of their
// subgroup in the spec (the subgroup blocks' order), then by number.
func inConfigOrder(vms []client.Object, o *client.Object) {
	order := map[string]int{}
	groups, _ := o.Spec["subgroups"].([]any)
	for i, g := range groups {
		if m, ok := g.(map[string]any); ok {
			order[str(m["name"])] = i
		}
	}
	rank := func(vm client.Object) int {
		if i, ok := order[str(vm.Spec["subgroup"])]; ok {
			return i
		}
		return len(groups) // a subgroup no longer in the spec goes last
	}
	slices.SortStableFunc(vms, func(a, b client.Object) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(str(a.Spec["subgroup"]), str(b.Spec["subgroup"])),
			cmp.Compare(nameIndexOf(a.Name), nameIndexOf(b.Name)))
	})
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// nameIndexOf is the number ending a VM's name (infra-web-3 → 3), 0 if none.
func nameIndexOf(name string) int {
	var n int
	_, _ = fmt.Sscanf(name[strings.LastIndex(name, "-")+1:], "%d", &n)
	return n
}

func (h mciMembers) observe(ctx context.Context, d *providerData, o *client.Object) (map[string]attr.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := map[string]attr.Value{
		"status_text":   types.StringValue(str(o.Status["text"])),
		"target_action": types.StringValue(cmp.Or(str(o.Status["target_action"]), "None")),
		"target_status": types.StringValue(cmp.Or(str(o.Status["target_status"]), "None")),
	}
	counts := map[string]attr.Value{}
	raw, _ := o.Status["status_count"].(map[string]any)
	for _, key := range mciCountKeys {
		n, _ := raw["count_"+key].(float64)
		counts[key] = types.Int64Value(int64(n))
	}
	out["status_count"] = types.MapValueMust(types.Int64Type, counts)
	vms, err := mciVMs(ctx, d, o.ID)
	if err != nil {
		diags.AddError("Error reading the VMs of mci "+o.ID, explain(err))
		out["vms"] = types.ListNull(mciVMType)
		return out, diags
	}
	inConfigOrder(vms, o)
	elems := make([]attr.Value, 0, len(vms))
	for _, vm := range vms {
		elems = append(elems, types.ObjectValueMust(mciVMType.AttrTypes, map[string]attr.Value{
			"id": types.StringValue(vm.ID), "name": types.StringValue(vm.Name), "subgroup": types.StringValue(str(vm.Spec["subgroup"])),
			"status": types.StringValue(vm.State), "csp": types.StringValue(str(vm.Spec["csp"])), "region": types.StringValue(str(vm.Spec["region"])),
		}))
	}
	out["vms"] = types.ListValueMust(mciVMType, elems)
	return out, diags
}

// mciVM is a VM as the state records it.
type mciVM struct{ id, name, subgroup, status string }

// stateVMs reads the VM list from a model (nil when unknown).
func stateVMs(m *objectModel) []mciVM {
	l, ok := m.Computed["vms"].(types.List)
	if !ok || l.IsNull() || l.IsUnknown() {
		return nil
	}
	var out []mciVM
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
		out = append(out, mciVM{id: get("id"), name: get("name"), subgroup: get("subgroup"), status: get("status")})
	}
	return out
}

// planCounts are the VM counts per subgroup the model asks for; ok is false when one is not
// known yet.
func planCounts(m *objectModel) (counts map[string]int, ok bool) {
	v, known := specValue(m.Fields["subgroup"])
	if !known || m.Fields["subgroup"].IsUnknown() {
		return nil, false
	}
	counts = map[string]int{}
	items, _ := v.([]any)
	for _, it := range items {
		g, _ := it.(map[string]any)
		name, nok := g["name"].(string)
		n, cok := g["count"].(float64)
		if !nok || !cok {
			return nil, false
		}
		counts[name] += int(n)
	}
	return counts, true
}

// sameCounts compares VM counts per subgroup; a subgroup of 0 VMs is one with none.
func sameCounts(a, b map[string]int) bool {
	drop := func(m map[string]int) map[string]int {
		out := maps.Clone(m)
		maps.DeleteFunc(out, func(_ string, n int) bool { return n == 0 })
		return out
	}
	return maps.Equal(drop(a), drop(b))
}

func (h mciMembers) plan(prior, plan *objectModel, from string) (string, string, bool) {
	vms := stateVMs(prior)
	describe := prior.Computed["status_text"]
	text := ""
	if s, ok := describe.(types.String); ok && s.ValueString() != "" && s.ValueString() != from {
		text = fmt.Sprintf("%s (%s)", from, s.ValueString())
	}
	if vms == nil {
		return from, text, false
	}
	var healthy []string
	converge := false
	have := map[string]int{}
	for _, vm := range vms {
		if !lifecycle.RefineKeeps(vm.status) {
			converge = true
			continue
		}
		healthy = append(healthy, vm.status)
		have[vm.subgroup]++
	}
	if converge && len(healthy) > 0 {
		// refine removes the failed and undefined VMs first: routes start from what is left.
		from = lifecycle.AggregateMCIStatus(healthy).Dominant
	}
	if want, ok := planCounts(plan); ok && !sameCounts(want, have) {
		converge = true
	}
	if desired := plan.Status.ValueString(); !plan.Status.IsUnknown() && desired != "" {
		for _, s := range healthy {
			if s != desired && (s == "Running" || s == "Suspended") {
				converge = true
			}
		}
	}
	return from, text, converge
}

// failedVMs lists the VMs that refine would remove.
func failedVMs(vms []client.Object) []client.Object {
	var out []client.Object
	for _, vm := range vms {
		if !lifecycle.RefineKeeps(vm.State) {
			out = append(out, vm)
		}
	}
	return out
}

// describeVMs names VMs with their state and last error, one a line.
func describeVMs(vms []client.Object) string {
	var b strings.Builder
	for _, vm := range vms {
		fmt.Fprintf(&b, "\n  - %s (%s, subgroup %s): %s", vm.Name, vm.ID, str(vm.Spec["subgroup"]), vm.State)
		if le := lastError(&vm); le != "" {
			fmt.Fprintf(&b, ": %s", le)
		}
	}
	return b.String()
}

// shortfallWarning says which VMs failed and what the next apply does about them.
func shortfallWarning(diags *diag.Diagnostics, verb string, o *client.Object, vms, failed []client.Object) {
	diags.AddWarning(fmt.Sprintf("%d of %d VMs of mci %s failed", len(failed), len(vms), o.ID), fmt.Sprintf(
		"The %s of mci %s succeeded in part (%s). These VMs failed:%s\n\n"+
			"The MCI is kept and not tainted, so its working VMs stay. Its status_text, status_count and vms show the "+
			"shortfall, and the next terraform plan offers an in-place update that refines the failed VMs and "+
			"provisions replacements up to each subgroup's count.",
		verb, o.ID, str(o.Status["text"]), describeVMs(failed)))
}

// failures names the MCI's failed VMs with their recorded messages.
func (h mciMembers) failures(ctx context.Context, d *providerData, o *client.Object) string {
	vms, err := mciVMs(ctx, d, o.ID)
	if err != nil {
		return ""
	}
	inConfigOrder(vms, o)
	failed := failedVMs(vms)
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of its %d VMs failed:%s", len(failed), len(vms), describeVMs(failed))
}

func (h mciMembers) landed(ctx context.Context, d *providerData, k *lifecycle.Kind, verb string, o *client.Object, err error) (*client.Object, bool, diag.Diagnostics, error) {
	var diags diag.Diagnostics
	var se *stepError
	if err != nil && !errors.As(err, &se) {
		return o, false, diags, err // a timeout or an interruption: the engine reports it
	}
	vms, lerr := mciVMs(ctx, d, o.ID)
	if lerr != nil {
		return o, false, diags, cmp.Or(err, lerr)
	}
	failed := failedVMs(vms)
	if len(failed) == 0 || len(failed) == len(vms) {
		// All well, or every VM failed: a Failed MCI is an error (Terraform taints it).
		if err != nil && len(failed) > 0 {
			err = fmt.Errorf("%w; every VM failed:%s", err, describeVMs(failed))
		}
		return o, err == nil, diags, err
	}
	inConfigOrder(vms, o)
	shortfallWarning(&diags, verb, o, vms, failedVMs(vms))
	// A partly failed MCI whose dominant status is Failed has no route until it is refined:
	// the next apply walks it (and the plan shows that).
	return o, err == nil, diags, nil
}

func (h mciMembers) repair(ctx context.Context, d *providerData, k *lifecycle.Kind, m *objectModel) (*client.Object, error) {
	w := newWalker(d, k, m.ID.ValueString(), nil)
	o, err := w.wait(ctx)
	if err != nil {
		return o, err
	}
	vms, err := mciVMs(ctx, d, o.ID)
	if err != nil {
		return o, err
	}
	failed := failedVMs(vms)
	refine, _ := k.Action("refine")
	if len(failed) == 0 || refine == nil || !slices.Contains(refine.From, o.State) {
		return o, nil
	}
	tflog.Info(ctx, "refining the mci: removing failed and undefined VMs", map[string]any{"id": o.ID, "vms": len(failed)})
	if _, err := d.client.Act(ctx, k.Collection, o.ID, "refine", client.ActionRequest{}); err != nil {
		return nil, fmt.Errorf("refine %s: %w", o.ID, err)
	}
	return w.wait(ctx)
}

func (h mciMembers) complete(ctx context.Context, d *providerData, k *lifecycle.Kind, m *objectModel, o *client.Object) (*client.Object, diag.Diagnostics, error) {
	var diags diag.Diagnostics
	w := newWalker(d, k, m.ID.ValueString(), nil)
	vms, err := mciVMs(ctx, d, m.ID.ValueString())
	if err != nil {
		return o, diags, err
	}
	// Replacements up to each subgroup's count: the same subgroups sent again make the
	// simulator scale each to its count (scale counts the VMs it has).
	if want, ok := planCounts(m); ok {
		have := map[string]int{}
		for _, vm := range vms {
			have[str(vm.Spec["subgroup"])]++
		}
		if !sameCounts(want, have) {
			groups, _ := specValue(m.Fields["subgroup"])
			tflog.Info(ctx, "scaling the mci's subgroups to their counts", map[string]any{"id": m.ID.ValueString(), "want": want, "have": have})
			if o, err = w.patch(ctx, map[string]any{"subgroups": groups}); err != nil {
				return o, diags, err
			}
			if vms, err = mciVMs(ctx, d, m.ID.ValueString()); err != nil {
				return o, diags, err
			}
		}
	}
	// VMs whose status differs from the MCI's (one resumed or suspended out of band) walk
	// their own state machine there, in parallel.
	if desired := m.Status.ValueString(); desired != "" {
		vk, err := d.kind("vm")
		if err != nil {
			return o, diags, err
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
			sem  = make(chan struct{}, 8)
		)
		for _, vm := range vms {
			if vm.State == desired || !lifecycle.RefineKeeps(vm.State) || !vk.CanTransition(vm.State, desired, false) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				tflog.Info(ctx, "bringing a VM to the mci's status", map[string]any{"vm": vm.ID, "from": vm.State, "to": desired})
				if _, err := newWalker(d, vk, vm.ID, nil).converge(ctx, nil, desired); err != nil {
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
	if vms, err = mciVMs(ctx, d, o.ID); err != nil {
		return o, diags, err
	}
	if failed := failedVMs(vms); len(failed) > 0 {
		shortfallWarning(&diags, "update", o, vms, failed)
	}
	return o, diags, nil
}

func (mciMembers) memberKind() string { return "vm" }

var _ withKnownMembers = mciMembers{}

// keptInPlan keeps an MCI's VMs known through an update that neither adds nor removes one:
// the subgroups as they were, and no VM that a refine would remove. Their IDs, names,
// subgroups, clouds and regions stay; their statuses are known after apply.
func (mciMembers) keptInPlan(prior, plan *objectModel) map[string]attr.Value {
	held, ok := prior.Computed["vms"].(types.List)
	if !ok || held.IsNull() || held.IsUnknown() {
		return nil
	}
	was, is := prior.Fields["subgroup"], plan.Fields["subgroup"]
	if was == nil || is == nil || is.IsUnknown() || !is.Equal(was) {
		return nil
	}
	for _, vm := range stateVMs(prior) {
		if !lifecycle.RefineKeeps(vm.status) {
			return nil
		}
	}
	items := make([]attr.Value, 0, len(held.Elements()))
	for _, e := range held.Elements() {
		obj, ok := e.(types.Object)
		if !ok {
			return nil
		}
		vals := maps.Clone(obj.Attributes())
		vals["status"] = types.StringUnknown()
		ov, d := types.ObjectValue(mciVMType.AttrTypes, vals)
		if d.HasError() {
			return nil
		}
		items = append(items, ov)
	}
	l, d := types.ListValue(mciVMType, items)
	if d.HasError() {
		return nil
	}
	return map[string]attr.Value{"vms": l}
}
