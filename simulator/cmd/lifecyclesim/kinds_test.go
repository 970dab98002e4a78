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
