package lifecycle

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"testing"
)

// The kinds' JSON (GET /v1/kinds, what the provider reads) keeps its form when YAML keys are
// renamed: a provider and a simulator one release apart must understand each other.
// testdata/wire/kinds-before-26.json is GET /v1/kinds of the release before the renames.
func TestWireFormUnchanged(t *testing.T) {
	data, err := os.ReadFile("testdata/wire/kinds-before-26.json")
	if err != nil {
		t.Fatal(err)
	}
	// The old wire form still decodes and compiles (a new provider, an old simulator).
	var old struct {
		Items []*Kind `json:"items"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		t.Fatal(err)
	}
	reg := Builtin()
	for _, k := range old.Items {
		if err := k.Compile(); err != nil {
			t.Errorf("old wire kind %s does not compile: %v", k.Name, err)
			continue
		}
		cur, err := reg.Kind(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range cur.States.Static {
			// A hold state came later (CB-Tumblebug's option=hold): an old simulator holds no
			// create, so its kind rightly lacks it.
			if !k.IsStatic(s) && !cur.IsHeld(s) {
				t.Errorf("old wire kind %s lacks static state %s", k.Name, s)
			}
		}
		if k.Parent != nil && !reflect.DeepEqual(k.Parent, cur.Parent) {
			t.Errorf("old wire kind %s: parent = %+v, want %+v", k.Name, k.Parent, cur.Parent)
		}
		if !reflect.DeepEqual(k.Propagate, cur.Propagate) || !reflect.DeepEqual(k.Guards, cur.Guards) || !reflect.DeepEqual(k.Links, cur.Links) {
			t.Errorf("old wire kind %s: relations differ from the current spec's", k.Name)
		}
		if (k.Derive == nil) != (cur.Derive == nil) || k.Derive != nil && (k.Derive.From != cur.Derive.From || k.Derive.Function != cur.Derive.Function) {
			t.Errorf("old wire kind %s: derive = %+v, want %+v", k.Name, k.Derive, cur.Derive)
		}
	}

	// The current wire form is the old one plus additions only (an old provider, a new
	// simulator): every key and value of the old document is still there.
	now, err := json.Marshal(map[string]any{"items": reg.Kinds()})
	if err != nil {
		t.Fatal(err)
	}
	var before, after any
	if err := json.Unmarshal(data, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(now, &after); err != nil {
		t.Fatal(err)
	}
	for _, diff := range missingFrom(before, after, "") {
		t.Errorf("the wire form lost %s", diff)
	}
}

// missingFrom lists what of old is not in cur (maps may gain keys; everything else is equal).
func missingFrom(old, cur any, path string) []string {
	switch o := old.(type) {
	case map[string]any:
		c, ok := cur.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for k, v := range o {
			out = append(out, missingFrom(v, c[k], path+"."+k)...)
		}
		return out
	case []any:
		// A list may gain items (a kind's new state or action), anywhere; the old items are
		// all still there, in their order.
		c, ok := cur.([]any)
		if !ok || len(c) < len(o) {
			return []string{path + " (list)"}
		}
		if len(c) == len(o) {
			var out []string
			for i := range o {
				out = append(out, missingFrom(o[i], c[i], path+"["+strconv.Itoa(i)+"]")...)
			}
			return out
		}
		j := 0
		for i := range o {
			for j < len(c) && missingFrom(o[i], c[j], "") != nil {
				j++
			}
			if j == len(c) {
				return []string{path + "[" + strconv.Itoa(i) + "] (list)"}
			}
			j++
		}
		return nil
	}
	if !reflect.DeepEqual(old, cur) {
		return []string{path}
	}
	return nil
}
