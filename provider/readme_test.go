package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAccREADMEFirstConfiguration runs the front page's first configuration as it tells a
// newcomer to: apply it (the machine ends HALTED), change status to "PAUSED" (an in-place
// update, nothing destroyed; the apply starts, then pauses it), and destroy it.
func TestAccREADMEFirstConfiguration(t *testing.T) {
	t.Parallel()
	x := newExampleRunner(t)
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Your first configuration\n.*?```hcl\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no hcl block under \"## Your first configuration\"")
	}
	config := string(m[1])
	if !strings.Contains(config, `status        = "HALTED"`) {
		t.Fatalf("the first configuration does not ask for HALTED, as the README's text says:\n%s", config)
	}
	sim := newTestSim(t)
	env := []string{"LIFECYCLE_ENDPOINT=" + sim.URL}
	work := t.TempDir()
	writeFile(t, filepath.Join(work, "main.tf"), config)

	x.mustRun(t, work, env, "apply", "-auto-approve", "-no-color")
	machine := func() string {
		t.Helper()
		ids := stateIDs(t, x.mustRun(t, work, env, "show", "-json"))
		o, err := sim.Client.Get(t.Context(), "machines", ids["lifecycle_machine.web"])
		if err != nil {
			t.Fatal(err)
		}
		return o.State
	}
	if got := machine(); got != "HALTED" {
		t.Fatalf("after the first apply the machine is %s, want HALTED", got)
	}

	writeFile(t, filepath.Join(work, "main.tf"), strings.Replace(config, `"HALTED"`, `"PAUSED"`, 1))
	if out := x.mustRun(t, work, env, "plan", "-no-color"); !strings.Contains(out, "0 to add, 1 to change, 0 to destroy") {
		t.Errorf("asking for PAUSED does not plan an in-place update, as the README says:\n%s", out)
	}
	x.mustRun(t, work, env, "apply", "-auto-approve", "-no-color")
	if got := machine(); got != "PAUSED" {
		t.Errorf("after asking for PAUSED the machine is %s", got)
	}
	x.mustRun(t, work, env, "destroy", "-auto-approve", "-no-color")
}
