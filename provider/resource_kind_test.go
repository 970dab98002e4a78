package provider

import (
	"maps"
	"testing"
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
