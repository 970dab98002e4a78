package lifecycle

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestGenericDerivations(t *testing.T) {
	kids := func(states ...string) []View {
		out := make([]View, len(states))
		for i, s := range states {
			out[i] = View{Kind: "part", State: s}
		}
		return out
	}
	d := &Derive{From: "part", Use: []Derivation{
		{Function: DeriveCountByState, Status: "counts"},
		{Function: DeriveCountIn, Status: "ready", In: []string{"READY"}},
		{Function: DeriveAllIn, Status: "all_ready", In: []string{"READY"}},
		{Function: DeriveAnyIn, Status: "any_broken", In: []string{"BROKEN"}},
		{Function: DeriveDominantState, Status: "mostly", Order: []string{"BROKEN", "READY"}, Empty: "EMPTY"},
	}}
	f, ok := NewRegistry().Derivation(d)
	if !ok {
		t.Fatal("Derivation() = not ok")
	}
	tests := []struct {
		name string
		give []View
		want Derived
	}{
		{"none", nil, Derived{State: "EMPTY", Status: map[string]any{
			"counts": map[string]any{}, "ready": 0, "all_ready": false, "any_broken": false, "mostly": "EMPTY"}}},
		{"all ready", kids("READY", "READY"), Derived{State: "READY", Status: map[string]any{
			"counts": map[string]any{"READY": 2}, "ready": 2, "all_ready": true, "any_broken": false, "mostly": "READY"}}},
		{"tie goes to the order", kids("READY", "BROKEN", "NEW", "NEW"), Derived{State: "NEW", Status: map[string]any{
			"counts": map[string]any{"READY": 1, "BROKEN": 1, "NEW": 2}, "ready": 1, "all_ready": false, "any_broken": true, "mostly": "NEW"}}},
		{"tie between listed states", kids("READY", "BROKEN"), Derived{State: "BROKEN", Status: map[string]any{
			"counts": map[string]any{"READY": 1, "BROKEN": 1}, "ready": 1, "all_ready": false, "any_broken": true, "mostly": "BROKEN"}}},
		{"tie between unlisted states", kids("B", "A"), Derived{State: "A", Status: map[string]any{
			"counts": map[string]any{"A": 1, "B": 1}, "ready": 0, "all_ready": false, "any_broken": false, "mostly": "A"}}},
	}
	for _, tt := range tests {
		if got := f(View{}, tt.give); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: derive = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// The MCI's state is now the generic dominant_state of its spec: it must be exactly the
// dominant status CB-Tumblebug's aggregation gives.
func TestMCIDominantIsGeneric(t *testing.T) {
	reg := Builtin()
	mci, err := reg.Kind("mci")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := reg.Derivation(mci.Derive)
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var states []string
		for range r.IntN(7) {
			states = append(states, mciTieOrder[r.IntN(len(mciTieOrder))])
		}
		views := make([]View, len(states))
		for i, s := range states {
			views[i] = View{Kind: "vm", State: s}
		}
		got := f(View{Kind: "mci"}, views)
		want := AggregateMCIStatus(states)
		if got.State != want.Dominant || got.Status["text"] != want.Text {
			t.Fatalf("VMs %v: derived state %q text %v, want %q %q", states, got.State, got.Status["text"], want.Dominant, want.Text)
		}
	}
}
