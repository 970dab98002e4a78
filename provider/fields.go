package provider

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// tfField is a declared spec field as a typed resource shows it.
type tfField struct {
	// attr is the attribute or block name: the field's name, or for a list the name the spec
	// gives its items (item_name).
	attr  string
	field *lifecycle.Field
	// byAction fields are set by actions (a disk's machine_id by attach and detach), never
	// sent in the spec. A link no action sets (set_by and cleared_by empty), or only the
	// create sets, is a spec field like any other: the create and updates send it, and the
	// simulator checks it.
	byAction bool
}

// block reports whether the field is a list of objects, shown as a nested block.
func (f tfField) block() bool { return isBlock(f.field) }

func isBlock(f *lifecycle.Field) bool {
	return f.Type == lifecycle.TypeList && f.Items != nil && f.Items.Type == lifecycle.TypeObject && len(f.Items.Fields) > 0
}

// fieldsOf returns a kind's declared spec fields as attributes, in spec order.
func fieldsOf(k *lifecycle.Kind) []tfField {
	var out []tfField
	for i := range k.Fields {
		f := &k.Fields[i]
		tf := tfField{attr: cmp.Or(f.ItemName, f.Name), field: f}
		for _, l := range actionLinks(k) {
			if l.Field == f.Name {
				tf.byAction = true
			}
		}
		out = append(out, tf)
	}
	return out
}

// attrType is the Terraform type of a declared field.
func attrType(f *lifecycle.Field) attr.Type {
	switch f.Type {
	case lifecycle.TypeInteger, lifecycle.TypeNumber:
		return types.Float64Type
	case lifecycle.TypeBool:
		return types.BoolType
	case lifecycle.TypeTime:
		return timetypes.RFC3339Type{}
	case lifecycle.TypeList:
		return types.ListType{ElemType: listElemType(f)}
	case lifecycle.TypeObject:
		if len(f.Fields) == 0 {
			return types.MapType{ElemType: types.StringType}
		}
		return types.ObjectType{AttrTypes: objectAttrTypes(f)}
	}
	return types.StringType
}

// listElemType is the element type of a list field: its items' type, string when it
// declares none.
func listElemType(f *lifecycle.Field) attr.Type {
	if f.Items == nil {
		return types.StringType
	}
	return attrType(f.Items)
}

func objectAttrTypes(f *lifecycle.Field) map[string]attr.Type {
	out := make(map[string]attr.Type, len(f.Fields))
	for i := range f.Fields {
		out[f.Fields[i].Name] = attrType(&f.Fields[i])
	}
	return out
}

// description is a field's description with what the declaration adds (bounds, default).
func description(f *lifecycle.Field) string {
	d := strings.TrimSpace(f.Description)
	var more []string
	if len(f.Enum) > 0 {
		more = append(more, "One of "+quoted(f.Enum)+".")
	}
	switch {
	case f.Min != nil && f.Max != nil:
		more = append(more, fmt.Sprintf("Between %s and %s.", stringOf(*f.Min), stringOf(*f.Max)))
	case f.Min != nil:
		more = append(more, "At least "+stringOf(*f.Min)+".")
	case f.Max != nil:
		more = append(more, "At most "+stringOf(*f.Max)+".")
	}
	if f.Type == lifecycle.TypeTime {
		more = append(more, "An RFC 3339 time such as `2030-01-02T15:04:05Z`.")
	}
	if f.Default != nil {
		more = append(more, "Defaults to `"+stringOf(f.Default)+"`.")
	}
	if f.Immutable && !strings.Contains(d, "replace") {
		more = append(more, "Changing it replaces the object.")
	}
	if len(f.UpdatableIn) > 0 {
		more = append(more, "It can change only while the object is "+quoted(f.UpdatableIn)+".")
	}
	if len(more) > 0 {
		d = strings.TrimSpace(d + " " + strings.Join(more, " "))
	}
	return d
}

// resourceAttribute builds the schema attribute of a field that is not a block.
func resourceAttribute(f *lifecycle.Field) schema.Attribute { return fieldAttribute(f, false) }

// fieldAttribute builds the schema attribute of a field; nested fields sit in a block's items,
// where an immutable field replaces the object only when an item that had it changes it (a new
// item is an in-place change).
func fieldAttribute(f *lifecycle.Field, nested bool) schema.Attribute {
	required := f.Required
	optional := !required
	// A default, or a time that means now when omitted, is filled in: computed too.
	computed := f.Default != nil || (f.Type == lifecycle.TypeTime && f.PastIsNow)
	desc, md := both("", description(f))
	switch f.Type {
	case lifecycle.TypeInteger:
		// A Float64 attribute (Terraform has one number type): an Int64 one cannot hold 1024.5,
		// and the framework fails such a configuration with "always an error in the provider"
		// before any validator runs. integerValidator refuses it at validate time instead.
		a := schema.Float64Attribute{Required: required, Optional: optional, Computed: computed, Description: desc, MarkdownDescription: md}
		if d, ok := f.Default.(float64); ok {
			a.Default = float64default.StaticFloat64(d)
		}
		a.Validators = []validator.Float64{integerValidator{min: f.Min, max: f.Max}}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.Float64{replaceFloat64(nested)}
		}
		return a
	case lifecycle.TypeNumber:
		a := schema.Float64Attribute{Required: required, Optional: optional, Computed: computed, Description: desc, MarkdownDescription: md}
		if d, ok := f.Default.(float64); ok {
			a.Default = float64default.StaticFloat64(d)
		}
		if f.Min != nil {
			a.Validators = append(a.Validators, float64validator.AtLeast(*f.Min))
		}
		if f.Max != nil {
			a.Validators = append(a.Validators, float64validator.AtMost(*f.Max))
		}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.Float64{replaceFloat64(nested)}
		}
		return a
	case lifecycle.TypeBool:
		a := schema.BoolAttribute{Required: required, Optional: optional, Computed: computed, Description: desc, MarkdownDescription: md}
		if d, ok := f.Default.(bool); ok {
			a.Default = booldefault.StaticBool(d)
		}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.Bool{replaceBool(nested)}
		}
		return a
	case lifecycle.TypeList:
		a := schema.ListAttribute{Required: required, Optional: optional, Computed: computed, Description: desc, MarkdownDescription: md, ElementType: listElemType(f)}
		a.Validators = listBounds(f)
		if f.Immutable {
			a.PlanModifiers = []planmodifier.List{replaceList(nested)}
		}
		return a
	case lifecycle.TypeObject:
		if len(f.Fields) == 0 {
			return schema.MapAttribute{Required: required, Optional: optional, Description: desc, MarkdownDescription: md, ElementType: types.StringType}
		}
		attrs := map[string]schema.Attribute{}
		for i := range f.Fields {
			attrs[f.Fields[i].Name] = resourceAttribute(&f.Fields[i])
		}
		a := schema.SingleNestedAttribute{Required: required, Optional: optional, Description: desc, MarkdownDescription: md, Attributes: attrs}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.Object{objectplanmodifier.RequiresReplace()}
		}
		return a
	}
	a := schema.StringAttribute{Required: required, Optional: optional, Computed: computed, Description: desc, MarkdownDescription: md}
	if f.Type == lifecycle.TypeTime {
		a.CustomType = timetypes.RFC3339Type{}
		if f.PastIsNow {
			// Omitted means now: the effective time is kept, so the configuration does not drift.
			a.PlanModifiers = append(a.PlanModifiers, stringplanmodifier.UseStateForUnknown())
		}
	}
	if d, ok := f.Default.(string); ok {
		a.Default = stringdefault.StaticString(d)
	}
	if len(f.Enum) > 0 {
		a.Validators = append(a.Validators, stringvalidator.OneOf(f.Enum...))
	}
	if f.Type == lifecycle.TypeString {
		a.Validators = append(a.Validators, stringvalidator.LengthAtMost(maxLength(f)))
	}
	if f.Immutable {
		a.PlanModifiers = append(a.PlanModifiers, replaceString(nested))
	}
	return a
}

const replaceDesc = "Changing it replaces the object."

// The replace modifiers of immutable fields. A nested field (in a block's item) replaces the
// object only when an item that had a value changes it: a new item is an in-place change.

func replaceString(nested bool) planmodifier.String {
	if !nested {
		return stringplanmodifier.RequiresReplace()
	}
	return stringplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.StateValue.IsNull()
	}, replaceDesc, replaceDesc)
}

func replaceFloat64(nested bool) planmodifier.Float64 {
	if !nested {
		return float64planmodifier.RequiresReplace()
	}
	return float64planmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.Float64Request, resp *float64planmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.StateValue.IsNull()
	}, replaceDesc, replaceDesc)
}

func replaceBool(nested bool) planmodifier.Bool {
	if !nested {
		return boolplanmodifier.RequiresReplace()
	}
	return boolplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.BoolRequest, resp *boolplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.StateValue.IsNull()
	}, replaceDesc, replaceDesc)
}

func replaceList(nested bool) planmodifier.List {
	if !nested {
		return listplanmodifier.RequiresReplace()
	}
	return listplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.ListRequest, resp *listplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.StateValue.IsNull()
	}, replaceDesc, replaceDesc)
}

func maxLength(f *lifecycle.Field) int {
	if f.MaxLength > 0 {
		return f.MaxLength
	}
	return lifecycle.DefaultMaxLength
}

func listBounds(f *lifecycle.Field) []validator.List {
	limit := f.MaxItems
	if limit == 0 {
		limit = lifecycle.DefaultMaxItems
	}
	out := []validator.List{listvalidator.SizeAtMost(limit)}
	if f.MinItems > 0 {
		out = append(out, listvalidator.SizeAtLeast(f.MinItems))
	}
	return out
}

// resourceBlock builds the nested block of a list-of-objects field.
func resourceBlock(f *lifecycle.Field) schema.Block {
	obj := schema.NestedBlockObject{Attributes: map[string]schema.Attribute{}, Blocks: map[string]schema.Block{}}
	for i := range f.Items.Fields {
		sub := &f.Items.Fields[i]
		if isBlock(sub) {
			obj.Blocks[sub.Name] = resourceBlock(sub)
		} else {
			obj.Attributes[sub.Name] = fieldAttribute(sub, true)
		}
	}
	desc, md := both("", description(f))
	b := schema.ListNestedBlock{Description: desc, MarkdownDescription: md, NestedObject: obj, Validators: listBounds(f)}
	if f.Required {
		b.Validators = append(b.Validators, listvalidator.IsRequired())
	}
	if f.Immutable {
		b.PlanModifiers = []planmodifier.List{listplanmodifier.RequiresReplace()}
	}
	return b
}

// dataAttribute builds the computed data source attribute of a field.
func dataAttribute(f *lifecycle.Field) dschema.Attribute {
	desc, md := both("", dataFieldDescription(f.Description))
	switch f.Type {
	case lifecycle.TypeInteger, lifecycle.TypeNumber:
		return dschema.Float64Attribute{Computed: true, Description: desc, MarkdownDescription: md}
	case lifecycle.TypeBool:
		return dschema.BoolAttribute{Computed: true, Description: desc, MarkdownDescription: md}
	case lifecycle.TypeTime:
		return dschema.StringAttribute{Computed: true, Description: desc, MarkdownDescription: md, CustomType: timetypes.RFC3339Type{}}
	case lifecycle.TypeList:
		if isBlock(f) {
			attrs := map[string]dschema.Attribute{}
			for i := range f.Items.Fields {
				attrs[f.Items.Fields[i].Name] = dataAttribute(&f.Items.Fields[i])
			}
			return dschema.ListNestedAttribute{Computed: true, Description: desc, MarkdownDescription: md, NestedObject: dschema.NestedAttributeObject{Attributes: attrs}}
		}
		return dschema.ListAttribute{Computed: true, Description: desc, MarkdownDescription: md, ElementType: listElemType(f)}
	case lifecycle.TypeObject:
		if len(f.Fields) == 0 {
			return dschema.MapAttribute{Computed: true, Description: desc, MarkdownDescription: md, ElementType: types.StringType}
		}
		attrs := map[string]dschema.Attribute{}
		for i := range f.Fields {
			attrs[f.Fields[i].Name] = dataAttribute(&f.Fields[i])
		}
		return dschema.SingleNestedAttribute{Computed: true, Description: desc, MarkdownDescription: md, Attributes: attrs}
	}
	return dschema.StringAttribute{Computed: true, Description: desc, MarkdownDescription: md}
}

// integerValidator checks an integer field's value: a whole number within the declared
// bounds. The messages name the bounds as the declaration writes them (10, not 10.000000).
type integerValidator struct{ min, max *float64 }

// bounds is the declared bounds in words ("between 10 and 1000"), "" when there are none.
func (v integerValidator) bounds() string {
	switch {
	case v.min != nil && v.max != nil:
		return fmt.Sprintf("between %s and %s", stringOf(*v.min), stringOf(*v.max))
	case v.min != nil:
		return "at least " + stringOf(*v.min)
	case v.max != nil:
		return "at most " + stringOf(*v.max)
	}
	return ""
}

func (v integerValidator) Description(context.Context) string {
	return strings.TrimSpace("must be a whole number " + v.bounds())
}

func (v integerValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v integerValidator) ValidateFloat64(_ context.Context, req validator.Float64Request, resp *validator.Float64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	n := req.ConfigValue.ValueFloat64()
	got := stringOf(n)
	if n != math.Trunc(n) || math.IsInf(n, 0) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid integer",
			fmt.Sprintf("%s is an integer field, so %s is not a value it can take: write a whole number such as %s.",
				req.Path, got, stringOf(math.Floor(n))))
		return
	}
	if (v.min != nil && n < *v.min) || (v.max != nil && n > *v.max) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value",
			fmt.Sprintf("Attribute %s value must be %s, got: %s", req.Path, v.bounds(), got))
	}
}
