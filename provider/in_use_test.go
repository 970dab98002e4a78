package provider

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// TestAccInUseDestroyAdvice: destroying a cluster template that a cluster names (the
// cluster's cluster_template_id link says delete: refuse) is refused by the simulator. The
// destroy's plan warns, naming the cluster, unless the same plan destroys it; the error says
// what is true — nothing was deleted, which cluster names it and through which field — and
// what to do, never to plan again. Each way out it gives is run here and works: a cluster made
// outside the configuration is deleted first; a cluster of the configuration that names the
// template by its ID written out (so Terraform sees no order between the two and deletes them
// at once) refers to the template's id instead, and the same destroy goes through. When the
// template's delete finds the cluster being deleted already, it waits for it and goes.
func TestAccInUseDestroyAdvice(t *testing.T) {
	t.Parallel()
	hold := &holder{}
	sim := newTestSim(t, withMiddleware(hold.middleware))
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
	plan := tf.mustRun("plan", "-destroy", "-no-color")
	expectOutput(t, plan, `Warning: cluster_template `+ct.ID+` is in use`,
		`cluster `+outside.ID+` \("outside", Active\) by its cluster_template_id`, `the apply refuses to delete it, naming them`)
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
	expectNoOutput(t, tf.mustRun("plan", "-destroy", "-no-color"), `is in use`)
	out = tf.mustRun("destroy", "-auto-approve", "-no-color")
	expectOutput(t, out, `Destroy complete! Resources: 3 destroyed`)

	// A cluster of the configuration names the template by its ID written out.
	tf.mustRun("apply", "-auto-approve", "-no-color")
	ct = sim.waitOne(t, "cluster_templates", "Active")
	tf.rewrite(sim, templates+clusterConfig(1, fmt.Sprintf("  cluster_template_id = %q", ct.ID)))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	// Terraform deletes the two at once; the cluster's delete waits until the template's has
	// been answered, so that one finds the cluster still there.
	deleteCluster := func(r *http.Request) bool { return isRequest(r, http.MethodDelete, "/v1/clusters/", "") }
	deleteTemplate := func(r *http.Request) bool { return isRequest(r, http.MethodDelete, "/v1/cluster_templates/", "") }
	hold.arm(deleteCluster, deleteTemplate)
	out, ok = tf.run("destroy", "-auto-approve", "-no-color")
	if ok {
		t.Fatalf("destroy of a cluster naming the template by its ID written out, and of the template, succeeded:\n%s", out)
	}
	expectOutput(t, out, `Error deleting cluster_template`, `The cluster_template was not deleted`,
		`cluster cluster-[0-9a-f]+ \("analytics", [A-Za-z]+\) by its cluster_template_id`,
		`If this configuration manages them, set their cluster_template_id \(its spec key in lifecycle_object\) to a `+
			`reference to this resource's id, such as lifecycle_cluster_template.NAME.id, not the ID written out`)
	expectNoOutput(t, out, `plan again`, `changed since the plan`)
	// In the other order, the template's delete finds the cluster being deleted (which takes
	// seconds now): it waits for it, then goes.
	slow := sim.addFault(t, client.FaultRule{Kind: "cluster", Action: "delete", Mode: wire.FaultSlow, Factor: 750})
	tf.mustRun("apply", "-auto-approve", "-no-color")
	hold.arm(deleteTemplate, deleteCluster)
	out = tf.mustRun("destroy", "-auto-approve", "-no-color")
	expectOutput(t, out, `Destroy complete! Resources: 4 destroyed`)
	if err := sim.Engine.Faults().Delete(ctx, "", slow.ID); err != nil {
		t.Fatal(err)
	}
	// The advice: refer to the template's id. The destroy then deletes the cluster first, and
	// the template only once the cluster is gone.
	tf.rewrite(sim, templates+clusterConfig(1, "  cluster_template_id = lifecycle_cluster_template.hadoop.id"))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	expectNoOutput(t, tf.mustRun("plan", "-destroy", "-no-color"), `is in use`)
	out = tf.mustRun("destroy", "-auto-approve", "-no-color")
	expectOutput(t, out, `lifecycle_cluster.hadoop: Destruction complete.*lifecycle_cluster_template.hadoop: Destroying`,
		`Destroy complete! Resources: 4 destroyed`)
}

// TestAccChildNamedByIDDestroyAdvice: a ClusterInst of the configuration that names its
// cloudlet by its ID written out gives Terraform no order between the two, so the destroy
// deletes them at once and the cloudlet's delete, finding its child still there, is refused.
// The error says to refer to the cloudlet's id instead (not that the children are outside the
// configuration, nor to plan again); with that done, the same destroy goes through. When the
// cloudlet's delete finds the ClusterInst being deleted already, it waits for it and goes.
func TestAccChildNamedByIDDestroyAdvice(t *testing.T) {
	t.Parallel()
	hold := &holder{}
	sim := newTestSim(t, withMiddleware(hold.middleware))
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
	// Terraform deletes the two at once; the ClusterInst's delete waits until the cloudlet's has
	// looked for children, so that one finds it still there. (The destroy is planned first, and
	// its plan looks for children too.)
	tf.mustRun("plan", "-destroy", "-out=destroy.tfplan", "-no-color")
	deleteChild := func(r *http.Request) bool { return isRequest(r, http.MethodDelete, "/v1/cluster_insts/", "") }
	listChildren := func(r *http.Request) bool { return isRequest(r, http.MethodGet, "/v1/cluster_insts", "parent_id=") }
	hold.arm(deleteChild, listChildren)
	out, ok := tf.run("apply", "-no-color", "destroy.tfplan")
	if ok {
		t.Fatalf("destroy of a ClusterInst naming its cloudlet by its ID written out, and of the cloudlet, succeeded:\n%s", out)
	}
	expectOutput(t, out, `Error deleting cloudlet`, `The cloudlet was not deleted`, `cluster_inst cluster_inst-[0-9a-f]+ \("k8s", [A-Za-z]+\)`,
		`If this configuration manages them, set their cloudlet_id \(parent_id in lifecycle_object\) to a reference to this `+
			`resource's id, such as lifecycle_cloudlet.NAME.id, not the ID written out`)
	expectNoOutput(t, out, `plan again`, `changed since the plan`, `not managed by this configuration`)
	// In the other order, the cloudlet's delete finds the ClusterInst being deleted (which takes
	// seconds now): it waits for it, then goes.
	slow := sim.addFault(t, client.FaultRule{Kind: "cluster_inst", Action: "delete", Phase: "DeletePrepare", Mode: wire.FaultSlow, Factor: 750})
	tf.mustRun("apply", "-auto-approve", "-no-color")
	tf.mustRun("plan", "-destroy", "-out=destroy.tfplan", "-no-color")
	hold.arm(listChildren, deleteChild)
	out = tf.mustRun("apply", "-no-color", "destroy.tfplan")
	expectOutput(t, out, `Apply complete! Resources: 0 added, 0 changed, 2 destroyed`)
	if err := sim.Engine.Faults().Delete(context.Background(), "", slow.ID); err != nil {
		t.Fatal(err)
	}
	// The advice: refer to the cloudlet's id. The destroy then deletes the ClusterInst first,
	// and the cloudlet only once it is gone.
	tf.rewrite(sim, cloudlet+clusterInst("lifecycle_cloudlet.edge.id"))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	out = tf.mustRun("destroy", "-auto-approve", "-no-color")
	expectOutput(t, out, `lifecycle_cluster_inst.k8s: Destruction complete.*lifecycle_cloudlet.edge: Destroying`,
		`Destroy complete! Resources: 2 destroyed`)
}

// TestAccMovedMidApplyPlanAgain: a machine stopped outside Terraform between two steps of the
// route an apply walks (HALTED → start → RUNNING → pause → PAUSED: stopped again just before
// the pause) makes the pause refused; the error says the object changed and to run terraform
// plan again — and that is what works: the new plan walks the route again from HALTED, and its
// apply reaches PAUSED.
func TestAccMovedMidApplyPlanAgain(t *testing.T) {
	t.Parallel()
	var sim *testSim
	var armed atomic.Bool
	sim = newTestSim(t, withMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/machines/") &&
				strings.HasSuffix(r.URL.Path, "/actions/pause") && armed.CompareAndSwap(true, false) {
				// Someone else stops it first (t.Error: this is not the test's goroutine).
				id := strings.Split(r.URL.Path, "/")[3]
				if _, err := sim.Client.Act(r.Context(), "machines", id, "stop", client.ActionRequest{}); err != nil {
					t.Errorf("stopping machine %s out of band: %v", id, err)
				} else if o, err := sim.Client.WaitStatic(r.Context(), "machines", id, client.WaitOptions{}); err != nil || o.State != "HALTED" {
					t.Errorf("machine %s after the out-of-band stop: %v, %v; want HALTED", id, o, err)
				}
			}
			next.ServeHTTP(w, r)
		})
	}))
	tf, m := haltedToPaused(t, sim, &armed)
	out, ok := tf.run("apply", "-auto-approve", "-no-color")
	if ok {
		t.Fatalf("the apply whose pause found the machine stopped succeeded:\n%s", out)
	}
	expectOutput(t, out, `Error updating machine`, `"pause" is not allowed from state HALTED`,
		`The object changed since the plan; actions allowed from HALTED now: .*start.* Run terraform plan again.`)
	// The advice: plan again. The plan walks from HALTED again, and its apply gets there.
	plan := tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `lifecycle_machine.m will be updated in-place`, `"HALTED" -> "PAUSED"`)
	tf.mustRun("apply", "-auto-approve", "-no-color")
	if err := expectSimState(sim, "machines", m.ID, "PAUSED"); err != nil {
		t.Error(err)
	}
}

// TestAccUpdateInterruptedCarriesOn: Ctrl-C while an update walks its route (HALTED → start →
// RUNNING → pause → PAUSED) ends the apply saying the object is kept and that the next apply
// waits for it and carries on from where it is — and it does, whether the start had been
// accepted (interrupted in STARTING) or its request was still unanswered (the object HALTED):
// the next apply brings the machine to PAUSED.
func TestAccUpdateInterruptedCarriesOn(t *testing.T) {
	t.Run("waiting for the start", func(t *testing.T) {
		t.Parallel()
		sim := newTestSim(t)
		tf := newTFCLI(t, sim.config(machineConfig("HALTED")))
		tf.mustRun("apply", "-auto-approve", "-no-color")
		sim.addFault(t, client.FaultRule{Kind: "machine", Action: "start", Mode: wire.FaultSlow, Factor: 20000})
		tf.rewrite(sim, machineConfig("PAUSED"))
		cmd, out := tf.start("apply", "-auto-approve", "-no-color")
		m := sim.waitOne(t, "machines", "STARTING")
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		// Interrupted while waiting for the start, or (on a loaded machine) before its answer.
		expectOutput(t, out.String(), `interrupted while (waiting for machine `+m.ID+` \(last state STARTING\)|asking machine `+
			m.ID+` to start \(last state HALTED\))`, `The object is kept in the state: the next apply waits for it and carries on from where it is.`)
		// The advice: apply again once the start can land.
		if _, err := sim.Client.AdvanceClock(context.Background(), 3*time.Minute); err != nil {
			t.Fatal(err)
		}
		tf.mustRun("apply", "-auto-approve", "-no-color")
		if err := expectSimState(sim, "machines", m.ID, "PAUSED"); err != nil {
			t.Error(err)
		}
	})
	t.Run("before the start's answer", func(t *testing.T) {
		t.Parallel()
		// Armed, the simulator holds the start's request, never starting it, until the client
		// gives up on it.
		var armed atomic.Bool
		holding := make(chan struct{})
		sim := newTestSim(t, withMiddleware(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if isRequest(r, http.MethodPost, "/v1/machines/", "") && strings.HasSuffix(r.URL.Path, "/actions/start") &&
					armed.CompareAndSwap(true, false) {
					// Read the body first: the server then notices the client going away.
					_, _ = io.Copy(io.Discard, r.Body)
					close(holding)
					select {
					case <-r.Context().Done():
					case <-time.After(time.Minute):
					}
					http.Error(w, "held", http.StatusServiceUnavailable)
					return
				}
				next.ServeHTTP(w, r)
			})
		}))
		tf, m := haltedToPaused(t, sim, &armed)
		cmd, out := tf.start("apply", "-auto-approve", "-no-color")
		select {
		case <-holding:
		case <-time.After(time.Minute):
			t.Fatal("the apply never asked the machine to start")
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		expectOutput(t, out.String(), `Error updating machine`, `interrupted while asking machine `+m.ID+` to start \(last state HALTED\)`,
			`The object is kept in the state: the next apply waits for it and carries on from where it is.`)
		// The advice: apply again.
		tf.mustRun("apply", "-auto-approve", "-no-color")
		if err := expectSimState(sim, "machines", m.ID, "PAUSED"); err != nil {
			t.Error(err)
		}
	})
}

// holder is a simulator middleware that, once armed, holds the first request for which hold
// is true until a request for which release is true has been answered (at once when one has
// since it was armed; a minute bounds a test that fails anyway): Terraform, which sees no order
// between two resources, then sends their requests in the order a test needs, whatever the
// scheduler does.
type holder struct {
	mu            sync.Mutex
	hold, release func(*http.Request) bool // nil when not armed
	released      bool                     // a release was answered since the holder was armed
	held          chan struct{}            // open while a request is held
}

// arm makes the holder hold the next request hold picks until one release picks is answered.
func (h *holder) arm(hold, release func(*http.Request) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hold, h.release, h.released = hold, release, false
}

func (h *holder) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		var wait chan struct{}
		if h.hold != nil && h.hold(r) {
			if !h.released {
				wait = make(chan struct{})
				h.held = wait
			}
			h.hold = nil
		}
		h.mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
			case <-time.After(time.Minute):
			}
		}
		h.mu.Lock()
		release := h.release != nil && h.release(r)
		h.mu.Unlock()
		if !release {
			next.ServeHTTP(w, r)
			return
		}
		// Released once the answer starts: a delete sent with ?wait=static is answered
		// (202) when it is accepted, and its stream ends only when the object is gone.
		next.ServeHTTP(&onAnswer{ResponseWriter: w, fn: func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.released = true
			if h.held != nil {
				close(h.held)
				h.held = nil
			}
		}}, r)
	})
}

// onAnswer is a ResponseWriter that calls fn once the answer's status is written.
type onAnswer struct {
	http.ResponseWriter
	once sync.Once
	fn   func()
}

func (o *onAnswer) WriteHeader(code int) {
	o.ResponseWriter.WriteHeader(code)
	o.once.Do(o.fn)
}

func (o *onAnswer) Write(b []byte) (int, error) {
	n, err := o.ResponseWriter.Write(b)
	o.once.Do(o.fn)
	return n, err
}

// Flush passes a streaming answer's flushes on.
func (o *onAnswer) Flush() {
	if f, ok := o.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (o *onAnswer) Unwrap() http.ResponseWriter { return o.ResponseWriter }

// isRequest reports whether r is method on a path under prefix whose query holds query.
func isRequest(r *http.Request, method, prefix, query string) bool {
	return r.Method == method && strings.HasPrefix(r.URL.Path, prefix) && strings.Contains(r.URL.RawQuery, query)
}

// wellsFile: a pump names a well, which is not deleted while a pump names it.
const wellsFile = "../lifecycle/testdata/specs/wells.yaml"

// TestAccInUseNameAnother: a pump made outside the configuration names the configuration's
// well, so the well's destroy is refused, and the error's last way out — make them name
// another well, where their field can change — works: the pump is pointed at another well and
// the same destroy goes through.
func TestAccInUseNameAnother(t *testing.T) {
	t.Parallel()
	kinds, err := lifecycle.LoadFile(wellsFile)
	if err != nil {
		t.Fatal(err)
	}
	sim := newTestSim(t, withKinds(kinds...))
	tf := newTFCLI(t, sim.config(`resource "lifecycle_object" "w" {
  kind = "well"
  name = "w"
}
`))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	w := sim.waitOne(t, "wells", "FULL")
	ctx := context.Background()
	pump, err := sim.Client.Create(ctx, "pumps", client.CreateRequest{Name: "p", Spec: map[string]any{"well_id": w.ID}})
	if err != nil {
		t.Fatal(err)
	}
	out, ok := tf.run("destroy", "-auto-approve", "-no-color")
	if ok {
		t.Fatalf("destroy while pump %s names the well succeeded:\n%s", pump.ID, out)
	}
	expectOutput(t, out, `Error deleting well`, `pump `+pump.ID+` \("p", ON\) by its well_id`,
		`delete them first \(or, where their field can change, make them name another well\)`)
	// The advice: the pump names another well, made outside the configuration too.
	other, err := sim.Client.Create(ctx, "wells", client.CreateRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Client.Patch(ctx, "pumps", pump.ID, 0, client.PatchRequest{Spec: map[string]any{"well_id": other.ID}}); err != nil {
		t.Fatal(err)
	}
	expectOutput(t, tf.mustRun("destroy", "-auto-approve", "-no-color"), `Destroy complete! Resources: 1 destroyed`)
}

// haltedToPaused applies a HALTED machine on sim, rewrites the configuration to PAUSED (the
// walk starts it, then pauses it) and arms the test's interception for the next apply.
func haltedToPaused(t *testing.T, sim *testSim, armed *atomic.Bool) (*tfCLI, client.Object) {
	t.Helper()
	tf := newTFCLI(t, sim.config(machineConfig("HALTED")))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	m := sim.waitOne(t, "machines", "HALTED")
	tf.rewrite(sim, machineConfig("PAUSED"))
	armed.Store(true)
	return tf, m
}
