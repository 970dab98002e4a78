package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// queryVersion is the Terraform release with list resources (terraform query) and actions.
const queryVersion = "1.14"

var (
	_ list.ListResource              = (*kindList)(nil)
	_ list.ListResourceWithConfigure = (*kindList)(nil)
)

// kindList is the list resource of a lifecycle resource type (Terraform 1.14+ `list` blocks,
// run by `terraform query`): the objects of its kind the simulator holds, filtered by parent,
// state and name, as identities and, when asked, as the resource's state, made by the same
// code as the state an import reads. Kinds made only by a parent (a lease's reservations) have
// no resource, so no list: their parent's objects list them in their computed children.
type kindList struct {
	res *kindResource
}

func newKindList(cfg kindConfig) list.ListResource {
	return &kindList{res: &kindResource{cfg: cfg, computed: cfg.computedAttrs()}}
}

func (l *kindList) Metadata(ctx context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	l.res.Metadata(ctx, req, resp)
}

func (l *kindList) Configure(ctx context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	l.res.Configure(ctx, req, resp)
}

func (l *kindList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	cfg := l.res.cfg
	what := cfg.shape.objects()
	attrs := map[string]schema.Attribute{
		"name":  schema.StringAttribute{Optional: true, Description: "Only the objects with this name."},
		"state": schema.StringAttribute{Optional: true, Description: "Only the objects in this state (a static or a transition state, such as `RUNNING`)."},
	}
	if cfg.parentAttr != "" {
		attrs[cfg.parentAttr] = schema.StringAttribute{Optional: true,
			Description: fmt.Sprintf("Only the objects living in the %s with this ID.", cfg.parentKind)}
	}
	cfg.shape.listAttrs(attrs)
	desc := fmt.Sprintf("Lists the %s the simulator holds (Terraform %s+, `terraform query`), for example those made by a "+
		"script or another pipeline, so that they can be imported: each result has the object's identity and, with "+
		"`include_resource = true` (or `terraform query -generate-config-out=FILE`), the same attributes an import "+
		"reads.", what, queryVersion)
	if len(cfg.related) > 0 {
		names := make([]string, 0, len(cfg.related))
		for _, ra := range cfg.related {
			names = append(names, "`"+ra.attr+"`")
		}
		desc += " The objects it makes (" + strings.Join(names, ", ") + ") have no list of their own: they show in those attributes."
	}
	resp.Schema = schema.Schema{Description: desc, MarkdownDescription: desc, Attributes: attrs}
}

// listModel is a list block's configuration.
type listModel struct {
	Kind, Name, State, ParentID types.String
}

func (l *kindList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var diags diag.Diagnostics
	if !l.res.data.ready(&diags) {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	cfg := l.res.cfg
	var m listModel
	str := func(name string, dst *types.String) {
		diags.Append(req.Config.GetAttribute(ctx, path.Root(name), dst)...)
	}
	str("name", &m.Name)
	str("state", &m.State)
	if cfg.parentAttr != "" {
		str(cfg.parentAttr, &m.ParentID)
	}
	kind, d := cfg.shape.kindIn(ctx, req.Config)
	diags.Append(d...)
	m.Kind = kind
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	k, err := l.res.data.kind(m.Kind.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("kind"), "Unknown kind", err.Error()+". Load user-defined kinds with `lifecyclesim --kinds FILE`.")
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	if s := m.State.ValueString(); s != "" && !k.HasState(s) {
		// The simulator would list nothing, which reads as "there are none".
		diags.AddAttributeError(path.Root("state"), "Unknown state", unknownStateDetail(k, s))
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	objs, err := l.res.data.client.ListAll(ctx, k.Collection, client.ListOptions{ParentID: m.ParentID.ValueString(), State: m.State.ValueString()})
	if err != nil {
		diags.AddError("Error listing "+k.Name+" objects", explain(err))
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	if name := m.Name.ValueString(); name != "" {
		objs = slices.DeleteFunc(objs, func(o client.Object) bool { return o.Name != name })
	}
	slices.SortStableFunc(objs, func(a, b client.Object) int { return strings.Compare(a.Name, b.Name) })
	if req.Limit > 0 && int64(len(objs)) > req.Limit {
		objs = objs[:req.Limit]
	}
	stream.Results = func(push func(list.ListResult) bool) {
		for i := range objs {
			if !push(l.result(ctx, req, k, &objs[i])) {
				return
			}
		}
	}
}

// result is one object found: its identity, and its state when the request includes it.
func (l *kindList) result(ctx context.Context, req list.ListRequest, k *lifecycle.Kind, o *client.Object) list.ListResult {
	res := req.NewListResult(ctx)
	res.DisplayName = o.Name
	res.Diagnostics.Append(l.res.setIdentity(ctx, res.Identity, identityModel{ID: types.StringValue(o.ID), Kind: types.StringValue(o.Kind)})...)
	if req.IncludeResource {
		res.Diagnostics.Append(l.res.stateOf(ctx, k, o, res.Resource)...)
	}
	return res
}

// stateOf writes into dst the state of an object imported and read: what import followed by
// refresh stores, so a configuration written from it plans no changes.
func (r *kindResource) stateOf(ctx context.Context, k *lifecycle.Kind, o *client.Object, dst *tfsdk.Resource) diag.Diagnostics {
	st := tfsdk.State{Schema: dst.Schema, Raw: dst.Raw}
	diags := st.SetAttribute(ctx, path.Root("id"), o.ID)
	diags.Append(st.SetAttribute(ctx, path.Root("deletion_mode"), "destroy")...)
	diags.Append(r.cfg.shape.setKind(ctx, &st, types.StringValue(o.Kind))...)
	if diags.HasError() {
		return diags
	}
	m, d := r.read(ctx, st)
	diags.Append(d...)
	if diags.HasError() {
		return diags
	}
	diags.Append(r.fromObject(ctx, m, o, k)...)
	diags.Append(r.write(ctx, &st, m)...)
	dst.Raw = st.Raw
	return diags
}

// unknownStateDetail says that s is no state of k, which states are, and the one meant when
// s is a near miss (RUNNIN for RUNNING).
func unknownStateDetail(k *lifecycle.Kind, s string) string {
	states := slices.Concat(k.StaticStates(), k.States.Transition)
	detail := fmt.Sprintf("%q is not a state of %s objects, so the filter would find none. ", s, k.Name)
	if near := nearest(s, states); near != "" {
		detail += fmt.Sprintf("Did you mean %q? ", near)
	}
	detail += fmt.Sprintf("Filter by one of its static states %s, or one of its transition states %s.",
		quoted(k.StaticStates()), listOr(quotedList(k.States.Transition), "(none)"))
	return detail
}

func quotedList(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return out
}

// nearest is the candidate closest to s (case aside) within two edits, "" when none is.
func nearest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToUpper(s), strings.ToUpper(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
