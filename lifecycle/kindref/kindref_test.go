package kindref

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// update rewrites the generated files instead of comparing them.
var update = flag.Bool("update", false, "rewrite the reference page and the JSON Schema")

// Every key of the format is documented, with an example, and the doc table has no entry for
// a key that is gone.
func TestKeyDocsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range allKeys() {
		seen[k.Field] = true
		d, ok := keyDocs[k.Field]
		if !ok {
			t.Errorf("key %s (%s) has no entry in keyDocs", k.Name, k.Field)
			continue
		}
		if d.Doc == "" || d.Example == "" {
			t.Errorf("key %s (%s) needs a Doc and an Example", k.Name, k.Field)
		}
	}
	for f := range keyDocs {
		if !seen[f] {
			t.Errorf("keyDocs documents %s, which is not a key of the format", f)
		}
	}
	for _, o := range allObjects() {
		if typeDocs[o.Ref] == "" {
			t.Errorf("object %s has no entry in typeDocs", o.Ref)
		}
	}
}

// The committed reference page and JSON Schema are what the Go types give (go test -update, or
// make generate, rewrites them).
func TestGeneratedDocsFresh(t *testing.T) {
	files := map[string][]byte{
		"../../templates/guides/kind-reference.md.tmpl": KindsReference(),
		"../kinds.schema.json":                          KindsJSONSchema(),
	}
	for path, want := range files {
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run make generate (or go test ./lifecycle/kindref -run TestGeneratedDocsFresh -update)", path)
		}
	}
}

// compileSchema compiles the committed JSON Schema.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../kinds.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("kinds.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("kinds.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validateYAML validates a YAML document against the schema.
func validateYAML(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// Every built-in spec, and every example kind file, validates against the JSON Schema.
func TestSpecsMatchJSONSchema(t *testing.T) {
	s := compileSchema(t)
	files, _ := filepath.Glob("../specs/*.yaml")
	examples, _ := filepath.Glob("../../examples/kinds/*/*.yaml")
	files = append(files, examples...)
	more, _ := filepath.Glob("../../examples/resources/lifecycle_object/*.yaml")
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("found only %v", files)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateYAML(t, s, data); err != nil {
			t.Errorf("%s does not match kinds.schema.json: %v", file, err)
		}
	}
	// And the schema refuses what the loader refuses.
	bad := map[string]string{
		"unknown key":  "kinds:\n  - {name: w, collection: ws, states: {static: [A]}, create: {to: A}, colour: red}\n",
		"bool type":    "kinds:\n  - {name: w, collection: ws, states: {static: [A]}, create: {to: A}, fields: [{name: f, type: boolean}]}\n",
		"bad duration": "kinds:\n  - {name: w, collection: ws, states: {static: [A]}, create: {to: A}, default_duration: soon}\n",
	}
	for name, spec := range bad {
		if err := validateYAML(t, s, []byte(spec)); err == nil {
			t.Errorf("%s: the schema accepts %q", name, spec)
		} else if _, perr := lifecycle.Parse("bad.yaml", []byte(spec)); perr == nil {
			t.Errorf("%s: the loader accepts %q", name, spec)
		}
	}
}

// The reference names every key and every renamed one.
func TestReferenceNamesRenames(t *testing.T) {
	ref := string(KindsReference())
	for _, want := range []string{"| propagation | `by` | `actions` |", "| derive | `from` | `children` |", "| guard | `states` | `in` |"} {
		if !strings.Contains(ref, want) {
			t.Errorf("the reference lacks %q", want)
		}
	}
}
