package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// TestAccInUseDestroyAdvice: destroying a cluster template that a cluster names (the
// cluster's cluster_template_id link says delete: refuse) is refused by the simulator, and the
// error says what is true — nothing was deleted, which cluster names it and through which
// field — and what to do, never to plan again. Each way out it gives is run here and works: a
// cluster made outside the configuration is deleted first; a cluster of the configuration that
// names the template by its ID written out (so Terraform sees no order between the two and
// deletes them at once) refers to the template's id instead, and the same destroy goes through.
func TestAccInUseDestroyAdvice(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	example, err := os.ReadFile(filepath.Join("..", "examples", "resources", "lifecycle_cluster_template", "resource.tf"))
	if err != nil {
		t.Fatal(err)
	}
	templates := string(example)
	tf := newTFCLI(t, sim.config(templates))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	ct := sim.waitOne(t, "cluster_templates", "Active")
	ctx := context.Background()

	// A cluster nobody manages names the template.
	outside, err := sim.Client.Create(ctx, "clusters", client.CreateRequest{Name: "outside", Spec: map[string]any{
		"plugin_name": "vanilla", "hadoop_version": "2.7.1", "cluster_template_id": ct.ID,
		"node_groups": []any{map[string]any{"name": "master", "flavor": "m1.large", "processes": []any{"namenode"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	sim.waitStatic(t, "clusters", outside.ID)
	out, ok := tf.run("destroy", "-auto-approve", "-no-color")
	if ok {
		t.Fatalf("destroy while cluster %s names the template succeeded:\n%s", outside.ID, out)
	}
	expectOutput(t, out, `Error deleting cluster_template`, `cluster_template `+ct.ID+` is in use by 1 objects`, `The cluster_template was not deleted`,
		`cluster `+outside.ID+` \("outside", Active\) by its cluster_template_id`, `If it does not manage them, delete them first`,
		`Then run the same terraform command again`)
	expectNoOutput(t, out, `plan again`, `changed since the plan`)
	if err := expectSimState(sim, "cluster_templates", ct.ID, "Active"); err != nil {
		t.Fatal(err)
	}
	// The advice: delete it first, then run the same command again.
	if _, err := sim.Client.Delete(ctx, "clusters", outside.ID, "destroy"); err != nil {
		t.Fatal(err)
	}
	sim.waitGone(t, "clusters", outside.ID)
	out = tf.mustRun("destroy", "-auto-approve", "-no-color")
	expectOutput(t, out, `Destroy complete! Resources: 3 destroyed`)

	// A cluster of the configuration names the template by its ID written out.
	tf.mustRun("apply", "-auto-approve", "-no-color")
	ct = sim.waitOne(t, "cluster_templates", "Active")
	tf.rewrite(sim, templates+clusterConfig(1, fmt.Sprintf("  cluster_template_id = %q", ct.ID)))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	// Deleting a cluster takes seconds now: the template's delete, which Terraform sends at the
	// same time, finds it still there.
	sim.addFault(t, client.FaultRule{Kind: "cluster", Action: "delete", Mode: wire.FaultSlow, Factor: 750})
	out, ok = tf.run("destroy", "-auto-approve", "-no-color")
	if ok {
		t.Fatalf("destroy of a cluster naming the template by its ID written out, and of the template, succeeded:\n%s", out)
	}
	expectOutput(t, out, `Error deleting cluster_template`, `The cluster_template was not deleted`,
		`cluster cluster-[0-9a-f]+ \("analytics", [A-Za-z]+\) by its cluster_template_id`,
		`If this configuration manages them, set their cluster_template_id \(its spec key in lifecycle_object\) to a `+
			`reference to this resource's id, such as lifecycle_cluster_template.NAME.id, not the ID written out`)
	expectNoOutput(t, out, `plan again`, `changed since the plan`)
	// The advice: refer to the template's id. The destroy then deletes the cluster first.
	tf.rewrite(sim, templates+clusterConfig(1, "  cluster_template_id = lifecycle_cluster_template.hadoop.id"))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	out = tf.mustRun("destroy", "-auto-approve", "-no-color")
	expectOutput(t, out, `Destroy complete! Resources: 4 destroyed`)
}

// TestAccChildNamedByIDDestroyAdvice: a ClusterInst of the configuration that names its
// cloudlet by its ID written out gives Terraform no order between the two, so the destroy
// deletes them at once and the cloudlet's delete, finding its child still there, is refused.
// The error says to refer to the cloudlet's id instead (not that the children are outside the
// configuration, nor to plan again); with that done, the same destroy goes through.
func TestAccChildNamedByIDDestroyAdvice(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	const cloudlet = `resource "lifecycle_cloudlet" "edge" {
  name     = "edge-1"
  location = "berlin"
}
`
	clusterInst := func(cloudletID string) string {
		return fmt.Sprintf(`
resource "lifecycle_cluster_inst" "k8s" {
  name        = "k8s"
  cloudlet_id = %s
  flavor      = "m4.small"
}
`, cloudletID)
	}
	tf := newTFCLI(t, sim.config(cloudlet))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	cl := sim.waitOne(t, "cloudlets", "Ready")
	tf.rewrite(sim, cloudlet+clusterInst(fmt.Sprintf("%q", cl.ID)))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	// Deleting a ClusterInst takes seconds now: the cloudlet's delete, which Terraform sends at
	// the same time, finds it still there.
	sim.addFault(t, client.FaultRule{Kind: "cluster_inst", Action: "delete", Phase: "DeletePrepare", Mode: wire.FaultSlow, Factor: 750})
	out, ok := tf.run("destroy", "-auto-approve", "-no-color")
	if ok {
		t.Fatalf("destroy of a ClusterInst naming its cloudlet by its ID written out, and of the cloudlet, succeeded:\n%s", out)
	}
	expectOutput(t, out, `Error deleting cloudlet`, `The cloudlet was not deleted`, `cluster_inst cluster_inst-[0-9a-f]+ \("k8s", [A-Za-z]+\)`,
		`If this configuration manages them, set their cloudlet_id \(parent_id in lifecycle_object\) to a reference to this `+
			`resource's id, such as lifecycle_cloudlet.NAME.id, not the ID written out`)
	expectNoOutput(t, out, `plan again`, `changed since the plan`, `not managed by this configuration`)
	// The advice: refer to the cloudlet's id. The destroy then deletes the ClusterInst first.
	tf.rewrite(sim, cloudlet+clusterInst("lifecycle_cloudlet.edge.id"))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	out = tf.mustRun("destroy", "-auto-approve", "-no-color")
	expectOutput(t, out, `Destroy complete! Resources: 2 destroyed`)
}
