package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// actionConfig is an action block's configuration with the given string attributes.
func (p *protoProvider) actionConfig(t *testing.T, typeName string, attrs map[string]string) *tfprotov6.DynamicValue {
	t.Helper()
	s, ok := p.schemas.ActionSchemas[typeName]
	if !ok {
		t.Fatalf("no action %s", typeName)
	}
	return dynamic(t, objectOf(s.Schema.ValueType(), stringValues(attrs)))
}

// planAction runs the PlanAction RPC (terraform plan of an action) and returns its diagnostics.
func (p *protoProvider) planAction(t *testing.T, typeName string, attrs map[string]string) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := p.srv.(tfprotov6.ActionServer).PlanAction(context.Background(), &tfprotov6.PlanActionRequest{
		ActionType: typeName, Config: p.actionConfig(t, typeName, attrs),
	})
	if err != nil {
		t.Fatalf("PlanAction: %v", err)
	}
	return resp.Diagnostics
}

// invokeAction runs the InvokeAction RPC and returns its progress messages and the completed
// event's diagnostics.
func (p *protoProvider) invokeAction(ctx context.Context, t *testing.T, typeName string, attrs map[string]string) (progress []string, diags []*tfprotov6.Diagnostic) {
	t.Helper()
	stream, err := p.srv.(tfprotov6.ActionServer).InvokeAction(ctx, &tfprotov6.InvokeActionRequest{
		ActionType: typeName, Config: p.actionConfig(t, typeName, attrs),
	})
	if err != nil {
		t.Fatalf("InvokeAction: %v", err)
	}
	completed := 0
	for ev := range stream.Events {
		switch e := ev.Type.(type) {
		case tfprotov6.ProgressInvokeActionEventType:
			progress = append(progress, e.Message)
		case tfprotov6.CompletedInvokeActionEventType:
			completed++
			diags = e.Diagnostics
		}
	}
	if completed != 1 {
		t.Errorf("InvokeAction sent %d completed events, want 1", completed)
	}
	return progress, diags
}

// TestActionSchemas: every kind with a resource whose spec has actions that return the object
// to where they started, or repairs, has an action offering exactly those (a machine's
// reboot, not its stop; a cloudlet's fix); lifecycle_object's runs any kind's.
func TestActionSchemas(t *testing.T) {
	p := newProtoProvider(t, newTestSim(t))
	want := map[string]bool{"lifecycle_object": true}
	for _, c := range typedKinds() {
		if len(c.actions) > 0 {
			want["lifecycle_"+c.typeName] = true
		}
	}
	for name := range p.schemas.ActionSchemas {
		if !want[name] {
			t.Errorf("unexpected action %s", name)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("no action %s", name)
	}
	for _, c := range typedKinds() {
		if c.kind == "machine" && (!strings.Contains(strings.Join(c.actions, " "), "reboot") || strings.Contains(strings.Join(c.actions, " "), "stop")) {
			t.Errorf("machine actions = %v, want reboot and not stop", c.actions)
		}
		if c.kind == "machine" {
			// Those that work on another object (with: in the spec) would do nothing here.
			for _, a := range []string{"add_disk", "attach_disk", "detach_disk", "delete_disk", "clone", "create_template"} {
				if slices.Contains(c.actions, a) {
					t.Errorf("machine actions = %v, offer %s, which needs another object", c.actions, a)
				}
			}
		}
		if c.kind == "cloudlet" && !strings.Contains(strings.Join(c.actions, " "), "fix") {
			t.Errorf("cloudlet actions = %v, want the fix repair", c.actions)
		}
	}
}

// TestActionReboot invokes lifecycle_machine's reboot as `terraform apply -invoke` does: the
// plan checks it against the machine's state; the invoke reboots a RUNNING machine, reporting
// progress, and refuses a HALTED one before running anything, naming the allowed actions,
// even when the plan was told it would be RUNNING.
func TestActionReboot(t *testing.T) {
	sim := newTestSim(t)
	p := newProtoProvider(t, sim)
	ctx := context.Background()
	running := sim.makeObject(t, "machine", "running")
	halted := sim.makeObject(t, "machine", "halted")
	sim.act(t, "machines", halted.ID, "stop")
	sim.waitStatic(t, "machines", halted.ID)

	if d := p.planAction(t, "lifecycle_machine", map[string]string{"id": running.ID, "action": "reboot"}); len(d) > 0 {
		t.Errorf("plan reboot of a RUNNING machine: %s", diagText(d))
	}
	progress, d := p.invokeAction(ctx, t, "lifecycle_machine", map[string]string{"id": running.ID, "action": "reboot"})
	if len(d) > 0 {
		t.Fatalf("invoke reboot of a RUNNING machine: %s", diagText(d))
	}
	if err := expectActions(sim, "machines", running.ID, "reboot"); err != nil {
		t.Error(err)
	}
	if err := expectSimState(sim, "machines", running.ID, "RUNNING"); err != nil {
		t.Error(err)
	}
	all := strings.Join(progress, "\n")
	if !strings.Contains(all, "running reboot from RUNNING") || !strings.Contains(all, "reboot done, RUNNING after") {
		t.Errorf("progress messages:\n%s\nwant the start and the end of the reboot", all)
	}

	before, _ := operations(sim, "machines", halted.ID)
	d = p.planAction(t, "lifecycle_machine", map[string]string{"id": halted.ID, "action": "reboot"})
	if !hasError(d) || !strings.Contains(diagText(d), `"reboot" is not allowed from state HALTED; allowed: `) {
		t.Errorf("plan reboot of a HALTED machine: %s, want a refusal naming the allowed actions", diagText(d))
	}
	if err := allowedRunnable(diagText(d)); err != nil {
		t.Errorf("plan reboot of a HALTED machine: %v", err)
	}
	if d := p.planAction(t, "lifecycle_machine", map[string]string{"id": halted.ID, "action": "reboot", "object_status": "RUNNING"}); len(d) > 0 {
		t.Errorf("plan reboot of a machine that will be RUNNING: %s", diagText(d))
	}
	_, d = p.invokeAction(ctx, t, "lifecycle_machine", map[string]string{"id": halted.ID, "action": "reboot", "object_status": "RUNNING"})
	if !hasError(d) || !strings.Contains(diagText(d), "is HALTED") || !strings.Contains(diagText(d), "allowed: ") || !strings.Contains(diagText(d), "Nothing was run") {
		t.Errorf("invoke reboot of a HALTED machine: %s, want a refusal naming the allowed actions", diagText(d))
	}
	if err := allowedRunnable(diagText(d)); err != nil {
		t.Errorf("invoke reboot of a HALTED machine: %v", err)
	}
	if after, _ := operations(sim, "machines", halted.ID); len(after) != len(before) {
		t.Errorf("operations on the HALTED machine went from %v to %v: something ran", before, after)
	}

	tests := []struct {
		name, typeName string
		give           map[string]string
		want           string
	}{
		{"not offered", "lifecycle_object", map[string]string{"kind": "machine", "id": running.ID, "action": "stop"}, "Action not offered"},
		{"needs a disk", "lifecycle_object", map[string]string{"kind": "machine", "id": running.ID, "action": "attach_disk"}, "Action not offered"},
		{"makes a machine", "lifecycle_object", map[string]string{"kind": "machine", "id": running.ID, "action": "clone"}, "Action not offered"},
		{"unknown kind", "lifecycle_object", map[string]string{"kind": "nonesuch", "id": running.ID, "action": "reboot"}, "Unknown kind"},
		{"missing object", "lifecycle_machine", map[string]string{"id": "machine-0000000000000000", "action": "reboot"}, "No machine has the ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := p.planAction(t, tt.typeName, tt.give); !strings.Contains(diagText(d), tt.want) {
				t.Errorf("plan %s %v: %s, want %q", tt.typeName, tt.give, diagText(d), tt.want)
			}
		})
	}
}

// allowedRunnable checks that the "allowed:" list of an action block's refusal names only
// actions an action block runs: not start, delete or destroy, which it rejects as not offered.
func allowedRunnable(text string) error {
	i := strings.LastIndex(text, "; allowed: ")
	if i < 0 {
		return fmt.Errorf("no allowed list in %q", text)
	}
	list, _, _ := strings.Cut(text[i+len("; allowed: "):], ".")
	for _, name := range strings.Split(list, ", ") {
		if slices.Contains([]string{"start", "delete", "destroy"}, name) {
			return fmt.Errorf("allowed list %q names %s, which an action block does not run", list, name)
		}
	}
	return nil
}

// TestActionWaits covers how an invoked action ends other than well: a slow action reports
// the state and the time elapsed while it waits; one that fails carries the simulator's
// message; one that outlives its timeout says so with the last state (TestActionInterrupted
// covers Ctrl-C); a repair takes a cloudlet out of its error state through lifecycle_object.
func TestActionWaits(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 20 * time.Millisecond
	sim := newTestSim(t)
	p := newProtoProvider(t, sim)
	ctx := context.Background()
	m := sim.makeObject(t, "machine", "m")

	sim.addFault(t, client.FaultRule{Kind: "machine", Action: "reboot", Mode: "slow", Factor: 200, Count: 1})
	progress, d := p.invokeAction(ctx, t, "lifecycle_machine", map[string]string{"id": m.ID, "action": "reboot"})
	if len(d) > 0 {
		t.Fatalf("slow reboot: %s", diagText(d))
	}
	if all := strings.Join(progress, "\n"); !strings.Contains(all, m.ID+" is REBOOTING (") || !strings.Contains(all, "elapsed)") {
		t.Errorf("progress of a slow reboot:\n%s\nwant the state and the time elapsed", all)
	}

	sim.addFault(t, client.FaultRule{Kind: "machine", Action: "reboot", Mode: "fail", Message: "hypervisor said no", Count: 1})
	_, d = p.invokeAction(ctx, t, "lifecycle_machine", map[string]string{"id": m.ID, "action": "reboot"})
	if !hasError(d) || !strings.Contains(diagText(d), `action "reboot" failed and the object is RUNNING: hypervisor said no`) {
		t.Errorf("failed reboot: %s, want the simulator's message", diagText(d))
	}
	sim.waitStatic(t, "machines", m.ID)

	sim.addFault(t, client.FaultRule{Kind: "machine", Action: "reboot", Mode: "hang", Count: 1})
	// The hang runs the wait to its deadline, which must leave room for the read and the
	// action's answer on a loaded machine (at 300 ms the last state could still be unknown).
	_, d = p.invokeAction(ctx, t, "lifecycle_machine", map[string]string{"id": m.ID, "action": "reboot", "timeout": "2s"})
	if !hasError(d) || !strings.Contains(diagText(d), "timed out waiting for machine "+m.ID) || !strings.Contains(diagText(d), "last state REBOOTING") {
		t.Errorf("hung reboot with a timeout: %s, want a timeout naming the last state", diagText(d))
	}

	// A failed upgrade leaves a cloudlet in UpdateError; fix, a repair, takes it back to Ready
	// (run here through lifecycle_object, which serves any kind).
	cl := sim.makeObject(t, "cloudlet", "cl")
	sim.addFault(t, client.FaultRule{Kind: "cloudlet", Action: "upgrade", Mode: "fail", Count: 1, Message: "CRMv2 bringup failed"})
	_, d = p.invokeAction(ctx, t, "lifecycle_cloudlet", map[string]string{"id": cl.ID, "action": "upgrade"})
	if !hasError(d) || !strings.Contains(diagText(d), "UpdateError: CRMv2 bringup failed") {
		t.Errorf("failed upgrade: %s, want the cloudlet in UpdateError with the CRM's message", diagText(d))
	}
	if d := p.planAction(t, "lifecycle_object", map[string]string{"kind": "cloudlet", "id": cl.ID, "action": "fix"}); len(d) > 0 {
		t.Errorf("plan fix of a cloudlet in UpdateError: %s", diagText(d))
	}
	if _, d = p.invokeAction(ctx, t, "lifecycle_object", map[string]string{"kind": "cloudlet", "id": cl.ID, "action": "fix"}); len(d) > 0 {
		t.Errorf("fix: %s", diagText(d))
	}
	if err := expectSimState(sim, "cloudlets", cl.ID, "Ready"); err != nil {
		t.Error(err)
	}
}

// TestUserKindListAndAction: a user-defined kind (LIFECYCLE_KINDS) gets its list resource,
// identity and action by the same derivation as the built-in kinds: a certificate made through
// the API is listed with its identity, and renew (which returns it to ISSUED) is its action;
// revoke, which leaves it REVOKED, is not offered.
func TestUserKindListAndAction(t *testing.T) {
	u := loadUserKindFiles(userKindsEnv, filepath.Join("..", "examples", "resources", "lifecycle_object", "certificates.yaml"))
	if u.err != nil {
		t.Fatal(u.err)
	}
	sim := newTestSim(t, simtest.WithKinds(u.kinds...))
	p := newProtoProviderOf(t, sim, &lifecycleProvider{version: "test", user: u})
	ctx := context.Background()
	o, err := sim.Client.Create(ctx, "certificates", client.CreateRequest{Name: "www"})
	if err != nil {
		t.Fatal(err)
	}
	o = sim.waitStatic(t, "certificates", o.ID)

	got := p.list(t, "lifecycle_certificate", map[string]string{"state": "ISSUED"}, true, 0)
	if len(got) != 1 || got[0].DisplayName != "www" {
		t.Fatalf("list lifecycle_certificate = %v, want www", displayNames(got))
	}
	if id := attrsOf(t, got[0].Identity.IdentityData, p.identityType(t, "lifecycle_certificate")); id["id"] != o.ID {
		t.Errorf("identity = %v, want id %s", id, o.ID)
	}
	if st := attrsOf(t, got[0].Resource, p.schemas.ResourceSchemas["lifecycle_certificate"].ValueType()); st["status"] != "ISSUED" || st["name"] != "www" {
		t.Errorf("listed resource = %v, want www ISSUED", st)
	}
	if _, d := p.invokeAction(ctx, t, "lifecycle_certificate", map[string]string{"id": o.ID, "action": "renew"}); len(d) > 0 {
		t.Fatalf("renew: %s", diagText(d))
	}
	if err := expectActions(sim, "certificates", o.ID, "renew"); err != nil {
		t.Error(err)
	}
	if d := p.planAction(t, "lifecycle_certificate", map[string]string{"id": o.ID, "action": "revoke"}); !strings.Contains(diagText(d), "Action not offered") {
		t.Errorf("plan revoke: %s, want it not offered", diagText(d))
	}
}

// TestActionInterrupted stops the provider in the middle of an invoked action as Terraform
// does on Ctrl-C, through the server main serves: StopProvider, then the end of the RPC's
// context (terraform-plugin-go's server ends it when StopProvider returns and from then on
// drops the action's events, completed one included: tf6server.InvokeAction). The completed
// event must still arrive, promptly, with an error saying that the action was interrupted,
// whether it had started, the last state seen and what to do; the simulator carries on.
func TestActionInterrupted(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 20 * time.Millisecond
	sim := newTestSim(t)
	p := newProtoProvider(t, sim)

	tests := []struct {
		name string
		// setup leaves the machine so that the reboot waits in it; it returns the state.
		setup func(t *testing.T, id string) string
		// announced: the invoke reports the state before it is stopped.
		announced bool
		want      []string
		wantState string   // where the machine stays
		wantSteps []string // the machine's last operations afterwards
	}{
		{
			name: "while the action runs",
			setup: func(t *testing.T, id string) string {
				sim.addFault(t, client.FaultRule{Kind: "machine", Action: "reboot", Mode: "hang", Count: 1})
				return "REBOOTING"
			},
			announced: true,
			wantState: "REBOOTING",
			want:      []string{"Interrupted: machine reboot", "while the machine %s ran reboot (last state seen: REBOOTING)", "carries the action on", "invoke the action again"},
			wantSteps: []string{"deploy", "reboot"},
		},
		{
			name: "before the action starts",
			setup: func(t *testing.T, id string) string {
				sim.addFault(t, client.FaultRule{Kind: "machine", Action: "stop", Mode: "hang", Count: 1})
				if _, err := sim.Client.Act(t.Context(), "machines", id, "stop", client.ActionRequest{}); err != nil {
					t.Fatal(err)
				}
				return "STOPPING"
			},
			wantState: "STOPPING",
			want:      []string{"Interrupted: machine reboot", "before reboot started", "machine %s to be static (last state seen: STOPPING). Nothing was run."},
			wantSteps: []string{"deploy", "stop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sim.makeObject(t, "machine", "m")
			state := tt.setup(t, m.ID)
			if !tt.announced {
				// Nothing tells when the provider holds a long-poll: stop it at once (before the
				// action starts, whatever it is doing).
				state = ""
			}

			// ctx is the RPC's context as terraform-plugin-go's server makes it (stoppable).
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			stream, err := p.srv.(tfprotov6.ActionServer).InvokeAction(ctx, &tfprotov6.InvokeActionRequest{
				ActionType: "lifecycle_machine",
				Config:     p.actionConfig(t, "lifecycle_machine", map[string]string{"id": m.ID, "action": "reboot"}),
			})
			if err != nil {
				t.Fatal(err)
			}
			waiting := make(chan struct{})
			if state == "" {
				close(waiting)
			}
			completed := make(chan []*tfprotov6.Diagnostic, 1)
			go func() {
				announced := state == ""
				for ev := range stream.Events {
					select {
					case <-ctx.Done():
						return // what tf6server does: nothing more is sent once stopped
					default:
					}
					switch e := ev.Type.(type) {
					case tfprotov6.ProgressInvokeActionEventType:
						if !announced && strings.Contains(e.Message, m.ID+" is "+state) {
							announced = true
							close(waiting)
						}
					case tfprotov6.CompletedInvokeActionEventType:
						completed <- e.Diagnostics
					}
				}
			}()
			select {
			case <-waiting:
			case <-time.After(30 * time.Second):
				t.Fatalf("the invoke never reported the machine %s", tt.wantState)
			}

			start := time.Now()
			if _, err := p.srv.StopProvider(context.Background(), &tfprotov6.StopProviderRequest{}); err != nil {
				t.Fatal(err)
			}
			stop() // terraform-plugin-go ends the RPC's context once StopProvider returns
			var d []*tfprotov6.Diagnostic
			select {
			case d = <-completed:
			case <-time.After(5 * time.Second):
				t.Fatal("no completed event: the interrupted action's error was dropped (Terraform would report Apply complete!)")
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("StopProvider and the completed event took %v", took)
			}
			text := diagText(d)
			if !hasError(d) {
				t.Errorf("interrupted reboot: %s, want an error", text)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "%s", m.ID); !strings.Contains(text, w) {
					t.Errorf("interrupted reboot:\n%s\nwant %q", text, w)
				}
			}
			if err := expectSimState(sim, "machines", m.ID, tt.wantState); err != nil {
				t.Error(err)
			}
			if err := expectActions(sim, "machines", m.ID, tt.wantSteps...); err != nil {
				t.Error(err)
			}
		})
	}
}
