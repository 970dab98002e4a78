package provider

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

const actionAddr = "lifecycle_action.reboot"

// actionConfig is machineConfig(status) plus a lifecycle_action running action on the machine.
func actionConfig(status, action, trigger string) string {
	return machineConfig(status) + `
resource "lifecycle_action" "reboot" {
  kind      = "machine"
  object_id = lifecycle_machine.m.id
  action    = "` + action + `"
  triggers = {
    version = "` + trigger + `"
  }
}
`
}

// countPhases counts how often the object entered a state.
func countPhases(sim *testSim, collection, id, state string) (int, error) {
	evs, err := sim.Client.Events(context.Background(), collection, id)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range evs {
		if e.To == state {
			n++
		}
	}
	return n, nil
}

func expectPhases(sim *testSim, collection string, id *string, state string, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		n, err := countPhases(sim, collection, *id, state)
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("%s %s entered %s %d times, want %d", collection, *id, state, n, want)
		}
		return nil
	}
}

// actionOnStatusConfig is a machine with status and a reboot checked against the machine's
// planned status.
func actionOnStatusConfig(status string) string {
	return machineConfig(status) + `
resource "lifecycle_action" "reboot" {
  kind          = "machine"
  object_id     = lifecycle_machine.m.id
  object_status = lifecycle_machine.m.status
  action        = "reboot"
}
`
}

// TestAccActionOnStatusChangedInTheSameApply: a machine PAUSED now and asked to be RUNNING,
// with a reboot in the same apply: the plan checks the reboot against RUNNING (the planned
// status), and the apply resumes the machine, then reboots it.
func TestAccActionOnStatusChangedInTheSameApply(t *testing.T) {
	sim := newTestSim(t)
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(machineConfig("PAUSED")),
				Check:  captureID(machineAddr, &id),
			},
			{
				Config: sim.config(actionOnStatusConfig("RUNNING")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(actionAddr, plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue(actionAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
				},
				Check: func(*terraform.State) error { return expectActions(sim, "machines", id, "pause", "resume", "reboot") },
			},
		},
	})
}

// TestAccActionDoesNotBlockDestroy: a reboot on a machine asked to be PAUSED cannot run (it
// would land the machine in RUNNING). The apply fails on it; terraform destroy, which plans
// the configuration first, still removes everything.
func TestAccActionDoesNotBlockDestroy(t *testing.T) {
	sim := newTestSim(t)
	var id string
	cfg := sim.config(actionOnStatusConfig("PAUSED"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config:      cfg,
				ExpectError: errorLike(`Error running machine reboot.*is PAUSED.*"reboot" takes it to RUNNING, not back to PAUSED`),
			},
			{
				PreConfig: func() {
					ms := expectCount(t, sim, "machines", 1)
					id = ms[0].ID
				},
				Config:  cfg,
				Destroy: true,
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, "machines", id) },
	})
}

// TestAccActionReboot reboots a running machine (it stays RUNNING, its history shows
// REBOOTING), reboots it again when the triggers change, and rejects at plan time an action
// that does not return the machine where it started and one not allowed from its state.
func TestAccActionReboot(t *testing.T) {
	sim := newTestSim(t)
	var id string
	running := []statecheck.StateCheck{
		statecheck.ExpectKnownValue(actionAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
		statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("RUNNING")),
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config:            sim.config(actionConfig("RUNNING", "reboot", "1")),
				ConfigStateChecks: running,
				Check: resource.ComposeTestCheckFunc(
					captureID(machineAddr, &id),
					expectPhases(sim, "machines", &id, "REBOOTING", 1),
				),
			},
			{
				Config: sim.config(actionConfig("RUNNING", "reboot", "2")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(actionAddr, plancheck.ResourceActionReplace),
					plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: running,
				Check:             expectPhases(sim, "machines", &id, "REBOOTING", 2),
			},
			{
				// stop lands in HALTED: it belongs in the machine's status, not in an action.
				Config:      sim.config(actionConfig("RUNNING", "stop", "2")),
				PlanOnly:    true,
				ExpectError: errorLike(`Action changes the object's status.*machine "stop" does not return the object to the state it started from`),
			},
			{
				Config: sim.config(machineConfig("HALTED")),
			},
			{
				// A halted machine cannot be rebooted: the plan warns (an error would block
				// destroy), the apply fails before it runs the action.
				Config:      sim.config(actionConfig("HALTED", "reboot", "3")),
				ExpectError: errorLike(`Error running machine reboot.*The machine machine-[0-9a-f]+ is HALTED`),
				Check:       expectPhases(sim, "machines", &id, "REBOOTING", 2),
			},
		},
	})
}

func TestReturnsToStart(t *testing.T) {
	tests := []struct {
		name  string
		give  lifecycle.Action
		state string
		want  bool
	}{
		{name: "returns", give: lifecycle.Action{Name: "clone", From: []string{"RUNNING", "HALTED"}, Returns: true}, want: true},
		{name: "returns from a state", give: lifecycle.Action{Name: "clone", From: []string{"RUNNING", "HALTED"}, Returns: true}, state: "HALTED", want: true},
		// reboot lands RUNNING: back where a running machine started, not a paused one.
		{name: "lands in one of its from states", give: lifecycle.Action{Name: "reboot", From: []string{"RUNNING", "PAUSED"}, To: "RUNNING"}, want: true},
		{name: "from the state it lands in", give: lifecycle.Action{Name: "reboot", From: []string{"RUNNING", "PAUSED"}, To: "RUNNING"}, state: "RUNNING", want: true},
		{name: "from another state", give: lifecycle.Action{Name: "reboot", From: []string{"RUNNING", "PAUSED"}, To: "RUNNING"}, state: "PAUSED", want: false},
		{name: "changes the status", give: lifecycle.Action{Name: "stop", From: []string{"RUNNING", "PAUSED"}, To: "HALTED"}, want: false},
		{name: "changes the status from a state", give: lifecycle.Action{Name: "stop", From: []string{"RUNNING", "PAUSED"}, To: "HALTED"}, state: "RUNNING", want: false},
		{name: "only when forced", give: lifecycle.Action{Name: "fix", ForceFrom: []string{"Failed"}, To: "Failed"}, want: true},
		{name: "no target", give: lifecycle.Action{Name: "odd", From: []string{"A"}}, want: false},
		{name: "from any state", give: lifecycle.Action{Name: "delete", FromAny: true, To: "DELETED"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := returnsToStart(&tt.give, tt.state); got != tt.want {
				t.Errorf("returnsToStart(%s, %q) = %v, want %v", tt.give.Name, tt.state, got, tt.want)
			}
		})
	}
}

// TestCheckActionWith: lifecycle_action refuses a machine action that works on another object
// (with: in the spec), saying where it runs instead, and the refusal of an action not allowed
// from a state lists only what lifecycle_action runs from there.
func TestCheckActionWith(t *testing.T) {
	k, err := lifecycle.Builtin().Kind("machine")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ action, from, want string }{
		{"attach_disk", "RUNNING", `"attach_disk" works on another object (a disk)`},
		{"clone", "HALTED", `"clone" works on another object (a machine)`},
		{"create_template", "RUNNING", "POST /v1/machines/{id}/actions/create_template"},
		{"reboot", "HALTED", `allowed: change_disk_limits`},
		{"reboot", "RUNNING", ""},
	}
	for _, tt := range tests {
		a, ok := k.Action(tt.action)
		if !ok {
			t.Fatalf("machine has no %s", tt.action)
		}
		err := checkAction(k, a, tt.from, false)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkAction(%s, %s) = %v, want nil", tt.action, tt.from, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("checkAction(%s, %s) = %v, want %q", tt.action, tt.from, err, tt.want)
		}
	}
}

// TestAccActionFailureRolledBack: a reboot that fails rolls the machine back to RUNNING, where
// it started; the apply still fails, with the simulator's message.
func TestAccActionFailureRolledBack(t *testing.T) {
	sim := newTestSim(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{Config: sim.config(machineConfig("RUNNING"))},
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: "machine", Action: "reboot", Mode: "fail", Count: 1, Message: "hypervisor said no"})
				},
				Config:      sim.config(actionConfig("RUNNING", "reboot", "1")),
				ExpectError: errorLike(`Error running machine reboot.*action "reboot" failed and the object is RUNNING: hypervisor said no`),
			},
		},
	})
}

// TestCheckActionWithAdviceRuns follows the refusal's advice for every machine action that
// works on another object: the POST it names, on a running machine, is accepted and the
// machine comes back to where it started (the seed's transitions that return).
func TestCheckActionWithAdviceRuns(t *testing.T) {
	sim := newTestSim(t)
	k, err := lifecycle.Builtin().Kind("machine")
	if err != nil {
		t.Fatal(err)
	}
	id := runningMachine(t, sim)
	advised := regexp.MustCompile(`POST (/v1/\S+/\{id\}/actions/\S+)\)`)
	n := 0
	for _, a := range k.Actions {
		if a.With == "" {
			continue
		}
		n++
		from := sim.waitStatic(t, "machines", id).State
		err := checkAction(k, &a, from, false)
		m := advised.FindStringSubmatch(fmt.Sprint(err))
		if m == nil {
			t.Errorf("checkAction(%s) = %v, want a POST to run it through the API", a.Name, err)
			continue
		}
		res, err := http.Post(sim.URL+strings.Replace(m[1], "{id}", id, 1), "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Errorf("the advised %s answered %d, want 202", m[1], res.StatusCode)
			continue
		}
		if got := sim.waitStatic(t, "machines", id).State; got != from {
			t.Errorf("after the advised %s the machine is %s, want %s", a.Name, got, from)
		}
	}
	if n == 0 {
		t.Fatal("the machine kind has no action with `with:`: nothing was checked")
	}
}
