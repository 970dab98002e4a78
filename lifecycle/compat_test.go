package lifecycle

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
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
		// Relations may be added after the old ones (a lease's failed create), not changed;
		// kinds may gain links.
		if len(k.Propagate) > len(cur.Propagate) || !reflect.DeepEqual(k.Propagate, cur.Propagate[:len(k.Propagate)]) ||
			!reflect.DeepEqual(k.Guards, cur.Guards) || !keepsLinks(k.Links, cur.Links) {
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
	var before, after struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(data, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(now, &after); err != nil {
		t.Fatal(err)
	}
	// Kinds may be added (Sahara's templates): each old kind is compared with the current
	// kind of its name.
	byName := map[any]map[string]any{}
	for _, k := range after.Items {
		byName[k["name"]] = k
	}
	for _, k := range before.Items {
		cur, ok := byName[k["name"]]
		if !ok {
			t.Errorf("the wire form lost kind %v", k["name"])
			continue
		}
		for _, diff := range missingFrom(k, cur, fmt.Sprintf(".items[%v]", k["name"])) {
			t.Errorf("the wire form lost %s", diff)
		}
	}
}

// keepsLinks reports whether every old link is still one of cur's (kinds may gain links).
func keepsLinks(old, cur []Link) bool {
	for _, l := range old {
		if !slices.ContainsFunc(cur, func(c Link) bool { return reflect.DeepEqual(l, c) }) {
			return false
		}
	}
	return true
}

// missingFrom lists what of old is not in cur (maps may gain keys, lists items anywhere,
// descriptions may be reworded; everything else is equal).
func missingFrom(old, cur any, path string) []string {
	switch o := old.(type) {
	case map[string]any:
		c, ok := cur.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for k, v := range o {
			if k == "description" {
				continue // prose for people: it may be reworded (a lease's third event)
			}
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
