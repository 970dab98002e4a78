package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*kindDataSource)(nil)

// NewKindDataSource is lifecycle_kind: a kind's state machine as the simulator serves it.
func NewKindDataSource() datasource.DataSource { return &kindDataSource{} }

type kindDataSource struct {
	data *providerData
}

var actionAttrTypes = map[string]attr.Type{
	"name":       types.StringType,
	"actor":      types.StringType,
	"from":       types.ListType{ElemType: types.StringType},
	"force_from": types.ListType{ElemType: types.StringType},
	"from_any":   types.BoolType,
	"via":        types.ListType{ElemType: types.StringType},
	"to":         types.StringType,
	"returns":    types.BoolType,
}

func (d *kindDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_kind"
}

func (d *kindDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	list := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{ElementType: types.StringType, Computed: true, Description: desc}
	}
	resp.Schema = schema.Schema{
		Description: "A kind's state machine: its states, actions and Mermaid state diagram, as the simulator serves it " +
			"(built-in kinds and user-defined ones).",
		Attributes: map[string]schema.Attribute{
			"name":              schema.StringAttribute{Required: true, Description: "The kind, such as `machine`."},
			"family":            schema.StringAttribute{Computed: true, Description: "The seed system the kind comes from (openvcloud, blazar, ...)."},
			"collection":        schema.StringAttribute{Computed: true, Description: "The URL collection of the kind's objects."},
			"description":       schema.StringAttribute{Computed: true, Description: "What the kind is."},
			"initial_state":     schema.StringAttribute{Computed: true, Description: "The state an object is modelled in before its create action runs, if any."},
			"static_states":     list("Static states: they change only when an action is requested (or the system or a timer acts)."),
			"transition_states": list("Transition states: phases of running actions."),
			"final_states":      list("Final states, which users cannot leave."),
			"error_states":      list("States that record an unrecoverable failure."),
			"parent_kind":       schema.StringAttribute{Computed: true, Description: "The kind objects of this kind live in, if any."},
			"actions": schema.ListNestedAttribute{
				Computed:    true,
				Description: "Every action: its name, the actor that starts it, the states it starts from, its phases and where it lands (`returns` when it lands where it started).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{Computed: true, Description: "The action's name, as `lifecycle_action` and the simulator's `POST .../actions/{action}` take it."},
					"actor": schema.StringAttribute{Computed: true, Description: "Who starts the action: `user` (an API call; only user actions make up the routes that `status` changes take), " +
						"or `system`, `timer`, `crm` or `controller`, which act by themselves."},
					"from":       schema.ListAttribute{ElementType: types.StringType, Computed: true, Description: "The static states the action may start from."},
					"force_from": schema.ListAttribute{ElementType: types.StringType, Computed: true, Description: "Further states the action may start from only when forced (CB-Tumblebug's `force`); empty for most kinds."},
					"from_any":   schema.BoolAttribute{Computed: true, Description: "Whether the action may start from any state, transition states included (a Blazar lease's delete)."},
					"via":        schema.ListAttribute{ElementType: types.StringType, Computed: true, Description: "The transition states the object passes through while the action runs, in order."},
					"to":         schema.StringAttribute{Computed: true, Description: "The static state the action lands in; empty when it returns to the state it started from."},
					"returns":    schema.BoolAttribute{Computed: true, Description: "Whether the action lands in the state it started from (a reboot, a disk operation)."},
				}},
			},
			"mermaid": schema.StringAttribute{Computed: true, Description: "The state diagram in Mermaid syntax."},
		},
	}
	markdownDataSourceSchema(&resp.Schema)
}

func (d *kindDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *kindDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !d.data.ready(&resp.Diagnostics) {
		return
	}
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	k, err := d.data.kind(name.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Unknown kind", err.Error())
		return
	}
	strs := func(xs []string) types.List {
		if xs == nil {
			xs = []string{}
		}
		l, diags := types.ListValueFrom(ctx, types.StringType, xs)
		resp.Diagnostics.Append(diags...)
		return l
	}
	var actions []attr.Value
	for _, a := range k.AllActions() {
		via := make([]string, len(a.Via))
		for i, p := range a.Via {
			via[i] = p.State
		}
		actor := string(a.Actor)
		if actor == "" {
			actor = "user"
		}
		obj, diags := types.ObjectValue(actionAttrTypes, map[string]attr.Value{
			"name": types.StringValue(a.Name), "actor": types.StringValue(actor),
			"from": strs(a.From), "force_from": strs(a.ForceFrom), "from_any": types.BoolValue(a.FromAny),
			"via": strs(via), "to": types.StringValue(a.To), "returns": types.BoolValue(a.Returns),
		})
		resp.Diagnostics.Append(diags...)
		actions = append(actions, obj)
	}
	actionList, diags := types.ListValue(types.ObjectType{AttrTypes: actionAttrTypes}, actions)
	resp.Diagnostics.Append(diags...)
	parent := types.StringNull()
	if k.Parent != nil {
		parent = types.StringValue(k.Parent.Kind)
	}
	initial := types.StringNull()
	if k.Initial != "" {
		initial = types.StringValue(k.Initial)
	}
	set := func(n string, v any) { resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(n), v)...) }
	set("name", k.Name)
	set("family", k.Family)
	set("collection", k.Collection)
	set("description", k.Description)
	set("initial_state", initial)
	set("static_states", strs(k.States.Static))
	set("transition_states", strs(k.States.Transition))
	set("final_states", strs(k.States.Final))
	set("error_states", strs(k.States.Error))
	set("parent_kind", parent)
	set("actions", actionList)
	set("mermaid", k.Mermaid())
}
