// Package provider is the lifecycle Terraform provider: resources whose CRUD maps onto the
// lifecycle transitions of lifecyclesim objects, validated at plan time against the state
// machines of package lifecycle.
package provider

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// Defaults of the provider's settings.
const (
	DefaultEndpoint    = "http://127.0.0.1:7575"
	defaultRetryMax    = 6
	defaultPollTimeout = 25 * time.Second
)

var (
	_ provider.Provider                  = (*lifecycleProvider)(nil)
	_ provider.ProviderWithFunctions     = (*lifecycleProvider)(nil)
	_ provider.ProviderWithListResources = (*lifecycleProvider)(nil)
	_ provider.ProviderWithActions       = (*lifecycleProvider)(nil)
)

// New returns a constructor of the provider for providerserver. Started by Terraform with
// logging off (no TF_LOG or TF_LOG_PROVIDER), it also turns off the SDK's logs, which
// Terraform would only discard.
func New(version string) func() provider.Provider {
	quietUnreadLogs()
	return func() provider.Provider { return &lifecycleProvider{version: version, user: loadUserKinds()} }
}

type lifecycleProvider struct {
	version string
	// user are the user-defined kinds the environment names (LIFECYCLE_KINDS).
	user userKinds
}

// providerData is what Configure hands to resources and data sources.
type providerData struct {
	client      *client.Client
	kinds       *lifecycle.Registry
	pollTimeout time.Duration
	// reads answers this run's plan-time reads of objects (a child's parent).
	reads *planReads
	// locks runs actions on one object one at a time.
	locks *objectLocks
	// destroys are the objects whose destroy this run has planned so far.
	destroys *plannedDestroys
	// typed maps the kinds with typed resources to their type names (user kinds included).
	typed map[string]string
	// unavailable, when it holds an error, is why the simulator could not be used (down, or
	// the token rejected); every resource and data source reports it at first use.
	unavailable diag.Diagnostics
}

// kind returns a kind the simulator serves.
func (d *providerData) kind(name string) (*lifecycle.Kind, error) { return d.kinds.Kind(name) }

func (p *lifecycleProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "lifecycle"
	resp.Version = p.version
}

func (p *lifecycleProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages lifecycle-driven objects of a lifecyclesim simulator: desired statuses are " +
			"validated at plan time against each kind's state machine and reached by walking its transitions.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Optional:    true,
				Description: "Base URL of the lifecyclesim API. Defaults to the `LIFECYCLE_ENDPOINT` environment variable, then `" + DefaultEndpoint + "`.",
			},
			"token": schema.StringAttribute{
				Optional:    true,
				Sensitive:   true,
				Description: "Bearer token of your tenant, when the simulator runs with `--token`. Defaults to the `LIFECYCLE_TOKEN` environment variable.",
			},
			"max_retries": schema.Int64Attribute{
				Optional:    true,
				Description: fmt.Sprintf("How many times a request is retried after a connection error, `429`, `5xx` or `busy` answer; `0` turns retries off. Defaults to %d.", defaultRetryMax),
				Validators:  []validator.Int64{int64validator.AtLeast(0)},
			},
			"retry_wait_max": schema.StringAttribute{
				Optional:    true,
				CustomType:  timetypes.GoDurationType{},
				Description: "Longest wait between retries, as a Go duration (`30s`); it also caps the server's `Retry-After`. Defaults to `30s`.",
				Validators:  []validator.String{positiveDuration()},
			},
			"poll_timeout": schema.StringAttribute{
				Optional:    true,
				CustomType:  timetypes.GoDurationType{},
				Description: "How long one long-poll waits for an object to become static before asking again, as a Go duration. Defaults to `25s`.",
				Validators:  []validator.String{positiveDuration()},
			},
		},
	}
	markdownProviderSchema(&resp.Schema)
}

type providerModel struct {
	Endpoint     types.String         `tfsdk:"endpoint"`
	Token        types.String         `tfsdk:"token"`
	MaxRetries   types.Int64          `tfsdk:"max_retries"`
	RetryWaitMax timetypes.GoDuration `tfsdk:"retry_wait_max"`
	PollTimeout  timetypes.GoDuration `tfsdk:"poll_timeout"`
}

func (p *lifecycleProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if cfg.Endpoint.IsUnknown() || cfg.Token.IsUnknown() {
		// Known only after apply (from another resource): configure on the next run.
		return
	}
	endpoint := stringOr(cfg.Endpoint, os.Getenv("LIFECYCLE_ENDPOINT"), DefaultEndpoint)
	token := stringOr(cfg.Token, os.Getenv("LIFECYCLE_TOKEN"), "")
	// The validators checked the durations at validate time.
	retryWaitMax := durationOr(&resp.Diagnostics, cfg.RetryWaitMax, 30*time.Second)
	pollTimeout := durationOr(&resp.Diagnostics, cfg.PollTimeout, defaultPollTimeout)
	if resp.Diagnostics.HasError() {
		return
	}
	retries := defaultRetryMax
	if !cfg.MaxRetries.IsNull() {
		retries = int(cfg.MaxRetries.ValueInt64())
		if retries == 0 {
			retries = -1 // the client reads 0 as "default"
		}
	}
	c, err := client.New(client.Config{
		Endpoint: endpoint, Token: token, RetryMax: retries, RetryWaitMax: retryWaitMax,
		UserAgent: userAgent(req.TerraformVersion, p.version),
		Logger:    newHTTPLogger(ctx),
	})
	if err != nil {
		summary, detail := "Invalid lifecycle endpoint",
			fmt.Sprintf("%v. Set endpoint (or LIFECYCLE_ENDPOINT) to the simulator's URL, e.g. %s.", err, DefaultEndpoint)
		if !cfg.Endpoint.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("endpoint"), summary, detail)
			return
		}
		// From LIFECYCLE_ENDPOINT, so maybe with no provider block: reported at first use, as
		// an unreachable simulator is (below).
		resp.ResourceData, resp.DataSourceData = unavailable(summary, detail), unavailable(summary, detail)
		resp.ListResourceData, resp.ActionData = resp.ResourceData, resp.ResourceData
		return
	}
	// Ask for the kinds with few retries, so a simulator that is not running is reported in
	// seconds rather than after the full retry budget.
	probe, err := client.New(client.Config{Endpoint: endpoint, Token: token, RetryMax: 2, RetryWaitMax: time.Second,
		UserAgent: userAgent(req.TerraformVersion, p.version)})
	if err != nil {
		resp.Diagnostics.AddError("Invalid lifecycle endpoint", err.Error())
		return
	}
	kinds, err := probe.Kinds(ctx)
	if err != nil {
		summary, detail := "Cannot reach the lifecycle simulator", fmt.Sprintf(
			"Reading the kinds from %s failed: %v.\n\nStart the simulator (`make sim`, or `go run ./simulator/cmd/lifecyclesim`) "+
				"or set endpoint / LIFECYCLE_ENDPOINT to where it runs.", endpoint, err)
		if client.IsUnauthorized(err) {
			summary, detail = "The lifecycle simulator rejected the token", fmt.Sprintf(
				"%s answered: %v.\n\nSet token (or LIFECYCLE_TOKEN) to a token the simulator was started with (--token TENANT=TOKEN).", endpoint, err)
		}
		// Reported by every resource and data source that needs the simulator, not here: when
		// Configure fails and the root module has no provider block (the endpoint and token
		// came from the environment), Terraform prints its own "requires explicit
		// configuration. Add a provider block" error before this one, which sends users the
		// wrong way. Functions, which need no simulator, keep working.
		resp.ResourceData, resp.DataSourceData = unavailable(summary, detail), unavailable(summary, detail)
		resp.ListResourceData, resp.ActionData = resp.ResourceData, resp.ResourceData
		return
	}
	p.user.check(endpoint, kinds, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	reg := lifecycle.NewRegistry()
	if err := reg.Add(kinds...); err != nil {
		resp.Diagnostics.AddError("Invalid kinds from the simulator", err.Error())
		return
	}
	tflog.Debug(ctx, "configured lifecycle provider", map[string]any{"endpoint": endpoint, "kinds": len(kinds)})
	data := &providerData{client: c, kinds: reg, pollTimeout: pollTimeout, reads: newPlanReads(c, time.Now), locks: &objectLocks{},
		destroys: &plannedDestroys{},
		typed:    map[string]string{}}
	for _, cfg := range slices.Concat(typedKinds(), p.user.configs(false)) {
		data.typed[cfg.kind] = cfg.typeName
	}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ListResourceData = data
	resp.ActionData = data
}

func (p *lifecycleProvider) Resources(context.Context) []func() resource.Resource {
	out := []func() resource.Resource{NewObjectResource, NewActionResource}
	for _, cfg := range append(typedKinds(), p.user.configs(false)...) {
		out = append(out, func() resource.Resource { return newKindResource(cfg) })
	}
	return out
}

// ListResources are the list resources of every resource managing objects (Terraform 1.14+):
// lifecycle_object's, the typed ones' and the user kinds'.
func (p *lifecycleProvider) ListResources(context.Context) []func() list.ListResource {
	out := []func() list.ListResource{func() list.ListResource { return newKindList(objectKind()) }}
	for _, cfg := range append(typedKinds(), p.user.configs(false)...) {
		out = append(out, func() list.ListResource { return newKindList(cfg) })
	}
	return out
}

// Actions are the actions of every kind with a resource that offers some (Terraform 1.14+),
// and lifecycle_object's for any kind.
func (p *lifecycleProvider) Actions(context.Context) []func() action.Action {
	out := []func() action.Action{func() action.Action { return newKindAction(objectKind()) }}
	for _, cfg := range append(typedKinds(), p.user.configs(false)...) {
		if len(cfg.actions) > 0 {
			out = append(out, func() action.Action { return newKindAction(cfg) })
		}
	}
	return out
}

func (p *lifecycleProvider) DataSources(context.Context) []func() datasource.DataSource {
	out := []func() datasource.DataSource{NewKindDataSource, func() datasource.DataSource { return newObjectDataSource(objectKind()) }}
	for _, cfg := range slices.Concat(typedKinds(), dataOnlyKinds(), p.user.configs(false), p.user.configs(true)) {
		out = append(out, func() datasource.DataSource { return newObjectDataSource(cfg) })
	}
	return out
}

func (p *lifecycleProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{NewTransitionPathFunction, NewCanTransitionFunction}
}

// unavailable is the provider's data when the simulator cannot be used: every resource and
// data source reports the error when it is first used (see dataFrom).
func unavailable(summary, detail string) *providerData {
	d := &providerData{}
	d.unavailable.AddError(summary, detail)
	return d
}

// dataFrom takes the provider's data handed to a resource or data source; nil before the
// provider is configured, or with an error when the simulator cannot be used.
func dataFrom(pd any, diags *diag.Diagnostics) *providerData {
	if pd == nil {
		return nil
	}
	data, ok := pd.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("got %T; this is a bug in the provider", pd))
		return nil
	}
	if data.unavailable.HasError() {
		// The framework stops the operation on an error from the resource's Configure.
		diags.Append(data.unavailable...)
		return nil
	}
	return data
}

// ready reports whether the provider was configured, adding an error saying why not.
func (d *providerData) ready(diags *diag.Diagnostics) bool {
	if d == nil {
		diags.AddError("Provider not configured",
			"The lifecycle provider has no endpoint yet: its endpoint or token depends on a value known only after "+
				"apply. Apply the resources it depends on first (terraform apply -target=...), then apply again.")
		return false
	}
	return true
}

func stringOr(v types.String, fallbacks ...string) string {
	if !v.IsNull() && v.ValueString() != "" {
		return v.ValueString()
	}
	for _, f := range fallbacks {
		if f != "" {
			return f
		}
	}
	return ""
}
