package provider

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

var (
	_ datasource.DataSourceWithConfigure        = (*objectDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*objectDataSource)(nil)
)

// objectDataSource reads one object of a kind by ID or by name. It shares the kind's
// configuration (and so its attribute mapping) with the resource.
type objectDataSource struct {
	res kindResource
}

func newObjectDataSource(cfg kindConfig) datasource.DataSource {
	return &objectDataSource{res: kindResource{cfg: cfg, computed: cfg.computedAttrs()}}
}

func (d *objectDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.res.cfg.typeName
}

func (d *objectDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	cfg := d.res.cfg
	attrs := map[string]schema.Attribute{
		"id":    schema.StringAttribute{Optional: true, Computed: true, Description: "ID of the object. Set exactly one of `id` and `name`."},
		"name":  schema.StringAttribute{Optional: true, Computed: true, Description: "Name of the object; it must match exactly one live object (objects in the recycle bin or decommissioned count only when no live object has the name)."},
		"state": schema.StringAttribute{Computed: true, Description: "The object's current state, static or transitional."},
		"status": schema.StringAttribute{Computed: true,
			Description: "The static state the object is in, or will settle in when its running transition ends."},
		"deletion_mode": schema.StringAttribute{Computed: true, Description: "Always `destroy`: a data source removes nothing. " +
			"It is here so that a data source's attributes are its resource's."},
	}
	cfg.shape.dataSourceAttrs(cfg, attrs)
	if cfg.parentAttr != "" {
		attrs[cfg.parentAttr] = schema.StringAttribute{Computed: true, Description: fmt.Sprintf("ID of the %s the object lives in.", cfg.parentKind)}
	}
	for _, f := range cfg.fields {
		attrs[f.attr] = dataAttribute(f.field)
	}
	for _, a := range cfg.computedAttrs() {
		attrs[a.name] = a.dataAttr()
	}
	desc, ok := dataSourceDescriptions[cfg.typeName]
	if !ok {
		desc = fmt.Sprintf("Reads an object of kind `%s` by ID or by name. %s", cfg.kind, cfg.description)
	}
	resp.Schema = schema.Schema{Description: desc, Attributes: attrs}
	markdownDataSourceSchema(&resp.Schema)
}

func (d *objectDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name")),
	}
}

func (d *objectDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.res.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// dataGetter adapts tfsdk.Config (which has no status for typed kinds without it) to the
// resource's reader.
func (d *objectDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !d.res.data.ready(&resp.Diagnostics) {
		return
	}
	r := &d.res
	var id, name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("id"), &id)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	kind, diags := r.cfg.shape.kindIn(ctx, req.Config)
	resp.Diagnostics.Append(diags...)
	m := &objectModel{Fields: map[string]attr.Value{}, Computed: map[string]attr.Value{}, Kind: kind, Spec: types.DynamicNull()}
	if resp.Diagnostics.HasError() {
		return
	}
	k, diags := r.kindOf(m)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	var o *client.Object
	if !id.IsNull() {
		var err error
		if o, err = r.data.client.Get(ctx, k.Collection, id.ValueString()); err != nil {
			resp.Diagnostics.AddError("Error reading "+k.Name, explain(err))
			return
		}
	} else {
		all, err := r.data.client.ListAll(ctx, k.Collection, client.ListOptions{})
		if err != nil {
			resp.Diagnostics.AddError("Error listing "+k.Collection, explain(err))
			return
		}
		// A live object wins over namesakes in the recycle bin or decommissioned; one of those
		// is found only when nothing live has the name.
		removed := append(k.DeletionTargets("delete"), k.DeletionTargets("destroy")...)
		var live, gone []client.Object
		for _, x := range all {
			switch {
			case x.Name != name.ValueString():
			case slices.Contains(removed, x.State):
				gone = append(gone, x)
			default:
				live = append(live, x)
			}
		}
		found := live
		if len(live) == 0 {
			found = gone
		}
		if len(found) != 1 {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "No single "+k.Name+" with this name",
				fmt.Sprintf("%d %s objects are named %q; look it up by id instead.", len(found), k.Name, name.ValueString()))
			return
		}
		o = &found[0]
	}
	resp.Diagnostics.Append(r.fromObject(ctx, m, o, k)...)
	resp.Diagnostics.Append(d.write(ctx, resp, m)...)
}

func (d *objectDataSource) write(ctx context.Context, resp *datasource.ReadResponse, m *objectModel) diag.Diagnostics {
	var diags diag.Diagnostics
	set := func(name string, v any) { diags.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...) }
	cfg := d.res.cfg
	set("id", m.ID)
	set("name", m.Name)
	set("state", m.State)
	set("status", m.Status)
	set("deletion_mode", types.StringValue("destroy"))
	cfg.shape.writeData(m, set)
	if cfg.parentAttr != "" {
		set(cfg.parentAttr, m.ParentID)
	}
	for _, f := range cfg.fields {
		set(f.attr, m.Fields[f.attr])
	}
	for _, a := range d.res.computed {
		set(a.name, m.Computed[a.name])
	}
	return diags
}
