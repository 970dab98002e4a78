package provider

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// Spec values between the simulator's JSON and Terraform's values: what a typed attribute or
// lifecycle_object's string map holds for a declared field, and back.

// specValue is the JSON value of a Terraform value; ok is false for null and unknown values
// (nothing to send). Unknown elements inside lists and objects are left out.
func specValue(v attr.Value) (any, bool) {
	if v == nil || v.IsNull() || v.IsUnknown() {
		return nil, false
	}
	switch x := v.(type) {
	case types.String:
		return x.ValueString(), true
	case timetypes.RFC3339:
		return x.ValueString(), true
	case types.Int64:
		return x.ValueInt64(), true
	case types.Float64:
		return x.ValueFloat64(), true
	case types.Bool:
		return x.ValueBool(), true
	case types.List:
		out := []any{}
		for _, e := range x.Elements() {
			if ev, ok := specValue(e); ok {
				out = append(out, ev)
			}
		}
		return out, true
	case types.Object:
		out := map[string]any{}
		for k, e := range x.Attributes() {
			if ev, ok := specValue(e); ok {
				out[k] = ev
			}
		}
		return out, true
	case types.Map:
		out := map[string]any{}
		for k, e := range x.Elements() {
			if ev, ok := specValue(e); ok {
				out[k] = ev
			}
		}
		return out, true
	}
	return nil, false
}

// tfValue is the Terraform value of a spec value for a declared field; a value of the wrong
// shape (the object changed out of band) is null, like an absent one.
func tfValue(v any, f *lifecycle.Field) (attr.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	switch f.Type {
	case lifecycle.TypeInteger, lifecycle.TypeNumber:
		if n, ok := v.(float64); ok {
			return types.Float64Value(n), nil
		}
		return types.Float64Null(), nil
	case lifecycle.TypeBool:
		if b, ok := v.(bool); ok {
			return types.BoolValue(b), nil
		}
		return types.BoolNull(), nil
	case lifecycle.TypeTime:
		if s, ok := v.(string); ok && s != "" {
			return timetypes.NewRFC3339Value(s)
		}
		return timetypes.NewRFC3339Null(), nil
	case lifecycle.TypeList:
		t := types.ListType{ElemType: listElemType(f)}
		items, ok := v.([]any)
		if !ok {
			return types.ListNull(t.ElemType), nil
		}
		elems := make([]attr.Value, 0, len(items))
		item := f.Items
		if item == nil {
			item = &lifecycle.Field{Type: lifecycle.TypeString}
		}
		for _, it := range items {
			ev, d := tfValue(it, item)
			diags.Append(d...)
			elems = append(elems, ev)
		}
		lv, d := types.ListValue(t.ElemType, elems)
		diags.Append(d...)
		return lv, diags
	case lifecycle.TypeObject:
		m, ok := v.(map[string]any)
		if len(f.Fields) == 0 {
			if !ok {
				return types.MapNull(types.StringType), nil
			}
			elems := map[string]attr.Value{}
			for k, e := range m {
				elems[k] = types.StringValue(stringOf(e))
			}
			mv, d := types.MapValue(types.StringType, elems)
			return mv, d
		}
		if !ok {
			return types.ObjectNull(objectAttrTypes(f)), nil
		}
		attrs := map[string]attr.Value{}
		for i := range f.Fields {
			sub := &f.Fields[i]
			sv, d := tfValue(m[sub.Name], sub)
			diags.Append(d...)
			attrs[sub.Name] = sv
		}
		ov, d := types.ObjectValue(objectAttrTypes(f), attrs)
		diags.Append(d...)
		return ov, diags
	}
	if s, ok := v.(string); ok && s != "" {
		return types.StringValue(s), nil
	}
	return types.StringNull(), nil
}

// stringOf writes a spec value as lifecycle_object's spec map shows it: strings as they are,
// lists and objects as JSON.
func stringOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []any, map[string]any:
		b, err := json.Marshal(x)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// sameSpecValue reports whether a spec string written in a configuration stands for the value
// the object holds.
func sameSpecValue(written string, v any) bool {
	if written == stringOf(v) {
		return true
	}
	var parsed any
	if err := json.Unmarshal([]byte(written), &parsed); err != nil {
		return false
	}
	return reflect.DeepEqual(parsed, v)
}

// sameFieldValue reports whether a spec string written in a configuration stands for the
// value the object holds once the simulator has filled in the defaults the kind declares,
// nested ones included (a list item written without its defaulted count).
func sameFieldValue(k *lifecycle.Kind, key, written string, held any) bool {
	if sameSpecValue(written, held) {
		return true
	}
	f, ok := k.Field(key)
	if !ok {
		return false
	}
	v, err := parseAs(written, f)
	if err != nil {
		return false
	}
	// The declaration alone, so no other field is required or defaulted.
	one := &lifecycle.Kind{Name: k.Name, Fields: []lifecycle.Field{*f}}
	spec := map[string]any{key: v}
	if err := one.CheckSpec(spec, time.Now()); err != nil {
		return false
	}
	return reflect.DeepEqual(normalJSON(spec[key]), normalJSON(held))
}

// normalJSON is v as JSON decodes it (float64 numbers, []any and map[string]any), so values
// built in Go compare equal to the same values read from the wire.
func normalJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// typedSpec turns lifecycle_object's spec into the values a kind's declared fields take:
// native values as they are, and strings written in the earlier form (numbers, booleans, and
// lists and objects as JSON) parsed; undeclared fields stay as written. A string that does not
// parse is reported at its key.
func typedSpec(k *lifecycle.Kind, free map[string]any) (map[string]any, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := make(map[string]any, len(free))
	keys := make([]string, 0, len(free))
	for key := range free {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		v := free[key]
		f, ok := k.Field(key)
		s, isString := v.(string)
		if !ok || !isString || f.Type == lifecycle.TypeString || f.Type == lifecycle.TypeTime {
			out[key] = v
			continue
		}
		parsed, err := parseAs(s, f)
		if err != nil {
			diags.AddAttributeError(path.Root("spec").AtName(key), "Invalid spec value",
				fmt.Sprintf("spec.%s of a %s is a %s: %v; or write it as an HCL value.", key, k.Name, f.Type, err))
			continue
		}
		out[key] = parsed
	}
	return out, diags
}

// stringsAsAny is a map of strings as a map of values.
func stringsAsAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func parseAs(s string, f *lifecycle.Field) (any, error) {
	switch f.Type {
	case lifecycle.TypeInteger, lifecycle.TypeNumber:
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return n, nil
	case lifecycle.TypeBool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	case lifecycle.TypeList, lifecycle.TypeObject:
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("write it as JSON (%v)", err)
		}
		return v, nil
	}
	return s, nil
}

// keepPastTime reports whether a time field where a past time means now (Blazar's start_date)
// keeps the value the configuration wrote: the simulator holds "now" for a time written in the
// past, which is the same start, so the configured one stays (the configuration does not drift,
// and a create whose start is already past is consistent).
func keepPastTime(f *lifecycle.Field, had attr.Value, held any) bool {
	if f.Type != lifecycle.TypeTime || !f.PastIsNow || had == nil || had.IsNull() || had.IsUnknown() {
		return false
	}
	written, ok := had.(timetypes.RFC3339)
	if !ok {
		return false
	}
	w, err := time.Parse(time.RFC3339, written.ValueString())
	h, ok := lifecycle.TimeValue(held)
	return err == nil && ok && w.Before(h)
}
