package provider

import (
	"context"
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestSpecChanges(t *testing.T) {
	tests := []struct {
		name      string
		old, next map[string]any
		want      map[string]any
	}{
		{name: "nothing", old: map[string]any{}, next: map[string]any{}, want: map[string]any{}},
		{name: "same values", old: map[string]any{"vcpus": int64(2), "x": "a"}, next: map[string]any{"vcpus": int64(2), "x": "a"}, want: map[string]any{}},
		{name: "changed", old: map[string]any{"vcpus": int64(1)}, next: map[string]any{"vcpus": int64(2)}, want: map[string]any{"vcpus": int64(2)}},
		{name: "added", old: map[string]any{}, next: map[string]any{"color": "black"}, want: map[string]any{"color": "black"}},
		{name: "removed is nil", old: map[string]any{"color": "black"}, next: map[string]any{}, want: map[string]any{"color": nil}},
		{
			// The server answers numbers as float64; they compare by their printed value.
			name: "int and float of the same number",
			old:  map[string]any{"vcpus": float64(2)}, next: map[string]any{"vcpus": int64(2)}, want: map[string]any{},
		},
		{name: "bool", old: map[string]any{"on": false}, next: map[string]any{"on": true}, want: map[string]any{"on": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := specChanges(tt.old, tt.next); !maps.Equal(got, tt.want) {
				t.Errorf("specChanges(%v, %v) = %v, want %v", tt.old, tt.next, got, tt.want)
			}
		})
	}
}

// objectValue builds a whole state object: the attributes given, the others as they were,
// and a name the schema lacks is the provider's bug, reported, not dropped.
func TestObjectValue(t *testing.T) {
	ctx := context.Background()
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String, "name": tftypes.String, "state": tftypes.String}}
	prior := tftypes.NewValue(typ, map[string]tftypes.Value{
		"id": tftypes.NewValue(tftypes.String, "m-1"), "name": tftypes.NewValue(tftypes.String, "web"),
		"state": tftypes.NewValue(tftypes.String, "RUNNING"),
	})
	got, diags := objectValue(ctx, typ, prior, map[string]attr.Value{"state": types.StringValue("HALTED")})
	if diags.HasError() {
		t.Fatalf("objectValue = %v", diags)
	}
	want := tftypes.NewValue(typ, map[string]tftypes.Value{
		"id": tftypes.NewValue(tftypes.String, "m-1"), "name": tftypes.NewValue(tftypes.String, "web"),
		"state": tftypes.NewValue(tftypes.String, "HALTED"),
	})
	if !got.Equal(want) {
		t.Errorf("objectValue = %v, want %v", got, want)
	}
	if _, diags := objectValue(ctx, typ, prior, map[string]attr.Value{"colour": types.StringValue("red")}); !diags.HasError() {
		t.Error("objectValue with an attribute the schema lacks: no error")
	}
}
