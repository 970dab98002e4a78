package provider

import (
	"context"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// lifecycle_object's spec is a dynamic attribute (like azapi's body): the configuration writes
// native HCL values (numbers, booleans, lists, objects), and strings as earlier releases took
// them (numbers, booleans and JSON for lists and objects) still work for declared fields. These
// helpers convert between its Terraform values and the simulator's JSON values.

// goValue is the JSON value of a Terraform value; ok is false when it is null or not wholly
// known (a value known only after apply is left out of a plan's checks and sent at apply).
// Null attributes of an object are left out, as a missing field.
func goValue(v attr.Value) (any, bool) {
	if v == nil || v.IsNull() || v.IsUnknown() {
		return nil, false
	}
	switch x := v.(type) {
	case basetypes.DynamicValue:
		return goValue(x.UnderlyingValue())
	case basetypes.StringValue:
		return x.ValueString(), true
	case basetypes.NumberValue:
		f, _ := x.ValueBigFloat().Float64()
		return f, true
	case basetypes.Int64Value:
		return float64(x.ValueInt64()), true
	case basetypes.Float64Value:
		return x.ValueFloat64(), true
	case basetypes.BoolValue:
		return x.ValueBool(), true
	case basetypes.ObjectValue:
		return goMap(x.Attributes())
	case basetypes.MapValue:
		return goMap(x.Elements())
	case basetypes.TupleValue:
		return goList(x.Elements())
	case basetypes.ListValue:
		return goList(x.Elements())
	case basetypes.SetValue:
		return goList(x.Elements())
	}
	if s, ok := specValue(v); ok {
		return s, true
	}
	return nil, false
}

func goMap(elems map[string]attr.Value) (any, bool) {
	out := make(map[string]any, len(elems))
	for k, e := range elems {
		if e == nil || e.IsNull() {
			continue
		}
		g, ok := goValue(e)
		if !ok {
			return nil, false
		}
		out[k] = g
	}
	return out, true
}

func goList(elems []attr.Value) (any, bool) {
	out := make([]any, 0, len(elems))
	for _, e := range elems {
		if e != nil && e.IsNull() {
			out = append(out, nil)
			continue
		}
		g, ok := goValue(e)
		if !ok {
			return nil, false
		}
		out = append(out, g)
	}
	return out, true
}

// nativeValue is the Terraform value of a JSON value as HCL writes it: objects as objects,
// lists as tuples.
func nativeValue(v any) attr.Value {
	switch x := v.(type) {
	case string:
		return types.StringValue(x)
	case float64:
		return types.NumberValue(big.NewFloat(x))
	case bool:
		return types.BoolValue(x)
	case []any:
		elems := make([]attr.Value, len(x))
		ts := make([]attr.Type, len(x))
		for i, e := range x {
			elems[i] = nativeValue(e)
			ts[i] = elems[i].Type(context.Background())
		}
		return basetypes.NewTupleValueMust(ts, elems)
	case map[string]any:
		attrs := make(map[string]attr.Value, len(x))
		for k, e := range x {
			if e != nil {
				attrs[k] = nativeValue(e)
			}
		}
		return attrsObject(attrs)
	}
	return types.DynamicNull()
}

// attrsObject is the object with these attributes, typed by them.
func attrsObject(attrs map[string]attr.Value) basetypes.ObjectValue {
	ts := make(map[string]attr.Type, len(attrs))
	for k, v := range attrs {
		ts[k] = v.Type(context.Background())
	}
	return basetypes.NewObjectValueMust(ts, attrs)
}

// specEntries are the top-level entries of a spec value (an object, or a map written with
// tomap); ok is false for a null, unknown or other value.
func specEntries(d types.Dynamic) (map[string]attr.Value, bool) {
	if d.IsNull() || d.IsUnknown() || d.IsUnderlyingValueNull() || d.IsUnderlyingValueUnknown() {
		return nil, false
	}
	switch x := d.UnderlyingValue().(type) {
	case basetypes.ObjectValue:
		return x.Attributes(), true
	case basetypes.MapValue:
		return x.Elements(), true
	}
	return nil, false
}

// knownSpec is a spec's known, non-null entries as JSON values: an entry known only after
// apply (another resource's ID, or a list holding one) is left out at plan and sent at apply.
func knownSpec(d types.Dynamic) map[string]any {
	out := map[string]any{}
	entries, _ := specEntries(d)
	for k, v := range entries {
		if g, ok := goValue(v); ok {
			out[k] = g
		}
	}
	return out
}

// specFullyKnown reports whether no part of the spec waits for apply.
func specFullyKnown(d types.Dynamic) bool {
	if d.IsUnknown() || d.IsUnderlyingValueUnknown() {
		return false
	}
	if d.IsNull() || d.IsUnderlyingValueNull() {
		return true
	}
	tv, err := d.UnderlyingValue().ToTerraformValue(context.Background())
	return err == nil && tv.IsFullyKnown()
}

// sameWritten reports whether a spec value as the configuration wrote it (a native value, or
// a string in the earlier form) stands for the value the object holds, once the simulator has
// filled in the defaults the kind declares.
func sameWritten(k *lifecycle.Kind, key string, written, held any) bool {
	if s, ok := written.(string); ok {
		return sameFieldValue(k, key, s, held)
	}
	if reflect.DeepEqual(normalJSON(written), normalJSON(held)) {
		return true
	}
	f, ok := k.Field(key)
	if !ok {
		return false
	}
	one := &lifecycle.Kind{Name: k.Name, Fields: []lifecycle.Field{*f}}
	spec := map[string]any{key: written}
	if err := one.CheckSpec(spec, time.Now()); err != nil {
		return false
	}
	return reflect.DeepEqual(normalJSON(spec[key]), normalJSON(held))
}

// nativeSpec is a spec held as JSON values as lifecycle_object shows it: an object of native
// values, null when empty.
func nativeSpec(spec map[string]any) types.Dynamic {
	attrs := map[string]attr.Value{}
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		if spec[k] != nil {
			attrs[k] = nativeValue(spec[k])
		}
	}
	if len(attrs) == 0 {
		return types.DynamicNull()
	}
	return types.DynamicValue(attrsObject(attrs))
}
