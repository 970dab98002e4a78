package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// TestNoBranchOnEmptyKind: lifecycle_object is a resource shape of its own (objectShape), so no
// provider code tells it from a typed resource by an empty kind name (`cfg.kind == ""`): what
// differs is a method of resourceShape.
func TestNoBranchOnEmptyKind(t *testing.T) {
	branch := regexp.MustCompile(`\b\w+\.kind\s*[!=]=\s*""`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if branch.MatchString(line) {
				t.Errorf("%s:%d branches on an empty kind name: %s\nPut each arm in a resourceShape method "+
					"(typedShape in shape.go, objectShape in resource_object.go).", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// TestShapeImportID: lifecycle_object takes KIND/ID or an ID whose prefix names its kind; a
// typed resource takes the ID as it is, its kind being its type's.
func TestShapeImportID(t *testing.T) {
	tests := []struct {
		name             string
		shape            resourceShape
		give             string
		wantKind, wantID string
		wantErr          bool
	}{
		{"object kind/id", objectShape{}, "machine/machine-0a1b", "machine", "machine-0a1b", false},
		{"object user kind/id", objectShape{}, "greenhouse/gh-1", "greenhouse", "gh-1", false},
		{"object prefixed id", objectShape{}, "cluster_inst-0a1b", "cluster_inst", "cluster_inst-0a1b", false},
		{"object bare id", objectShape{}, "0a1b", "", "0a1b", true},
		{"typed id", typedShape{kind: "disk"}, "disk-0a1b", "disk", "disk-0a1b", false},
		{"typed id of another kind", typedShape{kind: "disk"}, "machine-0a1b", "disk", "machine-0a1b", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var diags diag.Diagnostics
			kind, id := tt.shape.importID(tt.give, &diags)
			if diags.HasError() != tt.wantErr {
				t.Fatalf("importID(%q) errors = %v, want error %v", tt.give, diags, tt.wantErr)
			}
			if !tt.wantErr && (kind != tt.wantKind || id != tt.wantID) {
				t.Errorf("importID(%q) = %q, %q, want %q, %q", tt.give, kind, id, tt.wantKind, tt.wantID)
			}
		})
	}
}

// TestShapesOfConfigs: every typed resource (built-in or a user's kind) has the typed shape of
// its own kind, and lifecycle_object the object shape.
func TestShapesOfConfigs(t *testing.T) {
	for _, cfg := range append(typedKinds(), dataOnlyKinds()...) {
		if s, ok := cfg.shape.(typedShape); !ok || s.kind != cfg.kind {
			t.Errorf("lifecycle_%s: shape %#v, want typedShape{kind: %q}", cfg.typeName, cfg.shape, cfg.kind)
		}
	}
	u := loadUserKindFiles("LIFECYCLE_KINDS", copiesFile)
	if u.err != nil {
		t.Fatal(u.err)
	}
	users := append(u.configs(false), u.configs(true)...)
	if len(users) == 0 {
		t.Fatalf("%s gives no typed resources", copiesFile)
	}
	for _, cfg := range users {
		if s, ok := cfg.shape.(typedShape); !ok || s.kind != cfg.kind {
			t.Errorf("user kind lifecycle_%s: shape %#v, want typedShape{kind: %q}", cfg.typeName, cfg.shape, cfg.kind)
		}
	}
	if _, ok := objectKind().shape.(objectShape); !ok {
		t.Errorf("lifecycle_object: shape %#v, want objectShape{}", objectKind().shape)
	}
}
