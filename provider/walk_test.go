package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

func TestLastError(t *testing.T) {
	tests := []struct {
		name string
		give *client.Object
		want string
	}{
		{name: "nil object", give: nil, want: ""},
		{name: "no status", give: &client.Object{}, want: ""},
		{name: "no last error", give: &client.Object{Status: map[string]any{"other": 1}}, want: ""},
		{
			name: "message and state",
			give: &client.Object{Status: map[string]any{"last_error": map[string]any{"message": "hypervisor said no", "state": "STOPPING"}}},
			want: "hypervisor said no (failed in STOPPING)",
		},
		{
			name: "message only",
			give: &client.Object{Status: map[string]any{"last_error": map[string]any{"message": "disk full"}}},
			want: "disk full",
		},
		{name: "not an object", give: &client.Object{Status: map[string]any{"last_error": "oops"}}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lastError(tt.give); got != tt.want {
				t.Errorf("lastError(%v) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestStepErrorNamesStateAndCause(t *testing.T) {
	err := &stepError{kind: "machine", id: "machine-1", action: "stop", want: "HALTED", obj: &client.Object{
		State: "RUNNING", Status: map[string]any{"last_error": map[string]any{"message": "hypervisor said no", "state": "STOPPING"}},
	}}
	want := `machine machine-1: action "stop" should have ended in HALTED but the object is RUNNING: hypervisor said no (failed in STOPPING)`
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestExplain(t *testing.T) {
	transition := &client.Error{Status: 422, Code: client.CodeInvalidTransition, Message: `machine: "start" is not allowed from RUNNING`,
		Details: json.RawMessage(`{"kind":"machine","state":"RUNNING","action":"start","allowed":["pause","stop"]}`)}
	tests := []struct {
		name string
		give error
		// want are substrings of the explanation, in order; not, substrings it must not hold.
		want, not []string
	}{
		{
			name: "invalid transition lists what is allowed now",
			give: fmt.Errorf("start machine-1: %w", transition),
			want: []string{`"start" is not allowed from RUNNING`, "actions allowed from RUNNING now: pause, stop", "Run terraform plan again"},
		},
		{
			name: "a removal refused while other objects use it names create_before_destroy",
			give: &client.Error{Status: 422, Code: client.CodeInvalidTransition, Message: "tram t-1 is in use by 1 objects that name it",
				Details: json.RawMessage(`{"kind":"tram","state":"READY","action":"scrap","allowed":[],"in_use_by":["relay-1"]}`)},
			want: []string{"is in use by 1 objects", "The objects named above still use it", "create_before_destroy = true"},
		},
		{
			name: "a removal refused for its children names them, the parent's attribute to refer to, and deleting them",
			give: fmt.Errorf("delete cloudlet-1: %w", &client.Error{Status: 422, Code: client.CodeInvalidTransition,
				Message: "cloudlet cloudlet-1 still has 1 cluster_inst objects: delete them first: cluster_inst ci-1 (Ready)",
				Details: json.RawMessage(`{"kind":"cloudlet","state":"Ready","action":"delete","allowed":[],` +
					`"dependents":[{"id":"ci-1","kind":"cluster_inst","name":"k8s","state":"Ready","via":"parent_id"}]}`)}),
			want: []string{"still has 1 cluster_inst objects", "The cloudlet was not deleted", `cluster_inst ci-1 ("k8s", Ready)`,
				"set their cloudlet_id (parent_id in lifecycle_object) to a reference to this resource's id, such as lifecycle_cloudlet.NAME.id", "not the ID written out",
				"delete them first", "Then run the same terraform command again."},
			not: []string{"plan again", "changed since the plan", "create_before_destroy"},
		},
		{
			name: "a removal refused for objects that name it says which field, create_before_destroy and deleting them",
			give: &client.Error{Status: 422, Code: client.CodeInvalidTransition, Message: "cluster_template ct-1 is in use by 1 objects",
				Details: json.RawMessage(`{"kind":"cluster_template","state":"Active","action":"delete","allowed":[],"in_use_by":["c-1"],` +
					`"dependents":[{"id":"c-1","kind":"cluster","name":"c1","state":"Active","via":"cluster_template_id"}]}`)},
			want: []string{"is in use by 1 objects", "The cluster_template was not deleted", `cluster c-1 ("c1", Active) by its cluster_template_id`,
				"set their cluster_template_id (its spec key in lifecycle_object) to a reference to this resource's id, such as lifecycle_cluster_template.NAME.id",
				"create_before_destroy = true", "delete them first (or, where their field can change, make them name another cluster_template)"},
			not: []string{"plan again", "changed since the plan"},
		},
		{
			name: "invalid transition without details",
			give: &client.Error{Status: 422, Code: client.CodeInvalidTransition, Message: "no"},
			want: []string{"no", "The object changed since the plan. Run terraform plan again."},
		},
		{
			name: "unauthorized names the token setting",
			give: &client.Error{Status: 401, Code: client.CodeUnauthorized, Message: "bad token"},
			want: []string{"bad token", "LIFECYCLE_TOKEN"},
		},
		{
			name: "busy says to apply again",
			give: &client.Error{Status: 409, Code: client.CodeBusy, Message: "busy"},
			want: []string{"Another action is running on the object; apply again"},
		},
		{
			name: "step error keeps the object",
			give: fmt.Errorf("wrapped: %w", &stepError{kind: "machine", id: "m", action: "stop", want: "HALTED", obj: &client.Object{State: "RUNNING"}}),
			want: []string{"should have ended in HALTED", "The object is kept in the state"},
		},
		{
			name: "other errors pass through",
			give: errors.New("connection refused"),
			want: []string{"connection refused"},
		},
		{
			name: "not found has no advice",
			give: &client.Error{Status: 404, Code: client.CodeNotFound, Message: "gone"},
			want: []string{"gone"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := explain(tt.give)
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("explain(%v) = %q, want it to contain %q (in order)", tt.give, got, w)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("explain(%v) = %q, want no %q", tt.give, got, n)
				}
			}
		})
	}
}

// TestWaitTimeoutNamesLastState: a wait that times out names the state the object is stuck
// in and says how to recover.
func TestWaitTimeoutNamesLastState(t *testing.T) {
	sim := newTestSim(t)
	sim.addFault(t, client.FaultRule{Kind: "node", Action: "update", Mode: "hang"})
	ctx := context.Background()
	o, err := sim.Client.Create(ctx, "nodes", client.CreateRequest{Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Client.Act(ctx, "nodes", o.ID, "update", client.ActionRequest{}); err != nil {
		t.Fatal(err)
	}
	k, err := lifecycle.Builtin().Kind("node")
	if err != nil {
		t.Fatal(err)
	}
	w := &walker{c: sim.Client, k: k, id: o.ID}
	// The update hangs, so the wait always runs to its deadline: long enough for the first
	// read to come back on a loaded machine (300 ms was not, and the last state was unknown).
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	got, err := w.wait(ctx)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait() = %v, %v; want a deadline error", got, err)
	}
	if got == nil || got.State != "UPDATING" {
		t.Errorf("wait() object = %+v, want the last one seen (UPDATING)", got)
	}
	for _, want := range []string{"timed out waiting for node " + o.ID, "last state UPDATING", "raise the resource's timeouts"} {
		if !strings.Contains(explain(err), want) {
			t.Errorf("explain(wait() error) = %q, want it to contain %q", explain(err), want)
		}
	}
	// A create that timed out says the next apply replaces it, and how to keep it instead.
	node, _ := builtinKinds.Kind("node")
	created := explain(&createTimeoutError{err: err, advice: advise(situation{k: node, event: evCreateFailed, timedOut: true}).text})
	for _, want := range []string{"last state UPDATING", "the next apply destroys this node and creates a new one", "terraform untaint ADDRESS"} {
		if !strings.Contains(created, want) {
			t.Errorf("explain(create timeout) = %q, want it to contain %q", created, want)
		}
	}
}

// TestWaitInterruptedSaysKept: a wait, or an action's request, cancelled by Ctrl-C says the
// object is kept and resumed.
func TestWaitInterruptedSaysKept(t *testing.T) {
	tests := []struct {
		name string
		give *waitError
		want string
	}{
		{"a wait", &waitError{kind: "machine", id: "machine-1", last: "DEPLOYING", err: context.Canceled},
			"interrupted while waiting for machine machine-1 (last state DEPLOYING)"},
		{"an action's request", &waitError{kind: "machine", id: "machine-1", last: "HALTED", action: "start",
			err: fmt.Errorf("POST giving up: %w", context.Canceled)},
			"interrupted while asking machine machine-1 to start (last state HALTED)"},
	}
	for _, tt := range tests {
		got := explain(fmt.Errorf("wrapped: %w", tt.give))
		for _, want := range []string{tt.want, "The object is kept in the state: the next apply waits for it and carries on"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: explain() = %q, want it to contain %q", tt.name, got, want)
			}
		}
	}
}

func TestParentErrorAdvice(t *testing.T) {
	cloudspace, _ := builtinKinds.Kind("cloudspace")
	err := newParentError("machine", "stop", cloudspace, "cs-1", "DISABLED", []string{"DEPLOYED"})
	got := explain(err)
	for _, want := range []string{`machine action "stop" needs its cloudspace cs-1 to be DEPLOYED, but it is DISABLED`, "Change the cloudspace's status to DEPLOYED first"} {
		if !strings.Contains(got, want) {
			t.Errorf("explain() = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "changed since the plan") {
		t.Errorf("explain() = %q blames a change since the plan", got)
	}
}

// TestParentErrorInErrorState: a blocker in an error state (a cloudlet in UpdateError) is
// named with the repair that leaves it, not a status to change.
func TestParentErrorInErrorState(t *testing.T) {
	cloudlet, _ := builtinKinds.Kind("cloudlet")
	err := newParentError("app_inst", "update", cloudlet, "cloudlet-1", "UpdateError", []string{"Ready"})
	got := explain(fmt.Errorf("changing configs: %w", err))
	for _, want := range []string{`app_inst action "update" needs its cloudlet cloudlet-1 to be Ready, but it is UpdateError`,
		"only a repair leaves: run its `fix` action from Terraform", "Once it is Ready again"} {
		if !strings.Contains(got, want) {
			t.Errorf("explain() = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "status") {
		t.Errorf("explain() = %q tells to change a status the cloudlet does not have", got)
	}
}

func TestHTTPLogFields(t *testing.T) {
	got := fields([]any{"method", "GET", "url", "http://x/v1", 3, "skipped", "dangling"})
	want := map[string]any{"method": "GET", "url": "http://x/v1"}
	if !maps.Equal(got, want) {
		t.Errorf("fields() = %v, want %v", got, want)
	}
}

// TestHTTPLogLevelFromEnv: TF_LOG_PROVIDER_LIFECYCLE_HTTP sets the level of the HTTP lines
// apart from the provider's own.
func TestHTTPLogLevelFromEnv(t *testing.T) {
	for _, tt := range []struct {
		level     string
		wantDebug bool
	}{{"DEBUG", true}, {"WARN", false}} {
		t.Run(tt.level, func(t *testing.T) {
			t.Setenv(providerLoggerEnv+"_HTTP", tt.level)
			var out bytes.Buffer
			l := newHTTPLogger(tflogtest.RootLogger(t.Context(), &out))
			l.Debug("performing request", "method", "GET")
			l.Warn("retrying request", "remaining", 3)
			lines, err := tflogtest.MultilineJSONDecode(&out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range lines {
				got = append(got, fmt.Sprint(line["@message"]))
			}
			want := []string{"retrying request"}
			if tt.wantDebug {
				want = []string{"performing request", "retrying request"}
			}
			if !slices.Equal(got, want) {
				t.Errorf("at %s the HTTP logger wrote %q, want %q", tt.level, got, want)
			}
		})
	}
}

func TestStuckWarning(t *testing.T) {
	k, err := lifecycle.Builtin().Kind("machine")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name      string
		started   time.Duration // after t0
		due       time.Time
		readAfter time.Duration // after the start; the server's Date header keeps whole seconds
		wantStuck bool
		wantAgo   string
	}{
		{"on time", 0, t0.Add(2 * time.Second), 30 * time.Second, false, ""},
		{"overdue", 0, t0.Add(2 * time.Second), 5 * time.Minute, true, "5m0s ago"},
		{"hung, young", 0, time.Time{}, 30 * time.Second, false, ""},
		{"hung, old", 0, time.Time{}, 3 * time.Minute, true, "3m0s ago"},
		// Started at 03:04:05.9, read 3m0.05s later (03:07:05.95, a Date of 03:07:05): the two
		// times are compared in whole seconds, not as 2m59.1s.
		{"hung, started within a second", 900 * time.Millisecond, time.Time{}, 3*time.Minute + 50*time.Millisecond, true, "3m0s ago"},
	}
	for _, tt := range tests {
		start := t0.Add(tt.started)
		o := &client.Object{ID: "machine-1", State: "STOPPING", ReadAt: start.Add(tt.readAfter).Truncate(time.Second),
			Operation: &client.Operation{Action: "stop", From: "RUNNING", Phase: "STOPPING", PhaseStartedAt: start, DueAt: tt.due}}
		got := stuckWarning(k, o)
		if (got != "") != tt.wantStuck {
			t.Errorf("%s: stuckWarning() = %q, want stuck %v", tt.name, got, tt.wantStuck)
		}
		if tt.wantStuck && !strings.Contains(got, "since 2026-01-02T03:04:05Z, "+tt.wantAgo) {
			t.Errorf("%s: stuckWarning() = %q, want it to say since when and %q", tt.name, got, tt.wantAgo)
		}
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ give, want string }{
		{"Defaults to `30s`.", "Defaults to 30s."},
		{"See [the built-ins](lifecycle/specs/) and **not** `x`.", "See the built-ins and not x."},
		{"plain", "plain"},
	}
	for _, tt := range tests {
		if got := plainText(tt.give); got != tt.want {
			t.Errorf("plainText(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// deployedCloudspace creates a cloudspace (and its account) and waits until it is deployed.
func deployedCloudspace(t *testing.T, sim *testSim) string {
	t.Helper()
	ctx := context.Background()
	acct, err := sim.Client.Create(ctx, "accounts", client.CreateRequest{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sim.Client.Create(ctx, "cloudspaces", client.CreateRequest{Name: "cs", ParentID: acct.ID})
	if err != nil {
		t.Fatal(err)
	}
	sim.waitStatic(t, "cloudspaces", cs.ID)
	return cs.ID
}

// runningMachine creates a machine in a new cloudspace and waits until it runs.
func runningMachine(t *testing.T, sim *testSim) string {
	t.Helper()
	m, err := sim.Client.Create(context.Background(), "machines", client.CreateRequest{
		Name: "m", ParentID: deployedCloudspace(t, sim), Spec: map[string]any{"image_id": "image-1"}})
	if err != nil {
		t.Fatal(err)
	}
	sim.waitStatic(t, "machines", m.ID)
	return m.ID
}

// TestConvergeFromPlannedState: an update walks from the state the plan saw without reading
// the object first (one request a step: the action, answered again once it landed), and from
// where the object is when it has moved.
func TestConvergeFromPlannedState(t *testing.T) {
	kinds := lifecycle.Builtin()
	k, err := kinds.Kind("machine")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// moveTo are actions run on the running machine before the walk (out of band, when
		// seen is not where they lead).
		moveTo   []string
		seen     string
		desired  string
		want     string
		requests int
	}{
		{name: "as planned", seen: "RUNNING", desired: "HALTED", want: "HALTED", requests: 1},
		{name: "two steps as planned", seen: "HALTED", desired: "PAUSED", moveTo: []string{"stop"}, want: "PAUSED", requests: 2},
		// The refused pause (1), the reads that tell the parent is not the reason (2), a wait
		// (1), then start and pause (2).
		{name: "moved: refused, then walked from where it is", seen: "RUNNING", desired: "PAUSED", moveTo: []string{"stop"}, want: "PAUSED", requests: 6},
		{name: "moved: ran from where it is", seen: "PAUSED", desired: "HALTED", want: "HALTED", requests: 1},
		{name: "nothing to do reads it once", seen: "RUNNING", desired: "RUNNING", want: "RUNNING", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter := &requestCounter{n: map[string]int{}}
			sim := newTestSim(t, withMiddleware(counter.middleware))
			id := runningMachine(t, sim)
			for _, a := range tt.moveTo {
				sim.act(t, "machines", id, a)
			}
			counter.reset()
			w := &walker{c: sim.Client, k: k, id: id, poll: client.WaitOptions{PollTimeout: 5 * time.Second}, kinds: kinds}
			o, err := w.convergeFrom(context.Background(), nil, tt.seen, tt.desired)
			if err != nil {
				t.Fatalf("convergeFrom(%s, %s) = %v", tt.seen, tt.desired, err)
			}
			if o.State != tt.want {
				t.Errorf("convergeFrom(%s, %s) ended in %s, want %s", tt.seen, tt.desired, o.State, tt.want)
			}
			if got := counter.count(""); got != tt.requests {
				t.Errorf("convergeFrom(%s, %s) sent %d requests (%v), want %d", tt.seen, tt.desired, got, counter.n, tt.requests)
			}
		})
	}
}

// TestRemoveFromPlannedState: a delete asks at once when the plan saw the object where the
// mode's first request runs (then one request a step: each is answered again once the object
// is static or gone), and goes from where the object is when it has moved.
func TestRemoveFromPlannedState(t *testing.T) {
	kinds := lifecycle.Builtin()
	tests := []struct {
		name, kind, mode, seen string
		// moveTo are actions run on the new object before the walk.
		moveTo   []string
		requests int
	}{
		{name: "destroy as planned", kind: "machine", mode: "destroy", seen: "RUNNING", requests: 1},
		{name: "delete as planned", kind: "machine", mode: "delete", seen: "RUNNING", requests: 1},
		{name: "delete of one deleted since the plan", kind: "machine", mode: "delete", seen: "RUNNING", moveTo: []string{"delete"}, requests: 1},
		{name: "unknown state reads first", kind: "machine", mode: "destroy", seen: "", requests: 2},
		// delete (POST), then destroy (DELETE), each answered again once it landed.
		{name: "two steps as planned", kind: "cloudspace", mode: "destroy", seen: "DEPLOYED", requests: 2},
		// The refused delete, a read, then destroy (DELETE, answered again once gone).
		{name: "two steps, one done since the plan", kind: "cloudspace", mode: "destroy", seen: "DEPLOYED", moveTo: []string{"delete"}, requests: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := kinds.Kind(tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			counter := &requestCounter{n: map[string]int{}}
			sim := newTestSim(t, withMiddleware(counter.middleware))
			var id string
			if tt.kind == "cloudspace" {
				id = deployedCloudspace(t, sim)
			} else {
				id = runningMachine(t, sim)
			}
			for _, a := range tt.moveTo {
				sim.act(t, k.Collection, id, a)
			}
			counter.reset()
			w := &walker{c: sim.Client, k: k, id: id, poll: client.WaitOptions{PollTimeout: 5 * time.Second}, kinds: kinds}
			if err := w.remove(context.Background(), tt.mode, tt.seen); err != nil {
				t.Fatalf("remove(%s, %q) = %v", tt.mode, tt.seen, err)
			}
			if got := counter.count(""); got != tt.requests {
				t.Errorf("remove(%s, %q) sent %d requests (%v), want %d", tt.mode, tt.seen, got, counter.n, tt.requests)
			}
			if _, err := sim.Client.Get(context.Background(), k.Collection, id); tt.mode == "destroy" && !client.IsNotFound(err) {
				t.Errorf("after remove(destroy) the %s is still there (get: %v)", tt.kind, err)
			}
		})
	}
}

// TestRemoving: an object is being removed in the phases of an action that leaves it gone, and
// in no other state (a failed delete's phase included).
func TestRemoving(t *testing.T) {
	reg := lifecycle.Builtin()
	tests := []struct {
		kind, state string
		want        bool
	}{
		{"cluster", "Deleting", true},
		{"cluster", "Active", false},
		{"cluster", "Scaling", false},
		{"cluster_inst", "DeletePrepare", true},
		{"cluster_inst", "Deleting", true},
		{"cluster_inst", "DeleteError", false},
		{"cluster_inst", "Ready", false},
		{"machine", "STOPPING", false},
	}
	for _, tt := range tests {
		k, err := reg.Kind(tt.kind)
		if err != nil {
			t.Fatal(err)
		}
		if got := removing(k, tt.state); got != tt.want {
			t.Errorf("removing(%s, %q) = %v, want %v", tt.kind, tt.state, got, tt.want)
		}
	}
}

// TestDependentsOf: the dependents of a refused removal are read from its details, through
// wrapping; other errors have none.
func TestDependentsOf(t *testing.T) {
	refused := &client.Error{Status: 422, Code: client.CodeInvalidTransition, Message: "in use",
		Details: json.RawMessage(`{"kind":"cluster_template","state":"Active","action":"delete","allowed":[],` +
			`"dependents":[{"id":"c-1","kind":"cluster","name":"c1","state":"Deleting","via":"cluster_template_id"}]}`)}
	tests := []struct {
		name string
		give error
		want []client.Dependent
	}{
		{"wrapped refusal", fmt.Errorf("delete: %w", refused), []client.Dependent{{ID: "c-1", Kind: "cluster", Name: "c1", State: "Deleting", Via: "cluster_template_id"}}},
		{"refusal without dependents", &client.Error{Status: 422, Code: client.CodeInvalidTransition, Message: "no",
			Details: json.RawMessage(`{"kind":"machine","state":"RUNNING","action":"start","allowed":["stop"]}`)}, nil},
		{"another code", &client.Error{Status: 409, Code: client.CodeBusy, Message: "busy"}, nil},
		{"not an API error", errors.New("connection refused"), nil},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		if got := dependentsOf(tt.give); !slices.Equal(got, tt.want) {
			t.Errorf("%s: dependentsOf(%v) = %+v, want %+v", tt.name, tt.give, got, tt.want)
		}
	}
}
