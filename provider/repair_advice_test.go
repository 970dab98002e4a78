package provider

import (
	"path/filepath"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// repairFile holds a kind whose failed create lands in DEGRADED, which its heal repairs.
var repairFile = filepath.Join("testdata", "TestAccFailedCreateRepairKeeps", "kinds.yaml")

// TestAccFailedCreateRepairKeeps follows the advice of a create that fails into a held error
// state, word by word, with the real terraform: untaint the resource, run the repair through
// a lifecycle_action, apply again. The object is kept (same ID, SERVING), never replaced.
func TestAccFailedCreateRepairKeeps(t *testing.T) {
	_, serve := userKindsTest(t, repairFile)
	sim := newTestSim(t, serve)
	t.Setenv(userKindsEnv, repairFile)
	t.Setenv(simKindsEnv, "")
	vault := `resource "lifecycle_vault" "v" {
  name = "v1"
}
`
	tf := newTFCLI(t, sim.config(vault))
	sim.addFault(t, client.FaultRule{Kind: "vault", Action: "create", Mode: "fail", Count: 1, Message: "disk array offline"})

	out, ok := tf.run("apply", "-auto-approve", "-no-color")
	if ok {
		t.Fatal("the create should have failed")
	}
	expectOutput(t, out, `Error creating vault`, `disk array offline`, `terraform untaint ADDRESS`,
		`lifecycle_action resource with kind = "vault" and action = "heal"`, `terraform apply -invoke=`)
	expectNoOutput(t, out, `then apply again\. Changes`) // the old advice, which led to a replacement
	v := sim.waitOne(t, "vaults", "DEGRADED")

	// What the advice says, in its order: untaint, repair, apply.
	tf.mustRun("untaint", "-no-color", "lifecycle_vault.v")
	writeFile(t, filepath.Join(tf.dir, "main.tf"), `terraform {
  required_providers {
    lifecycle = { source = "lifecyclesim/lifecycle" }
  }
}

`+sim.config(vault+`
resource "lifecycle_action" "heal" {
  kind      = "vault"
  object_id = lifecycle_vault.v.id
  action    = "heal"
}
`))
	repair := tf.mustRun("apply", "-auto-approve", "-no-color")
	expectOutput(t, repair, `1 added, 0 changed, 0 destroyed`)
	if err := expectSimState(sim, "vaults", v.ID, "SERVING"); err != nil {
		t.Error(err)
	}
	plan := tf.mustRun("plan", "-no-color", "-detailed-exitcode")
	expectOutput(t, plan, `No changes`)
	expectNoOutput(t, plan, `must be replaced`)
	tf.mustRun("apply", "-auto-approve", "-no-color")
	expectCount(t, sim, "vaults", 1)
	if err := expectSimState(sim, "vaults", v.ID, "SERVING"); err != nil {
		t.Error(err)
	}
}

// TestAccMCIPartlyFailedScaleAdvice: a scale-out whose new VMs all fail leaves the MCI Failed
// (its dominant status) with its working VM. The warnings say what the plan does, an in-place
// update that refines the failed VMs and provisions replacements, not a replacement; and
// terraform apply does that, keeping the MCI.
func TestAccMCIPartlyFailedScaleAdvice(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	tf := newTFCLI(t, mciConfig(sim, "", 1, 0))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	mci := sim.waitOne(t, "mcis", "Running")

	sim.addFault(t, client.FaultRule{Kind: "vm", Action: "create", Mode: "fail", Count: 2, Message: "quota exceeded"})
	writeFile(t, filepath.Join(tf.dir, "main.tf"), `terraform {
  required_providers {
    lifecycle = { source = "lifecyclesim/lifecycle" }
  }
}

`+mciConfig(sim, "", 3, 0))
	out, _ := tf.run("apply", "-auto-approve", "-no-color")
	if err := expectSimState(sim, "mcis", mci.ID, "Failed"); err != nil {
		t.Fatalf("after the scale: %v (apply output above)", err)
	}
	const replaced = `replaces the mci`
	expectNoOutput(t, out, replaced)

	plan := tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `lifecycle_mci.infra will be updated in-place`, `next terraform apply updates the mci in place`)
	expectNoOutput(t, plan, replaced, `must be replaced`)

	apply := tf.mustRun("apply", "-auto-approve", "-no-color")
	expectOutput(t, apply, `0 added, 1 changed, 0 destroyed`)
	if err := expectSimState(sim, "mcis", mci.ID, "Running"); err != nil {
		t.Error(err)
	}
}
