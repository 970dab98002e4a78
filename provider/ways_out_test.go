package provider

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// Every command a message recommends is run here, with the real terraform: -replace in the
// states whose messages name it, and Ctrl-C during a create of an object made of members.

// rewrite replaces the CLI test's main.tf body (the provider block stays).
func (c *tfCLI) rewrite(sim *testSim, body string) {
	c.t.Helper()
	writeFile(c.t, filepath.Join(c.dir, "main.tf"), `terraform {
  required_providers {
    lifecycle = { source = "lifecyclesim/lifecycle" }
  }
}

`+sim.config(body))
}

// TestAccClusterErrorReplaceCommand: a fatal scale failure leaves the cluster in Error; the
// apply error, the refresh warning and the plan all say the next apply replaces it, and
// terraform apply -replace does, without a configuration change and with one.
func TestAccClusterErrorReplaceCommand(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	tf := newTFCLI(t, sim.config(clusterConfig(2, "")))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	first := sim.waitOne(t, "clusters", "Active")

	fatal := func() {
		sim.addFault(t, client.FaultRule{Kind: "cluster", Action: "scale", Mode: "fail", Fatal: true, Count: 1, Message: "rollback failed"})
	}
	fatal()
	tf.rewrite(sim, clusterConfig(3, ""))
	out, ok := tf.run("apply", "-auto-approve", "-no-color")
	if ok {
		t.Fatal("the scale should have failed")
	}
	const next = `No action leads from Error to Active, so the next terraform apply replaces the cluster`
	expectOutput(t, out, `Error updating cluster`, `rollback failed`, next)

	plan := tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `Warning: cluster `+first.ID+` is in Error`, next,
		`Warning: cluster `+first.ID+` will be replaced`, `lifecycle_cluster.hadoop must be replaced`)
	expectNoOutput(t, plan, `\nError: `)

	// Without a configuration change.
	apply := tf.mustRun("apply", "-replace=lifecycle_cluster.hadoop", "-auto-approve", "-no-color")
	expectOutput(t, apply, `1 added, 0 changed, 1 destroyed`)
	second := sim.waitOne(t, "clusters", "Active")

	// With one.
	fatal()
	tf.rewrite(sim, clusterConfig(4, ""))
	if _, ok := tf.run("apply", "-auto-approve", "-no-color"); ok {
		t.Fatal("the second scale should have failed")
	}
	tf.rewrite(sim, clusterConfig(5, ""))
	apply = tf.mustRun("apply", "-replace=lifecycle_cluster.hadoop", "-auto-approve", "-no-color")
	expectOutput(t, apply, `1 added, 0 changed, 1 destroyed`)
	third := sim.waitOne(t, "clusters", "Active")
	if third.ID == second.ID || second.ID == first.ID {
		t.Errorf("clusters %s, %s, %s: each -replace should have made a new one", first.ID, second.ID, third.ID)
	}
	tf.mustRun("destroy", "-auto-approve", "-no-color")
}

// TestAccLeaseEndedReplaceCommand: a lease that ended by itself is kept, and the refresh says
// to give it a new window; a new window plans its replacement, and terraform apply -replace
// with it works.
func TestAccLeaseEndedReplaceCommand(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	window := func(from time.Duration) string {
		now := simNow(t, sim)
		return leaseConfig(fmt.Sprintf("  start_date = %q\n  end_date = %q",
			now.Add(from).UTC().Format(time.RFC3339), now.Add(from+2*time.Hour).UTC().Format(time.RFC3339)))
	}
	tf := newTFCLI(t, sim.config(window(0)))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	advance(t, sim, 3*time.Hour)
	ended := sim.waitOne(t, "leases", "TERMINATED")

	plan := tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `lease `+ended.ID+` is TERMINATED`, `give it a new start_date and end_date`, `No changes`)

	tf.rewrite(sim, window(time.Hour))
	plan = tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `Warning: lease `+ended.ID+` will be replaced`, `lifecycle_lease.capacity must be replaced`)
	expectNoOutput(t, plan, `\nError: `)

	apply := tf.mustRun("apply", "-replace=lifecycle_lease.capacity", "-auto-approve", "-no-color")
	expectOutput(t, apply, `1 added, 0 changed, 1 destroyed`)
	sim.waitOne(t, "leases", "PENDING")
	tf.mustRun("destroy", "-auto-approve", "-no-color")
}

// TestAccObjectImmutableReplaceCommand: changing an immutable spec field of a lifecycle_object
// plans a replacement (the field forces it), and terraform apply -replace works too.
func TestAccObjectImmutableReplaceCommand(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	config := func(image string) string {
		return networkConfig + `
resource "lifecycle_image" "other" {
  name = "debian"
}

resource "lifecycle_object" "vm" {
  kind      = "machine"
  name      = "vm1"
  parent_id = lifecycle_cloudspace.cs.id
  spec = {
    image_id = ` + image + `
  }
}
`
	}
	tf := newTFCLI(t, sim.config(config("lifecycle_image.img.id")))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	before := sim.waitOne(t, "machines", "RUNNING")

	tf.rewrite(sim, config("lifecycle_image.other.id"))
	plan := tf.mustRun("plan", "-no-color")
	// Terraform marks no "forces replacement" inside a dynamic value such as spec: the plan
	// says the object must be replaced and shows the changed key.
	expectOutput(t, plan, `lifecycle_object.vm must be replaced`, `~ image_id = "image-[0-9a-f]+" -> "image-[0-9a-f]+"`)
	expectNoOutput(t, plan, `\nError: `, `cannot change after create`)

	apply := tf.mustRun("apply", "-replace=lifecycle_object.vm", "-auto-approve", "-no-color")
	expectOutput(t, apply, `1 added, 0 changed, 1 destroyed`)
	after := sim.waitOne(t, "machines", "RUNNING")
	if after.ID == before.ID || after.Spec["image_id"] == before.Spec["image_id"] {
		t.Errorf("machine %s (image %v) after -replace, want a new machine with the other image", after.ID, after.Spec["image_id"])
	}
	tf.mustRun("destroy", "-auto-approve", "-no-color")
}

// TestAccMCICreateInterruptedResumes: Ctrl-C while an MCI's VMs are created keeps the MCI in the
// state, untainted, with a warning and no error (its members are read on a context the
// interruption did not cancel); the next apply waits for it and creates nothing.
func TestAccMCICreateInterruptedResumes(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	tf := newTFCLI(t, mciConfig(sim, "", 2, 1))
	sim.addFault(t, client.FaultRule{Kind: "vm", Action: "create", Mode: "slow", Factor: 20000})

	cmd, out := tf.start("apply", "-auto-approve", "-no-color")
	m := sim.waitOne(t, "mcis", "Creating")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Logf("interrupted apply:\n%s", out.String())
	expectOutput(t, out.String(), `Warning: Create of mci interrupted`, `kept in the state and not tainted`)
	expectNoOutput(t, out.String(), `Error reading the vm objects`, `Error creating mci`, `context canceled`)

	state := tf.mustRun("state", "show", "-no-color", mciAddr)
	expectNoOutput(t, state, `tainted`)
	expectOutput(t, state, `id\s+= "`+m.ID+`"`)

	if _, err := sim.Client.AdvanceClock(t.Context(), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	apply := tf.mustRun("apply", "-auto-approve", "-no-color")
	expectOutput(t, apply, `0 added`, `0 destroyed`)
	expectCount(t, sim, "mcis", 1)
	if err := expectSimState(sim, "mcis", m.ID, "Running"); err != nil {
		t.Error(err)
	}
	tf.mustRun("destroy", "-auto-approve", "-no-color")
}

// TestAccMCIScaleOutTieIsAWarning: a scale-out whose new VMs fail as many as run leaves the MCI
// Failed by the seed's tie rule; the apply succeeds with a warning naming the failed VMs (not an
// error), the state shows the shortfall, and the next apply converges.
func TestAccMCIScaleOutTieIsAWarning(t *testing.T) {
	sim := newTestSim(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: mciConfig(sim, "", 1, 1)},
			{
				// web 1 → 3: both new VMs fail; 2 Running, 2 Failed.
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "vm", Action: "create", Mode: "fail", Count: 2, Message: "no capacity in us-east-1"})
				},
				Config:             mciConfig(sim, "", 3, 1),
				ExpectNonEmptyPlan: true,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_count").AtMapKey("failed"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(mciAddr, tfjsonpath.New("status_count").AtMapKey("running"), knownvalue.Int64Exact(2)),
				},
			},
			{
				Config: mciConfig(sim, "", 3, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(mciAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: expectMCIStatus("Running:4 (R:4/4)", 4),
			},
		},
	})
}

// TestAccLeaseErrorReplaceCommand: a lease whose start failed is in ERROR (kept in the state,
// its create tainted); the refresh says to replace it, and terraform apply -replace does.
func TestAccLeaseErrorReplaceCommand(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	now := simNow(t, sim)
	tf := newTFCLI(t, sim.config(leaseConfig(fmt.Sprintf("  start_date = %q\n  end_date = %q",
		now.Add(time.Hour).UTC().Format(time.RFC3339), now.Add(48*time.Hour).UTC().Format(time.RFC3339)))))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	sim.addFault(t, client.FaultRule{Kind: "lease", Action: "start", Mode: "fail", Count: 1, Message: "not enough hosts"})
	advance(t, sim, 2*time.Hour)
	failed := sim.waitOne(t, "leases", "ERROR")

	plan := tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `lease `+failed.ID+` is in ERROR`, `not enough hosts`, `terraform apply -replace=ADDRESS`, `No changes`)

	apply := tf.mustRun("apply", "-replace=lifecycle_lease.capacity", "-auto-approve", "-no-color")
	expectOutput(t, apply, `1 added, 0 changed, 1 destroyed`)
	if fresh := sim.waitOne(t, "leases", "ACTIVE"); fresh.ID == failed.ID {
		t.Errorf("lease %s kept after -replace", fresh.ID)
	}
	tf.mustRun("destroy", "-auto-approve", "-no-color")
}
