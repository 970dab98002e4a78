package provider

import (
	"context"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The generic side of memberHooks: the schema of the computed attributes a kind's members give,
// for resources and data sources, and their unknown values for plans that converge members.

// resourceAttr is the computed resource attribute of a.
func (a computedAttr) resourceAttr() schema.Attribute {
	desc, md := both("", a.description)
	switch a.typ {
	case types.Int64Type:
		return schema.Int64Attribute{Computed: true, Description: desc, MarkdownDescription: md}
	case types.BoolType:
		return schema.BoolAttribute{Computed: true, Description: desc, MarkdownDescription: md}
	}
	switch t := a.typ.(type) {
	case types.MapType:
		return schema.MapAttribute{Computed: true, Description: desc, MarkdownDescription: md, ElementType: t.ElemType}
	case types.ListType:
		if obj, ok := t.ElemType.(types.ObjectType); ok {
			attrs := map[string]schema.Attribute{}
			for _, name := range slices.Sorted(maps.Keys(obj.AttrTypes)) {
				d, m := both("", a.fields[name])
				attrs[name] = schema.StringAttribute{Computed: true, Description: d, MarkdownDescription: m}
			}
			return schema.ListNestedAttribute{Computed: true, Description: desc, MarkdownDescription: md,
				NestedObject: schema.NestedAttributeObject{Attributes: attrs}}
		}
		return schema.ListAttribute{Computed: true, Description: desc, MarkdownDescription: md, ElementType: t.ElemType}
	case types.ObjectType:
		attrs := map[string]schema.Attribute{}
		for name, at := range t.AttrTypes {
			attrs[name] = computedAttr{description: a.fields[name], typ: at}.resourceAttr()
		}
		return schema.SingleNestedAttribute{Computed: true, Description: desc, MarkdownDescription: md, Attributes: attrs}
	}
	return schema.StringAttribute{Computed: true, Description: desc, MarkdownDescription: md}
}

// dataAttr is the computed data source attribute of a.
func (a computedAttr) dataAttr() dschema.Attribute {
	desc, md := both("", a.description)
	switch a.typ {
	case types.Int64Type:
		return dschema.Int64Attribute{Computed: true, Description: desc, MarkdownDescription: md}
	case types.BoolType:
		return dschema.BoolAttribute{Computed: true, Description: desc, MarkdownDescription: md}
	}
	switch t := a.typ.(type) {
	case types.MapType:
		return dschema.MapAttribute{Computed: true, Description: desc, MarkdownDescription: md, ElementType: t.ElemType}
	case types.ListType:
		if obj, ok := t.ElemType.(types.ObjectType); ok {
			attrs := map[string]dschema.Attribute{}
			for _, name := range slices.Sorted(maps.Keys(obj.AttrTypes)) {
				d, m := both("", a.fields[name])
				attrs[name] = dschema.StringAttribute{Computed: true, Description: d, MarkdownDescription: m}
			}
			return dschema.ListNestedAttribute{Computed: true, Description: desc, MarkdownDescription: md,
				NestedObject: dschema.NestedAttributeObject{Attributes: attrs}}
		}
		return dschema.ListAttribute{Computed: true, Description: desc, MarkdownDescription: md, ElementType: t.ElemType}
	case types.ObjectType:
		attrs := map[string]dschema.Attribute{}
		for name, at := range t.AttrTypes {
			attrs[name] = computedAttr{description: a.fields[name], typ: at}.dataAttr()
		}
		return dschema.SingleNestedAttribute{Computed: true, Description: desc, MarkdownDescription: md, Attributes: attrs}
	}
	return dschema.StringAttribute{Computed: true, Description: desc, MarkdownDescription: md}
}

// unknown is a's value when the plan cannot tell it (known after apply).
func (a computedAttr) unknown(ctx context.Context) (attr.Value, error) {
	return a.typ.ValueFromTerraform(ctx, tftypes.NewValue(a.typ.TerraformType(ctx), tftypes.UnknownValue))
}
