package provider

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

const defaultTimeout = 20 * time.Minute

var (
	_ resource.ResourceWithConfigure   = (*kindResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*kindResource)(nil)
	_ resource.ResourceWithImportState = (*kindResource)(nil)
)

// kindResource is the one lifecycle resource implementation; a kindConfig makes it a machine,
// a disk, or (with the object shape) the generic lifecycle_object.
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

func (r *kindResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
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

// desiredState is the static state the configuration asks for ("" when not known yet, or
// when time drives the kind).
func (r *kindResource) desiredState(m *objectModel) string { return r.cfg.desiredOf(m) }

// params are sent with every action of the object: its links' values.
func (r *kindResource) params(m *objectModel) map[string]any { return r.cfg.linkParams(m) }

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

// withArticle puts "a" or "an" before a kind's name.
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// resourceTypeOf names the resource type that manages a kind: its typed resource (the built-in
// kinds', and the user kinds' the provider was started with), else lifecycle_object.
func (d *providerData) resourceTypeOf(kind string) string {
	if d != nil && d.typed[kind] != "" {
		return "lifecycle_" + d.typed[kind]
	}
	for _, c := range typedKinds() {
		if c.kind == kind {
			return "lifecycle_" + c.typeName
		}
	}
	return "lifecycle_object"
}
