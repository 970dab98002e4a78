package lifecycle

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with a golden file, rewriting it with -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("rendering differs from %s (run with -update to accept):\n%s", file, got)
	}
}

// TestMermaidGolden renders every built-in kind and compares it with
// testdata/diagrams/<kind>.mmd, so a change to a state machine shows up in review. Run
// `go test ./lifecycle -run TestMermaidGolden -update` to accept a change.
func TestMermaidGolden(t *testing.T) {
	for _, k := range builtin.Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			golden(t, filepath.Join("testdata", "diagrams", k.Name+".mmd"), k.Mermaid())
		})
	}
}

// TestRelationsMermaidGolden renders every family's relations and compares them with
// testdata/diagrams/relations-<family>.mmd.
func TestRelationsMermaidGolden(t *testing.T) {
	for _, fam := range builtin.Families() {
		t.Run(fam, func(t *testing.T) {
			got := builtin.RelationsMermaid(fam)
			if got == "" {
				if fam != "savanna" {
					t.Errorf("family %s renders no relations", fam)
				}
				return // a family of lone objects
			}
			golden(t, filepath.Join("testdata", "diagrams", "relations-"+fam+".mmd"), got)
		})
	}
	if got := builtin.RelationsMermaid("nobody"); got != "" {
		t.Errorf("an unknown family renders %q", got)
	}
}

// TestMermaidGoldenComplete fails on golden files left behind by a removed kind.
func TestMermaidGoldenComplete(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "diagrams", "*.mmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".mmd")
		if fam, ok := strings.CutPrefix(name, "relations-"); ok {
			if !slices.Contains(builtin.Families(), fam) {
				t.Errorf("%s has no family", f)
			}
			continue
		}
		if _, err := builtin.Kind(name); err != nil {
			t.Errorf("%s has no kind: %v", f, err)
		}
	}
}

// TestMermaidContent checks the rendering rules on the built-in kinds, independently of the
// golden files.
func TestMermaidContent(t *testing.T) {
	for _, k := range builtin.Kinds() {
		got := k.Mermaid()
		if !strings.HasPrefix(got, "stateDiagram-v2\n") {
			t.Errorf("%s: diagram starts %q", k.Name, strings.SplitN(got, "\n", 2)[0])
		}
		for _, s := range k.allStates() {
			if !strings.Contains(got, " "+mermaidID(s)) {
				t.Errorf("%s: state %s is not drawn", k.Name, s)
			}
		}
		for _, s := range k.States.Transition {
			if !strings.Contains(got, "    class "+mermaidID(s)+" transition\n") {
				t.Errorf("%s: transition state %s is not styled", k.Name, s)
			}
		}
		for _, a := range k.AllActions() {
			if !strings.Contains(got, ": "+a.Name) {
				t.Errorf("%s: action %s is not drawn", k.Name, a.Name)
			}
		}
	}
	tests := []struct {
		kind string
		want []string
	}{
		{"machine", []string{
			"    [*] --> VIRTUAL\n",
			"    VIRTUAL --> DEPLOYING: deploy\n",
			"    DEPLOYING --> RUNNING\n",
			"    DEPLOYING --> VIRTUAL: fails\n",
			"    CLONING --> HALTED\n", // returns to where it started
			"    DESTROYED --> [*]\n",
		}},
		{"cloudspace", []string{"    PAUSED --> RESUMING: resume (system)\n"}},
		{"cluster", []string{
			"    state \"Adding Instances\" as Adding_Instances\n",
			"    [*] --> Validating: create\n",
			"    [*] --> Deleting: delete (from any state)\n",
			"    Deleting_Instances --> Error: fails (fatal)\n",
			"    class Adding_Instances transition\n",
			"    class Error error\n",
		}},
		{"cluster_inst", []string{"    Creating --> CreateError: fails\n", "    CreateError --> NotPresent\n"}},
		{"lease", []string{"    PENDING --> STARTING: start (timer)\n"}},
		{"vm", []string{"    Failed --> Terminating: terminate\n"}},
	}
	for _, tt := range tests {
		got := mustKind(t, tt.kind).Mermaid()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s.Mermaid() lacks %q:\n%s", tt.kind, w, got)
			}
		}
	}
	// A retried failure draws no failure edge.
	if got := mustKind(t, "cluster").Mermaid(); strings.Contains(got, "Deleting --> Deleting") {
		t.Errorf("cluster draws a retry loop:\n%s", got)
	}
}
