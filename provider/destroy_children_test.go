package provider

import (
	"context"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// TestAccEdgeChainDestroySilent: destroying a managed cloudlet → ClusterInst → AppInst chain
// warns about no live children, since the same destroy removes them first; a ClusterInst made
// outside the configuration still warns, by name, and still makes the apply refuse the
// cloudlet's delete.
func TestAccEdgeChainDestroySilent(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	tf := newTFCLI(t, sim.config(edgeChain{}.hcl()))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	const warning = `still has live children`

	plan := tf.mustRun("plan", "-destroy", "-no-color")
	expectOutput(t, plan, `Plan: 0 to add, 0 to change, 4 to destroy`)
	expectNoOutput(t, plan, warning)

	// A ClusterInst nobody manages outlives the configuration: the plan names it.
	cl := sim.waitOne(t, "cloudlets", "Ready")
	stray, err := sim.Client.Create(context.Background(), "cluster_insts", client.CreateRequest{Name: "stray", ParentID: cl.ID,
		Spec: map[string]any{"flavor": "m4.small", "num_nodes": 1}})
	if err != nil {
		t.Fatal(err)
	}
	sim.waitStatic(t, "cluster_insts", stray.ID)
	plan = tf.mustRun("plan", "-destroy", "-no-color")
	expectOutput(t, plan, `Warning: cloudlet `+cl.ID+` still has live children`, `cluster_inst `+stray.ID+` \("stray", Ready\)`)
	expectNoOutput(t, plan, `cluster_inst cluster_inst-[0-9a-f]+ \("k8s"`, `app_inst app_inst-[0-9a-f]+ \("web"`)

	_, w, err := sim.Client.DeleteWait(context.Background(), "cluster_insts", stray.ID, "destroy", client.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w != nil {
		if _, err := w.Wait(context.Background()); !client.IsNotFound(err) {
			t.Fatalf("deleting the stray ClusterInst: %v", err)
		}
	}
	out := tf.mustRun("destroy", "-auto-approve", "-no-color")
	expectNoOutput(t, out, warning)
	expectOutput(t, out, `Destroy complete! Resources: 4 destroyed`)
}
