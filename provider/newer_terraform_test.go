package provider

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// End-to-end checks of the interfaces of newer Terraform releases. CI's Terraform 1.11 skips
// them (the protocol-level tests cover them there); run them with a Terraform 1.14 through
// TF_ACC_TERRAFORM_PATH.

// TestAccTerraform114Query: terraform query finds the machines made outside Terraform, by
// cloudspace and by state, each with its identity.
func TestAccTerraform114Query(t *testing.T) {
	sim := newTestSim(t)
	a := sim.makeObject(t, "machine", "query-a")
	o, err := sim.Client.Create(t.Context(), "machines", clientCreate("query-b", a.ParentID))
	if err != nil {
		t.Fatal(err)
	}
	b := sim.waitStatic(t, "machines", o.ID)
	sim.act(t, "machines", b.ID, "stop")
	sim.waitStatic(t, "machines", b.ID)
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: sim.config("")},
			{
				// The query file (.tfquery.hcl) goes beside the previous step's configuration,
				// whose provider block it uses.
				Query: true,
				Config: fmt.Sprintf(`
list "lifecycle_machine" "all" {
  provider = lifecycle
  config {
    cloudspace_id = %q
  }
}

list "lifecycle_machine" "halted" {
  provider = lifecycle
  config {
    state = "HALTED"
  }
}
`, a.ParentID),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("lifecycle_machine.all", 2),
					querycheck.ExpectLength("lifecycle_machine.halted", 1),
					querycheck.ExpectIdentity("lifecycle_machine.halted", map[string]knownvalue.Check{"id": knownvalue.StringExact(b.ID)}),
				},
			},
		},
	})
}

// TestAccTerraform114ActionTrigger: an action_trigger reboots the machine after its update, in
// the same apply; asked of a machine that will be HALTED, the plan refuses before anything runs.
func TestAccTerraform114ActionTrigger(t *testing.T) {
	sim := newTestSim(t)
	cfg := func(status string, memory int) string {
		return sim.config(machineConfigWith(status, fmt.Sprintf(`  memory_mb = %d
  lifecycle {
    action_trigger {
      events  = [after_update]
      actions = [action.lifecycle_machine.reboot]
    }
  }`, memory)) + `
action "lifecycle_machine" "reboot" {
  config {
    id            = lifecycle_machine.m.id
    action        = "reboot"
    object_status = lifecycle_machine.m.status
  }
}
`)
	}
	var id string
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: cfg("RUNNING", 1024), Check: captureID(machineAddr, &id)},
			{
				Config: cfg("RUNNING", 2048),
				Check: func(*terraform.State) error {
					return expectActions(sim, "machines", id, "reboot")
				},
			},
			{
				Config:      cfg("HALTED", 4096),
				ExpectError: regexp.MustCompile(`(?s)Action not allowed.*"reboot" is not allowed from state HALTED`),
			},
		},
	})
}

// TestAccTerraform112ImportByIdentity imports a machine made outside Terraform with an import
// block naming its identity; the plan after it is empty.
func TestAccTerraform112ImportByIdentity(t *testing.T) {
	sim := newTestSim(t)
	m := sim.makeObject(t, "machine", "by-identity")
	cs, err := sim.Client.Get(t.Context(), "cloudspaces", m.ParentID)
	if err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{{
			Config: sim.config(fmt.Sprintf(`
import {
  to       = lifecycle_machine.m
  identity = { id = %q }
}

resource "lifecycle_machine" "m" {
  name          = "by-identity"
  cloudspace_id = %q
  image_id      = %q
}
`, m.ID, cs.ID, m.Spec["image_id"])),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionNoop),
			}},
		}},
	})
}

// TestAccTerraform114ActionInterrupted: Ctrl-C during terraform apply -invoke, run with the
// provider binary main builds. Terraform must not say "Apply complete!" nor exit 0: it prints
// the provider's error (the action was interrupted, the last state seen, what to do) and exits
// with status 1. Then what the error says to do works: once the reboot has landed,
// terraform plan -refresh-only runs and invoking the action again completes.
// TestActionInterrupted covers it at the protocol level below Terraform 1.14.
func TestAccTerraform114ActionInterrupted(t *testing.T) {
	t.Parallel()
	x := newExampleRunner(t)
	if !x.cli.hasActions() {
		t.Skipf("%s runs no action blocks (Terraform 1.14+ does): TestActionInterrupted covers this at the protocol level", x.cli.path)
	}
	sim := newTestSim(t)
	m := sim.makeObject(t, "machine", "m")
	// A reboot slowed 20,000 times runs until the test moves the clock (a hang would never land).
	sim.addFault(t, client.FaultRule{Kind: "machine", Action: "reboot", Mode: "slow", Factor: 20000, Count: 1})
	work := t.TempDir()
	writeFile(t, filepath.Join(work, "main.tf"), fmt.Sprintf(`terraform {
  required_providers {
    lifecycle = { source = "lifecyclesim/lifecycle" }
  }
}

action "lifecycle_machine" "reboot" {
  config {
    id     = %q
    action = "reboot"
  }
}
`, m.ID))
	cmd := exec.Command(x.cli.path, "-chdir="+work, "apply", "-auto-approve", "-no-color", "-invoke=action.lifecycle_machine.reboot")
	cmd.Env = append(slices.Clone(x.env), "LIFECYCLE_ENDPOINT="+sim.URL)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	simtest.Eventually(t, time.Minute, "the machine REBOOTING", func() bool {
		o, err := sim.Client.Get(t.Context(), "machines", m.ID)
		return err == nil && o.State == "REBOOTING"
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	t.Logf("interrupted terraform apply -invoke:\n%s", out.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("terraform apply -invoke interrupted: %v, want exit status 1", err)
	}
	expectOutput(t, out.String(), `Interrupted: machine reboot`, `last state seen: REBOOTING`,
		`The simulator carries the action on`)
	expectNoOutput(t, out.String(), `Apply complete!`)

	// The advice: the simulator carries the reboot on; once it is static, terraform plan
	// -refresh-only runs, and invoking the action again completes.
	simtest.Eventually(t, time.Minute, "the interrupted reboot landing", func() bool {
		if _, err := sim.Client.AdvanceClock(t.Context(), time.Hour); err != nil {
			t.Fatal(err)
		}
		o, err := sim.Client.Get(t.Context(), "machines", m.ID)
		return err == nil && o.Static && o.State == "RUNNING"
	})
	for _, args := range [][]string{{"plan", "-refresh-only", "-no-color"}, {"apply", "-auto-approve", "-no-color", "-invoke=action.lifecycle_machine.reboot"}} {
		again := exec.Command(x.cli.path, append([]string{"-chdir=" + work}, args...)...)
		again.Env = cmd.Env
		b, err := again.CombinedOutput()
		if err != nil {
			t.Fatalf("terraform %s after the interruption, as the error advises: %v\n%s", strings.Join(args, " "), err, b)
		}
		if args[0] == "apply" {
			expectOutput(t, string(b), `Apply complete!`)
		}
	}
	if o, err := sim.Client.Get(t.Context(), "machines", m.ID); err != nil || !o.Static || o.State != "RUNNING" {
		t.Errorf("after the reboot invoked again: %+v, %v; want static RUNNING", o, err)
	}
}
