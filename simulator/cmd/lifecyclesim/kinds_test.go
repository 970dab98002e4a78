package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckAndRender(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	write := func(file, spec string) {
		if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(good, `kinds:
  - name: lamp
    collection: lamps
    states: {static: [OFF, ON]}
    create: {to: OFF}
    actions:
      - {name: on, from: [OFF], to: ON}
`)
	write(bad, `kinds:
  - name: lamp
    collection: lamps
    states: {static: [OFF, ON]}
    create: {to: OFF}
    actions:
      - {name: on, form: [OFF], to: ON}
`)
	var out strings.Builder
	if err := checkKinds([]string{good}, &out); err != nil || !strings.Contains(out.String(), "1 kind OK (lamp)") {
		t.Errorf("check good.yaml = %v, output %q", err, out.String())
	}
	out.Reset()
	if err := checkKinds([]string{bad}, &out); err == nil || !strings.Contains(out.String(), bad+`:7: error: kind "lamp": actions[0].form: unknown key "form" in an action (did you mean "from"?)`) {
		t.Errorf("check bad.yaml = %v, output %q", err, out.String())
	}
	if err := checkKinds(nil, &out); err == nil {
		t.Error("check without files succeeded")
	}
	out.Reset()
	if err := renderKinds([]string{good}, &out); err != nil || !strings.Contains(out.String(), "OFF --> ON: on") {
		t.Errorf("render = %v, output %q", err, out.String())
	}
	// The server refuses the bad file too, and says how to see every problem.
	err := run(context.Background(), []string{"--db", ":memory:", "--kinds", bad}, func(string) string { return "" }, nil)
	if err == nil || !strings.Contains(err.Error(), "lifecyclesim check "+bad) {
		t.Errorf("serving bad.yaml = %v", err)
	}
}

// TestCheckUnroutableCollections: check refuses a collection the API cannot route, with the
// file, the line and the fix; one the router serves loads.
func TestCheckUnroutableCollections(t *testing.T) {
	tests := []struct {
		coll string
		want string // "" when it loads
	}{
		{"kinds", `collection "kinds" is a route of the API itself (/v1/kinds): choose another URL path segment`},
		{"sim", `collection "sim" is a route of the API itself (/v1/sim)`},
		{"a/b", `collection "a/b" cannot be routed`},
		{"a?b", `(such as "a_b")`},
		{".", "is a dot segment"},
		{"lamp-v2", ""},
	}
	for _, tt := range tests {
		t.Run(tt.coll, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "lamp.yaml")
			spec := "kinds:\n  - name: lamp\n    collection: \"" + tt.coll + "\"\n    states: {static: [OFF]}\n    create: {to: OFF}\n"
			if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			err := checkKinds([]string{file}, &out)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("check = %v, output %q", err, out.String())
				}
				return
			}
			if err == nil || !strings.Contains(out.String(), file+`:3: error: kind "lamp": collection: `) || !strings.Contains(out.String(), tt.want) {
				t.Errorf("check = %v, output %q, want %s:3 and %q", err, out.String(), file, tt.want)
			}
		})
	}
}
