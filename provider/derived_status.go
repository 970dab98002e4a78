package provider

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// Derived status fields: the status fields a kind's `derive:` computes from its children with
// the generic derivations (count_by_state, count_in, all_in, any_in, dominant_state). The
// simulator keeps them in the object's status; the resources show them in `derived_status`,
// typed for a typed resource (its kind's derivations are known from the spec) and as strings
// for lifecycle_object (whose kind is known only from the configuration).

// derivedAttrName is the computed attribute holding the derived status fields.
const derivedAttrName = "derived_status"

// derivedFields are the status fields k's derive writes with generic derivations, in spec
// order.
func derivedFields(k *lifecycle.Kind) []lifecycle.Derivation {
	if k == nil || k.Derive == nil {
		return nil
	}
	var out []lifecycle.Derivation
	for _, u := range k.Derive.Use {
		if u.Status != "" && slices.Contains(lifecycle.GenericDerivations, u.Function) {
			out = append(out, u)
		}
	}
	return out
}

// derivedType is the Terraform type of a derivation's result.
func derivedType(u lifecycle.Derivation) attr.Type {
	switch u.Function {
	case lifecycle.DeriveCountByState:
		return types.MapType{ElemType: types.Int64Type}
	case lifecycle.DeriveCountIn:
		return types.Int64Type
	case lifecycle.DeriveAllIn, lifecycle.DeriveAnyIn:
		return types.BoolType
	}
	return types.StringType
}

// derivedDescription says what a derivation's field holds.
func derivedDescription(u lifecycle.Derivation, child string) string {
	switch u.Function {
	case lifecycle.DeriveCountByState:
		return "The number of " + child + " objects in each state."
	case lifecycle.DeriveCountIn:
		return "The number of " + child + " objects in " + quoted(u.In) + "."
	case lifecycle.DeriveAllIn:
		return "Whether there are " + child + " objects and every one is in " + quoted(u.In) + "."
	case lifecycle.DeriveAnyIn:
		return "Whether some " + child + " object is in " + quoted(u.In) + "."
	}
	return "The state most " + child + " objects are in."
}

// typedDerivedAttr is a typed resource's derived_status: one attribute per derived field.
func typedDerivedAttr(k *lifecycle.Kind) (computedAttr, bool) {
	uses := derivedFields(k)
	if len(uses) == 0 {
		return computedAttr{}, false
	}
	t := types.ObjectType{AttrTypes: map[string]attr.Type{}}
	fields := map[string]string{}
	for _, u := range uses {
		t.AttrTypes[u.Status] = derivedType(u)
		fields[u.Status] = derivedDescription(u, k.Derive.From)
	}
	return computedAttr{name: derivedAttrName, typ: t, fields: fields,
		description: "The status fields the simulator derives from the object's " + k.Derive.From + " objects (the kind's `derive:`), as last read."}, true
}

// objectDerivedAttr is lifecycle_object's derived_status: the derived fields of any kind, as
// strings (counts per state as JSON).
func objectDerivedAttr() computedAttr {
	return computedAttr{name: derivedAttrName, typ: types.MapType{ElemType: types.StringType},
		description: "The status fields the simulator derives from the object's children (its kind's `derive:` with " +
			"count_by_state, count_in, all_in, any_in or dominant_state), as strings: numbers and `true`/`false` as " +
			"written, counts per state as JSON. Empty for kinds that derive none."}
}

// derivedValue is the value of derived_status (of type t) for the object o of kind k.
func derivedValue(t attr.Type, k *lifecycle.Kind, o *client.Object) (attr.Value, diag.Diagnostics) {
	uses := derivedFields(k)
	if mt, ok := t.(types.MapType); ok {
		vals := map[string]attr.Value{}
		for _, u := range uses {
			if v, ok := o.Status[u.Status]; ok && v != nil {
				vals[u.Status] = types.StringValue(derivedString(v))
			}
		}
		return types.MapValue(mt.ElemType, vals)
	}
	ot, ok := t.(types.ObjectType)
	if !ok {
		return nil, nil
	}
	vals := map[string]attr.Value{}
	for name, at := range ot.AttrTypes {
		vals[name] = derivedTyped(at, o.Status[name])
	}
	return types.ObjectValue(ot.AttrTypes, vals)
}

// derivedString writes a derived value as lifecycle_object shows it.
func derivedString(v any) string {
	if m, ok := v.(map[string]any); ok {
		b, err := json.Marshal(m) // sorted keys
		if err == nil {
			return string(b)
		}
	}
	return stringOf(v)
}

// derivedTyped is a derived value as a value of type t; null when the simulator has not
// derived it (yet) or holds something else.
func derivedTyped(t attr.Type, v any) attr.Value {
	switch t {
	case types.Int64Type:
		if n, ok := v.(float64); ok {
			return types.Int64Value(int64(n))
		}
		return types.Int64Null()
	case types.BoolType:
		if b, ok := v.(bool); ok {
			return types.BoolValue(b)
		}
		return types.BoolNull()
	case types.StringType:
		if s, ok := v.(string); ok {
			return types.StringValue(s)
		}
		return types.StringNull()
	}
	mt := types.MapType{ElemType: types.Int64Type}
	m, ok := v.(map[string]any)
	if !ok {
		return types.MapNull(mt.ElemType)
	}
	vals := make(map[string]attr.Value, len(m))
	for _, s := range slices.Sorted(maps.Keys(m)) {
		if n, ok := m[s].(float64); ok {
			vals[s] = types.Int64Value(int64(n))
		}
	}
	out, _ := types.MapValue(mt.ElemType, vals)
	return out
}
