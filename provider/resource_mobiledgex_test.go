package provider

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

const (
	cloudletAddr = "lifecycle_cloudlet.edge"
	clusterAddr  = "lifecycle_cluster_inst.k8s"
	webAddr      = "lifecycle_app_inst.web"
	apiAddr      = "lifecycle_app_inst.api"
)

// edgeChain is the cloudlet → ClusterInst → two AppInsts configuration.
type edgeChain struct {
	version    string // the cloudlet's CRM version
	numNodes   int
	flavor     string
	webConfigs string
	noAPI      bool
}

func (e edgeChain) hcl() string {
	if e.version == "" {
		e.version = "1.0"
	}
	if e.numNodes == 0 {
		e.numNodes = 2
	}
	if e.flavor == "" {
		e.flavor = "m4.small"
	}
	if e.webConfigs == "" {
		e.webConfigs = "replicas: 1"
	}
	out := fmt.Sprintf(`resource "lifecycle_cloudlet" "edge" {
  name     = "edge-1"
  location = "berlin"
  version  = %q
}

resource "lifecycle_cluster_inst" "k8s" {
  name        = "k8s"
  cloudlet_id = lifecycle_cloudlet.edge.id
  flavor      = %q
  num_nodes   = %d
}

resource "lifecycle_app_inst" "web" {
  name            = "web"
  cluster_inst_id = lifecycle_cluster_inst.k8s.id
  app_name        = "web"
  app_version     = "1.2"
  configs         = %q
}
`, e.version, e.flavor, e.numNodes, e.webConfigs)
	if !e.noAPI {
		out += `
resource "lifecycle_app_inst" "api" {
  name            = "api"
  cluster_inst_id = lifecycle_cluster_inst.k8s.id
  app_name        = "api"
  app_version     = "3.0"
}
`
	}
	return out
}

func expectReady(addrs ...string) []statecheck.StateCheck {
	var out []statecheck.StateCheck
	for _, a := range addrs {
		out = append(out, statecheck.ExpectKnownValue(a, tfjsonpath.New("state"), knownvalue.StringExact("Ready")))
	}
	return out
}

// TestAccEdgeChain: a cloudlet, a ClusterInst on it and two AppInsts in it are created in
// order and read back by data sources; a version change upgrades the cloudlet in place, a
// node count change updates the ClusterInst in place, a new flavor replaces it; import reads
// each back; destroy removes the chain children first.
func TestAccEdgeChain(t *testing.T) {
	sim := newTestSim(t)
	var cloudletID, clusterID, webID, apiID string
	base := edgeChain{}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(base.hcl()),
				ConfigStateChecks: append(expectReady(cloudletAddr, clusterAddr, webAddr, apiAddr),
					statecheck.ExpectKnownValue(cloudletAddr, tfjsonpath.New("platform_type"), knownvalue.StringExact("openstack")),
					statecheck.ExpectKnownValue(clusterAddr, tfjsonpath.New("deployment"), knownvalue.StringExact("kubernetes")),
					statecheck.ExpectKnownValue(webAddr, tfjsonpath.New("power_state"), knownvalue.StringExact("PowerOn")),
				),
				Check: resource.ComposeTestCheckFunc(
					captureID(cloudletAddr, &cloudletID), captureID(clusterAddr, &clusterID),
					captureID(webAddr, &webID), captureID(apiAddr, &apiID),
					resource.TestCheckResourceAttrPair(clusterAddr, "cloudlet_id", cloudletAddr, "id"),
					resource.TestCheckResourceAttrPair(webAddr, "cluster_inst_id", clusterAddr, "id"),
				),
			},
			// No drift.
			{Config: sim.config(base.hcl()), PlanOnly: true},
			// Data sources read each kind by name and by ID.
			{
				Config: sim.config(base.hcl() + `
data "lifecycle_cloudlet" "by_name" {
  name = "edge-1"
}

data "lifecycle_cluster_inst" "by_id" {
  id = lifecycle_cluster_inst.k8s.id
}

data "lifecycle_app_inst" "by_name" {
  name = "api"
}
`),
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttrPair("data.lifecycle_cloudlet.by_name", "id", cloudletAddr, "id"),
					resource.TestCheckResourceAttr("data.lifecycle_cloudlet.by_name", "state", "Ready"),
					resource.TestCheckResourceAttr("data.lifecycle_cloudlet.by_name", "location", "berlin"),
					resource.TestCheckResourceAttrPair("data.lifecycle_cluster_inst.by_id", "cloudlet_id", cloudletAddr, "id"),
					resource.TestCheckResourceAttr("data.lifecycle_cluster_inst.by_id", "num_nodes", "2"),
					resource.TestCheckResourceAttrPair("data.lifecycle_app_inst.by_name", "cluster_inst_id", clusterAddr, "id"),
					resource.TestCheckResourceAttr("data.lifecycle_app_inst.by_name", "app_version", "3.0"),
				),
			},
			// The version runs the upgrade table in place; num_nodes and configs the update table.
			{
				Config: sim.config(edgeChain{version: "2.0", numNodes: 3, webConfigs: "replicas: 2"}.hcl()),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(cloudletAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(clusterAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(webAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(apiAddr, plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: expectReady(cloudletAddr, clusterAddr, webAddr),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return expectActions(sim, "cloudlets", cloudletID, "create", "upgrade") },
					func(*terraform.State) error {
						return expectActions(sim, "cluster_insts", clusterID, "create", "update")
					},
					func(*terraform.State) error { return expectActions(sim, "app_insts", webID, "create", "update") },
				),
			},
			// A field edge-cloud cannot change replaces the object (its apps with it).
			{
				Config: sim.config(edgeChain{version: "2.0", numNodes: 3, webConfigs: "replicas: 2", flavor: "m4.large"}.hcl()),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(cloudletAddr, plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(clusterAddr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(webAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: expectReady(clusterAddr, webAddr, apiAddr),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return expectGone(sim, "cluster_insts", clusterID) },
					captureID(clusterAddr, &clusterID), captureID(webAddr, &webID), captureID(apiAddr, &apiID),
				),
			},
			importStep(sim, edgeChain{version: "2.0", numNodes: 3, webConfigs: "replicas: 2", flavor: "m4.large"}, cloudletAddr),
			importStep(sim, edgeChain{version: "2.0", numNodes: 3, webConfigs: "replicas: 2", flavor: "m4.large"}, clusterAddr),
			importStep(sim, edgeChain{version: "2.0", numNodes: 3, webConfigs: "replicas: 2", flavor: "m4.large"}, webAddr),
		},
		// Destroy in dependency order: the simulator refuses a cloudlet with ClusterInsts and a
		// ClusterInst with AppInsts, so the whole chain is gone only if the apps went first.
		CheckDestroy: func(*terraform.State) error {
			for _, o := range []struct{ coll, id string }{{"app_insts", webID}, {"app_insts", apiID}, {"cluster_insts", clusterID}, {"cloudlets", cloudletID}} {
				if err := expectGone(sim, o.coll, o.id); err != nil {
					return err
				}
			}
			return nil
		},
	})
}

func importStep(sim *testSim, e edgeChain, addr string) resource.TestStep {
	return resource.TestStep{
		Config:                  sim.config(e.hcl()),
		ResourceName:            addr,
		ImportState:             true,
		ImportStateVerify:       true,
		ImportStateVerifyIgnore: []string{"timeouts"},
	}
}

// TestAccEdgeDroppedMessage: the CRM's Creating message is lost (CreateRequested → Ready):
// the apply does not mind.
func TestAccEdgeDroppedMessage(t *testing.T) {
	sim := newTestSim(t)
	sim.addFault(t, client.FaultRule{Kind: "cluster_inst", Phase: "Creating", Mode: wire.FaultDrop, Count: 1})
	var clusterID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{{
			Config:            sim.config(edgeChain{noAPI: true}.hcl()),
			ConfigStateChecks: expectReady(cloudletAddr, clusterAddr, webAddr),
			Check: resource.ComposeTestCheckFunc(captureID(clusterAddr, &clusterID), func(*terraform.State) error {
				evs, err := sim.Client.Events(context.Background(), "cluster_insts", clusterID)
				if err != nil {
					return err
				}
				for _, e := range evs {
					if e.To == "Creating" {
						return fmt.Errorf("the ClusterInst went through Creating: the fault did not drop the message")
					}
				}
				return nil
			}),
		}},
	})
}

// TestAccEdgeCreateError: the CRM fails an AppInst's create; the controller undoes it
// (CreateError → NotPresent, the object is removed). The apply fails with the CRM's message
// and leaves nothing in the state: the next apply plans a plain create, not a replacement.
func TestAccEdgeCreateError(t *testing.T) {
	sim := newTestSim(t)
	cfg := sim.config(edgeChain{noAPI: true}.hcl())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "app_inst", Action: "create", Mode: wire.FaultFail, Count: 1,
						Message: "CRM: image pull failed for web:1.2"})
				},
				Config:      cfg,
				ExpectError: errorLike(`Error creating app_inst.*CRM: image pull failed for web:1.2.*removed from the state`),
			},
			{
				Config: cfg,
				PreConfig: func() {
					expectCount(t, sim, "app_insts", 0)
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction(clusterAddr, plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: expectReady(webAddr),
			},
		},
	})
}

// TestAccEdgeUpdateErrorRetried: the CRM fails an AppInst's update: the apply fails with its
// message and the AppInst stays in UpdateError with the new spec; the next apply runs the
// update again and it lands in Ready.
func TestAccEdgeUpdateErrorRetried(t *testing.T) {
	sim := newTestSim(t)
	var webID string
	changed := sim.config(edgeChain{noAPI: true, webConfigs: "replicas: 3"}.hcl())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(edgeChain{noAPI: true}.hcl()),
				Check:  captureID(webAddr, &webID),
			},
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "app_inst", Action: "update", Mode: wire.FaultFail, Count: 1,
						Message: "CRM: helm upgrade timed out"})
				},
				Config:      changed,
				ExpectError: errorLike(`Error updating app_inst.*should have ended in Ready but the object is UpdateError: CRM: helm upgrade timed out`),
			},
			{
				Config: changed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(webAddr, plancheck.ResourceActionUpdate),
					expectPriorState(webAddr, "state", "UpdateError"),
				}},
				ConfigStateChecks: expectReady(webAddr),
				Check: func(*terraform.State) error {
					return expectActions(sim, "app_insts", webID, "create", "update", "update")
				},
			},
			{Config: changed, PlanOnly: true},
		},
	})
}

// TestAccEdgeCloudletUpdateError: a failed upgrade leaves the cloudlet in UpdateError: the
// apply fails with the CRM's message; an AppInst change then fails clearly, naming the cloudlet
// (the provider does not repair the cloudlet by itself); another version change fails the
// plan, naming the repair; the repair runs from Terraform (lifecycle_action fix), then the
// upgrade is retried and the other changes apply.
func TestAccEdgeCloudletUpdateError(t *testing.T) {
	sim := newTestSim(t)
	var cloudletID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(edgeChain{noAPI: true}.hcl()),
				Check:  captureID(cloudletAddr, &cloudletID),
			},
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "cloudlet", Action: "upgrade", Mode: wire.FaultFail, Count: 1,
						Message: "CRMv2 bringup failed"})
				},
				Config:      sim.config(edgeChain{noAPI: true, version: "2.0"}.hcl()),
				ExpectError: errorLike(`Error updating cloudlet.*UpdateError: CRMv2 bringup failed`),
			},
			// The cloudlet is left alone; the AppInst's change is refused for it.
			{
				Config: sim.config(edgeChain{noAPI: true, version: "2.0", webConfigs: "replicas: 5"}.hcl()),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(cloudletAddr, plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(webAddr, plancheck.ResourceActionUpdate),
				}},
				ExpectError: errorLike(`Error updating app_inst.*needs its cloudlet cloudlet-[0-9a-f]+ to be Ready, but it is UpdateError.*fix`),
			},
			{
				Config:      sim.config(edgeChain{noAPI: true, version: "3.0", webConfigs: "replicas: 5"}.hcl()),
				PlanOnly:    true,
				ExpectError: errorLike(`version can change only while the object is Ready; it is UpdateError.*run its .fix. action from Terraform`),
			},
			{
				// The repair, from Terraform: the fix action through lifecycle_action.
				Config: sim.config(edgeChain{noAPI: true, version: "2.0"}.hcl() + cloudletFix),
				Check: func(*terraform.State) error {
					if err := expectSimState(sim, "cloudlets", cloudletID, "Ready"); err != nil {
						return err
					}
					return expectActions(sim, "cloudlets", cloudletID, "upgrade", "fix")
				},
				// The failed upgrade was not applied: the next plan retries it.
				ExpectNonEmptyPlan: true,
			},
			{
				// Then the upgrade is retried and the AppInst's change applies.
				Config: sim.config(edgeChain{noAPI: true, version: "2.0", webConfigs: "replicas: 5"}.hcl() + cloudletFix),
				Check: func(*terraform.State) error {
					return expectActions(sim, "cloudlets", cloudletID, "upgrade", "fix", "upgrade")
				},
				ConfigStateChecks: append(expectReady(cloudletAddr, webAddr),
					statecheck.ExpectKnownValue(webAddr, tfjsonpath.New("configs"), knownvalue.StringExact("replicas: 5")),
					statecheck.ExpectKnownValue("lifecycle_action.fix", tfjsonpath.New("state"), knownvalue.StringExact("Ready"))),
			},
		},
	})
}

// TestAccEdgeCloudletUpgradeRetriedAfterFix does what a failed upgrade's error says: the
// upgrade to 2.0 fails (a fault rule) and the error names the fix action and its
// lifecycle_action resource; that resource is applied (the cloudlet is Ready again at its
// last applied version, 1.0, and the next plan shows the upgrade again); the next apply
// retries the upgrade, which lands: the cloudlet runs 2.0 and the plan is empty.
func TestAccEdgeCloudletUpgradeRetriedAfterFix(t *testing.T) {
	sim := newTestSim(t)
	var cloudletID string
	upgraded := sim.config(edgeChain{noAPI: true, version: "2.0"}.hcl())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(edgeChain{noAPI: true}.hcl()),
				Check:  captureID(cloudletAddr, &cloudletID),
			},
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "cloudlet", Action: "upgrade", Mode: wire.FaultFail, Count: 1,
						Message: "CRMv2 bringup failed"})
				},
				Config: upgraded,
				ExpectError: errorLike(`Error updating cloudlet.*UpdateError: CRMv2 bringup failed.*run its .fix. action from ` +
					`Terraform \(a lifecycle_action resource with kind = "cloudlet" and action = "fix".*then apply again.*` +
					`Its failed upgrade was not applied: once the cloudlet is repaired, the next plan shows it again and that apply retries it`),
			},
			{
				// The repair the error names; the cloudlet waits for it (no change planned).
				Config: upgraded + cloudletFix,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(cloudletAddr, plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("lifecycle_action.fix", plancheck.ResourceActionCreate),
				}},
				Check: func(*terraform.State) error {
					if err := expectSimState(sim, "cloudlets", cloudletID, "Ready"); err != nil {
						return err
					}
					return expectActions(sim, "cloudlets", cloudletID, "upgrade", "fix")
				},
				// Fixed, the cloudlet is Ready at 1.0: the upgrade to 2.0 is still to do.
				ExpectNonEmptyPlan: true,
			},
			{
				// Apply again: the upgrade is retried and lands.
				Config: upgraded + cloudletFix,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(cloudletAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(cloudletAddr, tfjsonpath.New("version"), knownvalue.StringExact("2.0")),
					expectPriorState(cloudletAddr, "version", "1.0"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(cloudletAddr, tfjsonpath.New("version"), knownvalue.StringExact("2.0")),
					statecheck.ExpectKnownValue(cloudletAddr, tfjsonpath.New("state"), knownvalue.StringExact("Ready")),
				},
				Check: func(*terraform.State) error {
					if err := expectActions(sim, "cloudlets", cloudletID, "upgrade", "fix", "upgrade"); err != nil {
						return err
					}
					o, err := sim.Client.Get(context.Background(), "cloudlets", cloudletID)
					if err != nil {
						return err
					}
					if o.Spec["version"] != "2.0" || o.Status[client.StatusUnapplied] != nil {
						return fmt.Errorf("cloudlet after the retried upgrade: version %v, unapplied %v; want 2.0 and none",
							o.Spec["version"], o.Status[client.StatusUnapplied])
					}
					return nil
				},
			},
			{Config: upgraded + cloudletFix, PlanOnly: true},
		},
	})
}

// cloudletFix repairs the cloudlet of edgeChain from UpdateError: the fix the refresh warning
// and the plan recommend.
const cloudletFix = `
resource "lifecycle_action" "fix" {
  kind      = "cloudlet"
  object_id = lifecycle_cloudlet.edge.id
  action    = "fix"
}
`

// advanceOnWait returns middleware that, once armed, moves the simulator's clock on by d the
// first time the provider long-polls an object of the collection: a transition slowed by a
// fault then ends while the provider waits for it, with no sleep in the test.
func advanceOnWait(sim **testSim, collection string, d time.Duration, armed *atomic.Bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/"+collection+"/") &&
				r.URL.Query().Get("wait") == "static" && armed.CompareAndSwap(true, false) {
				(*sim).Engine.Clock().(*engine.SimClock).Advance(d)
				(*sim).Engine.Kick()
			}
			next.ServeHTTP(w, r)
		})
	}
}

// TestAccEdgeUpgradeFreezeWaits: while its cloudlet upgrades (started outside Terraform), an
// AppInst change warns at plan, naming the cloudlet and its state; the apply waits for the
// upgrade to end, then runs the update. A destroy plan warns about an AppInst made outside
// the configuration.
func TestAccEdgeUpgradeFreezeWaits(t *testing.T) {
	t.Parallel()
	var sim *testSim
	var armed atomic.Bool
	sim = newTestSim(t, withMiddleware(advanceOnWait(&sim, "cloudlets", 10*time.Minute, &armed)))
	ctx := context.Background()
	cl, err := sim.Client.Create(ctx, "cloudlets", client.CreateRequest{Name: "edge-out"})
	if err != nil {
		t.Fatal(err)
	}
	sim.waitStatic(t, "cloudlets", cl.ID)
	appConfig := func(configs string) string {
		return sim.config(fmt.Sprintf(`resource "lifecycle_cluster_inst" "k8s" {
  name        = "k8s"
  cloudlet_id = %q
  flavor      = "m4.small"
}

resource "lifecycle_app_inst" "web" {
  name            = "web"
  cluster_inst_id = lifecycle_cluster_inst.k8s.id
  app_name        = "web"
  app_version     = "1.2"
  configs         = %q
}
`, cl.ID, configs))
	}
	tf := newTFCLI(t, appConfig("replicas: 1"))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	app := sim.waitOne(t, "app_insts", "Ready")

	// The upgrade's first phase is slowed (by 10⁵: minutes of simulated time), so it runs
	// until the clock moves.
	sim.addFault(t, client.FaultRule{Kind: "cloudlet", Action: "upgrade", Phase: "UpdateRequested", Mode: wire.FaultSlow, Factor: 1e5, Count: 1})
	if _, err := sim.Client.Patch(ctx, "cloudlets", cl.ID, 0, client.PatchRequest{Spec: map[string]any{"version": "2.0"}}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tf.dir, "main.tf"), `terraform {
  required_providers {
    lifecycle = { source = "lifecyclesim/lifecycle" }
  }
}

`+appConfig("replicas: 2"))
	plan := tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `Warning: cloudlet `+cl.ID+` is UpdateRequested`,
		`app_inst "update" needs it Ready`, `apply waits for that`)

	armed.Store(true)
	tf.mustRun("apply", "-auto-approve", "-no-color")
	if armed.Load() {
		t.Error("the apply never waited for the cloudlet")
	}
	if err := expectSimState(sim, "cloudlets", cl.ID, "Ready"); err != nil {
		t.Error(err)
	}
	if err := expectActions(sim, "app_insts", app.ID, "create", "update"); err != nil {
		t.Error(err)
	}
	o, err := sim.Client.Get(ctx, "app_insts", app.ID)
	if err != nil || o.Spec["configs"] != "replicas: 2" {
		t.Errorf("AppInst after the apply: %+v, %v", o, err)
	}

	// An AppInst made outside the configuration: a plan that destroys its ClusterInst warns,
	// naming it.
	stray, err := sim.Client.Create(ctx, "app_insts", client.CreateRequest{Name: "stray", ParentID: o.ParentID,
		Spec: map[string]any{"app_name": "stray", "app_version": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	sim.waitStatic(t, "app_insts", stray.ID)
	plan = tf.mustRun("plan", "-destroy", "-no-color")
	expectOutput(t, plan, `Warning: cluster_inst cluster_inst-[0-9a-f]+ still has live children`,
		`app_inst `+stray.ID+` \("stray", Ready\)`, `refuses to delete it, naming them`)
}

// TestAccEdgeDeleteWaitsAndRefuses: destroying an AppInst that an out-of-band update holds in
// UpdateRequested waits for it instead of failing; removing a ClusterInst that still has an
// AppInst outside the configuration refuses before deleting anything, naming it.
func TestAccEdgeDeleteWaitsAndRefuses(t *testing.T) {
	var sim *testSim
	var armed atomic.Bool
	sim = newTestSim(t, withMiddleware(advanceOnWait(&sim, "app_insts", 10*time.Minute, &armed)))
	var clusterID, webID, strayID string
	ctx := context.Background()
	twoApps := sim.config(edgeChain{}.hcl())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: twoApps,
				Check:  resource.ComposeTestCheckFunc(captureID(clusterAddr, &clusterID), captureID(apiAddr, &webID)),
			},
			// The api AppInst is updating (slowly) when the configuration drops it.
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "app_inst", Action: "update", Phase: "UpdateRequested", Mode: wire.FaultSlow, Factor: 1e5, Count: 1})
					if _, err := sim.Client.Patch(ctx, "app_insts", webID, 0, client.PatchRequest{Spec: map[string]any{"configs": "x"}}); err != nil {
						t.Fatal(err)
					}
					armed.Store(true)
				},
				Config: sim.config(edgeChain{noAPI: true}.hcl()),
				Check: func(*terraform.State) error {
					if armed.Load() {
						return fmt.Errorf("the destroy never waited for the AppInst")
					}
					return expectGone(sim, "app_insts", webID)
				},
			},
			// An AppInst made outside Terraform keeps the ClusterInst: the apply refuses to
			// delete it (nothing is deleted), naming the AppInst.
			{
				PreConfig: func() {
					o, err := sim.Client.Create(ctx, "app_insts", client.CreateRequest{Name: "stray", ParentID: clusterID,
						Spec: map[string]any{"app_name": "stray", "app_version": "1"}})
					if err != nil {
						t.Fatal(err)
					}
					strayID = o.ID
					sim.waitStatic(t, "app_insts", o.ID)
				},
				Config: sim.config(`resource "lifecycle_cloudlet" "edge" {
  name     = "edge-1"
  location = "berlin"
}
`),
				ExpectError: errorLike(`Error deleting cluster_inst.*still has live children.*The cluster_inst was not deleted.*app_inst app_inst-[0-9a-f]+ \("stray", Ready\).*delete them first`),
			},
			{
				PreConfig: func() {
					if err := expectSimState(sim, "cluster_insts", clusterID, "Ready"); err != nil {
						t.Fatal(err)
					}
					if _, err := sim.Client.Delete(ctx, "app_insts", strayID, "destroy"); err != nil {
						t.Fatal(err)
					}
					sim.waitGone(t, "app_insts", strayID)
				},
				Config: sim.config(`resource "lifecycle_cloudlet" "edge" {
  name     = "edge-1"
  location = "berlin"
}
`),
				Check: func(*terraform.State) error { return expectGone(sim, "cluster_insts", clusterID) },
			},
		},
	})
}
