package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// providerAddr is the provider's registry address, which the CLI tests' configurations use.
const providerAddr = "registry.terraform.io/lifecyclesim/lifecycle"

// tfCLI runs the real terraform binary in a working directory of its own against the
// provider served in this process (TF_REATTACH_PROVIDERS), for what terraform-plugin-testing
// cannot drive: signals, terraform untaint, warnings in the plan's output.
type tfCLI struct {
	t   *testing.T
	dir string
	env []string
}

// newTFCLI serves the provider for the test's lifetime and writes main.tf from config. It
// skips the test unless TF_ACC is set.
func newTFCLI(t *testing.T, config string) *tfCLI {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run acceptance tests")
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not on PATH")
	}
	info := serveReattached(t, New("test")())
	dir := t.TempDir()
	cliConfig := filepath.Join(dir, ".terraformrc")
	writeFile(t, cliConfig, "")
	writeFile(t, filepath.Join(dir, "main.tf"), `terraform {
  required_providers {
    lifecycle = { source = "lifecyclesim/lifecycle" }
  }
}

`+config)
	env := []string{"TF_REATTACH_PROVIDERS=" + string(info), "TF_CLI_CONFIG_FILE=" + cliConfig,
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "CHECKPOINT_") {
			env = append(env, kv)
		}
	}
	return &tfCLI{t: t, dir: dir, env: env}
}

// serveReattached serves prov for the test's lifetime in this process and returns the
// TF_REATTACH_PROVIDERS value that points terraform at it.
func serveReattached(t *testing.T, prov provider.Provider) []byte {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig)
	closed := make(chan struct{})
	serveErr := make(chan error, 1)
	go func() {
		serveErr <- tf6server.Serve(providerAddr, serverOf(prov),
			tf6server.WithDebug(ctx, reattach, closed), tf6server.WithoutLogStderrOverride(),
			tf6server.WithLoggingSink(t), tf6server.WithGoPluginLogger(hclog.NewNullLogger()))
	}()
	var rc *plugin.ReattachConfig
	select {
	case rc = <-reattach:
	case err := <-serveErr:
		cancel()
		t.Fatalf("serving the provider: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("the provider server did not start")
	}
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	info, err := json.Marshal(map[string]any{providerAddr: map[string]any{
		"Protocol": string(rc.Protocol), "ProtocolVersion": rc.ProtocolVersion, "Pid": rc.Pid, "Test": true,
		"Addr": map[string]string{"Network": rc.Addr.Network(), "String": rc.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start starts terraform with args; its output (stdout and stderr) goes to the buffer.
func (c *tfCLI) start(args ...string) (*exec.Cmd, *syncBuffer) {
	c.t.Helper()
	out := &syncBuffer{}
	cmd := exec.Command("terraform", append([]string{"-chdir=" + c.dir}, args...)...)
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
	}
	return cmd, out
}

// run runs terraform with args to the end and returns its output and whether it succeeded.
func (c *tfCLI) run(args ...string) (string, bool) {
	c.t.Helper()
	cmd, out := c.start(args...)
	err := cmd.Wait()
	c.t.Logf("terraform %s:\n%s", strings.Join(args, " "), out.String())
	return out.String(), err == nil
}

// mustRun is run that fails the test when terraform fails.
func (c *tfCLI) mustRun(args ...string) string {
	c.t.Helper()
	out, ok := c.run(args...)
	if !ok {
		c.t.Fatalf("terraform %s failed", strings.Join(args, " "))
	}
	return out
}

// expectOutput fails the test unless out matches each pattern (errorLike: spaces match any
// white space, so wrapped lines match).
func expectOutput(t *testing.T, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !errorLike(p).MatchString(out) {
			t.Errorf("terraform's output does not match %q", p)
		}
	}
}

// expectNoOutput fails the test if out matches any pattern.
func expectNoOutput(t *testing.T, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if errorLike(p).MatchString(out) {
			t.Errorf("terraform's output matches %q, it should not", p)
		}
	}
}

// waitOne waits until the collection holds one object, in state.
func (s *testSim) waitOne(t *testing.T, collection, state string) client.Object {
	t.Helper()
	var objs []client.Object
	simtest.Eventually(t, time.Minute, collection+" holding one object in "+state, func() bool {
		var err error
		if objs, err = s.Client.ListAll(context.Background(), collection, client.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		return len(objs) == 1 && objs[0].State == state
	})
	return objs[0]
}

// slowDeploys makes every machine deploy take about 2 minutes of the simulator's clock (at
// the tests' time scale), until the clock is moved on.
func slowDeploys(t *testing.T, sim *testSim) {
	t.Helper()
	sim.addFault(t, client.FaultRule{Kind: "machine", Action: "deploy", Mode: "slow", Factor: 20000})
}

// finishDeploys moves the simulator's clock past the slow deploys.
func finishDeploys(t *testing.T, sim *testSim) {
	t.Helper()
	if _, err := sim.Client.AdvanceClock(context.Background(), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// TestAccMachineCreateInterruptedResumes: Ctrl-C (SIGINT to terraform) while a machine
// deploys keeps it in the state, untainted, with a warning; the next apply waits for it and
// carries on, replacing nothing.
func TestAccMachineCreateInterruptedResumes(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	tf, m := interruptMachineCreate(t, sim)
	expectOutput(t, tf.mustRun("state", "show", "-no-color", "lifecycle_machine.m"), `state = "DEPLOYING"`)

	plan := tf.mustRun("plan", "-no-color")
	expectNoOutput(t, plan, `must be replaced`, `will be destroyed`)

	finishDeploys(t, sim)
	apply := tf.mustRun("apply", "-auto-approve", "-no-color")
	expectOutput(t, apply, `0 destroyed`)
	if err := expectSimState(sim, "machines", m.ID, "HALTED"); err != nil {
		t.Error(err)
	}
	expectCount(t, sim, "machines", 1)
}

// interruptMachineCreate applies a machine whose deploy is slowed, sends Ctrl-C once the
// simulator has it DEPLOYING, and checks what every interrupted create must give: a warning, no
// error, and the machine in state, untainted.
func interruptMachineCreate(t *testing.T, sim *testSim) (*tfCLI, client.Object) {
	t.Helper()
	tf := newTFCLI(t, sim.config(machineConfig("HALTED")))
	slowDeploys(t, sim)
	cmd, out := tf.start("apply", "-auto-approve", "-no-color")
	m := sim.waitOne(t, "machines", "DEPLOYING")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Logf("interrupted apply:\n%s", out.String())
	expectOutput(t, out.String(), `Warning: Create of machine interrupted`,
		`kept in the state and not tainted: the next terraform apply waits for it and carries on`)
	expectNoOutput(t, out.String(), `Error creating machine`)
	state := tf.mustRun("state", "show", "-no-color", "lifecycle_machine.m")
	expectNoOutput(t, state, `tainted`)
	expectOutput(t, state, `id = "`+m.ID+`"`)
	return tf, m
}

// TestAccMachineCreateAnswerLostToInterrupt: the simulator makes the machine but the answer to
// its create is still in flight when Ctrl-C cancels it. The provider sends the same create again
// with the same Idempotency-Key, learns the machine's ID, and keeps it in state, untainted: no
// machine is orphaned, and the next apply carries on with it.
func TestAccMachineCreateAnswerLostToInterrupt(t *testing.T) {
	t.Parallel()
	lose := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/v1/machines" && r.URL.Query().Get("wait") != "" {
				// Served, but nothing of the answer reaches the provider until it gives up.
				next.ServeHTTP(httptest.NewRecorder(), r)
				<-r.Context().Done()
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	sim := newTestSim(t, withMiddleware(lose))
	tf, _ := interruptMachineCreate(t, sim)

	finishDeploys(t, sim)
	apply := tf.mustRun("apply", "-auto-approve", "-no-color")
	expectOutput(t, apply, `0 destroyed`)
	expectCount(t, sim, "machines", 1)
}

// TestAccMachineCreateTimedOutResumed: a create that times out is an error, tainted, and says
// so: the next plan replaces the machine, and terraform untaint keeps it instead; the apply
// after that waits for it and carries on with the same machine.
func TestAccMachineCreateTimedOutResumed(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	// The deploy takes minutes (slowDeploys); the timeout leaves room for the create's POST on
	// a loaded machine, whose answer names DEPLOYING (at 1 s it could time out first).
	tf := newTFCLI(t, sim.config(machineConfigWith("HALTED", "  timeouts {\n    create = \"3s\"\n  }")))
	slowDeploys(t, sim)

	out, ok := tf.run("apply", "-auto-approve", "-no-color")
	if ok {
		t.Fatal("the apply should have timed out")
	}
	expectOutput(t, out, `Error creating machine`, `timed out waiting for machine machine-[0-9a-f]+ to reach a static state; last state DEPLOYING`,
		`the next apply destroys this machine and creates a new one`, `terraform untaint ADDRESS`)
	m := sim.waitOne(t, "machines", "DEPLOYING")

	plan := tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `lifecycle_machine.m is tainted, so must be replaced`)

	tf.mustRun("untaint", "-no-color", "lifecycle_machine.m")
	finishDeploys(t, sim)
	apply := tf.mustRun("apply", "-auto-approve", "-no-color")
	expectOutput(t, apply, `0 added, 1 changed, 0 destroyed`)
	if err := expectSimState(sim, "machines", m.ID, "HALTED"); err != nil {
		t.Error(err)
	}
	expectCount(t, sim, "machines", 1)
}

// TestAccMachineStuckWarns: a stop that hangs leaves the machine STOPPING; three minutes
// later (by the simulator's clock) a plan warns that it is stuck, since when and what to do,
// instead of only saying "No changes".
func TestAccMachineStuckWarns(t *testing.T) {
	t.Parallel()
	sim := newTestSim(t)
	tf := newTFCLI(t, sim.config(machineConfig("RUNNING")))
	tf.mustRun("apply", "-auto-approve", "-no-color")
	m := sim.waitOne(t, "machines", "RUNNING")

	sim.addFault(t, client.FaultRule{Kind: "machine", Action: "stop", Mode: "hang"})
	if _, err := sim.Client.Act(context.Background(), "machines", m.ID, "stop", client.ActionRequest{}); err != nil {
		t.Fatal(err)
	}
	plan := tf.mustRun("plan", "-no-color")
	expectNoOutput(t, plan, `is stuck`)

	if _, err := sim.Client.AdvanceClock(context.Background(), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	plan = tf.mustRun("plan", "-no-color")
	expectOutput(t, plan, `Warning: machine `+m.ID+` is stuck in STOPPING`,
		`has been STOPPING \(action "stop"\) since [0-9T:-]+Z, 3m[0-9]+s ago`, `self-healing`, `GET /v1/sim/faults`)
}
