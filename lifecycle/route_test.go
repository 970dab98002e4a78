package lifecycle

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRoute(t *testing.T) {
	tests := []struct {
		name   string
		kind   string
		from   string
		action string // the action running, for transition states
		to     string
		force  bool
		want   []string // action names
		states []string // the static states visited, start included
	}{
		{name: "already there", kind: "machine", from: "RUNNING", to: "RUNNING", want: []string{}, states: []string{"RUNNING"}},
		{name: "one hop", kind: "machine", from: "RUNNING", to: "HALTED", want: []string{"stop"}, states: []string{"RUNNING", "HALTED"}},
		{name: "multi-hop HALTED to PAUSED goes through RUNNING", kind: "machine", from: "HALTED", to: "PAUSED",
			want: []string{"start", "pause"}, states: []string{"HALTED", "RUNNING", "PAUSED"}},
		{name: "VIRTUAL to HALTED", kind: "machine", from: "VIRTUAL", to: "HALTED", want: []string{"deploy", "stop"}, states: []string{"VIRTUAL", "RUNNING", "HALTED"}},
		{name: "restore from recycle bin", kind: "machine", from: "DELETED", to: "RUNNING", want: []string{"restore", "start"}, states: []string{"DELETED", "HALTED", "RUNNING"}},
		{name: "ties go to the action first in the spec", kind: "machine", from: "PAUSED", to: "RUNNING", want: []string{"resume"}, states: []string{"PAUSED", "RUNNING"}},
		// From transitional states: start from where the transition lands.
		{name: "from STOPPING", kind: "machine", from: "STOPPING", to: "RUNNING", want: []string{"start"}, states: []string{"STOPPING", "RUNNING"}},
		{name: "from DEPLOYING to where it lands", kind: "machine", from: "DEPLOYING", to: "RUNNING", want: []string{}, states: []string{"DEPLOYING"}},
		{name: "from DEPLOYING onwards", kind: "machine", from: "DEPLOYING", action: "deploy", to: "PAUSED", want: []string{"pause"}, states: []string{"DEPLOYING", "PAUSED"}},
		{name: "from a failure phase", kind: "cluster_inst", from: "CreateError", to: "Ready", want: []string{"create"}, states: []string{"CreateError", "Ready"}},
		{name: "disk detach then delete", kind: "disk", from: "ASSIGNED", to: "DELETED", want: []string{"detach", "delete"}, states: []string{"ASSIGNED", "CREATED", "DELETED"}},
		{name: "disk TOBEDELETED to DELETED", kind: "disk", from: "TOBEDELETED", to: "DELETED", want: []string{"restore_attached", "detach", "delete"}},
		// A paused cloudspace is resumed by self-healing: routes start from DEPLOYED...
		{name: "self-healing lands PAUSED in DEPLOYED", kind: "cloudspace", from: "PAUSED", to: "DEPLOYED", want: []string{}},
		{name: "from PAUSED cloudspace onwards", kind: "cloudspace", from: "PAUSED", to: "DISABLED", want: []string{"disable"}, states: []string{"PAUSED", "DISABLED"}},
		// ...but an object already in the desired state needs nothing.
		{name: "PAUSED cloudspace desired PAUSED", kind: "cloudspace", from: "PAUSED", to: "PAUSED", want: []string{}},
		{name: "forced terminate", kind: "vm", from: "Failed", to: "Terminated", force: true, want: []string{"terminate"}},
		{name: "lease ERROR to TERMINATED", kind: "lease", from: "ERROR", to: "TERMINATED", want: []string{"terminate"}},
		{name: "delete from any state", kind: "cluster", from: "Spawning", to: "Deleted", want: []string{"delete"}},
		{name: "MobiledgeX UpdateError retried", kind: "app_inst", from: "UpdateError", to: "Ready", want: []string{"update"}},
		{name: "cloudlet through the gone state is not a route", kind: "cloudlet", from: "UpdateError", to: "Ready", want: []string{"fix"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := mustKind(t, tt.kind)
			r, err := k.Route(tt.from, tt.action, tt.to, tt.force)
			if err != nil {
				t.Fatalf("Route(%q, %q) = %v, want %v", tt.from, tt.to, err, tt.want)
			}
			if got := r.Actions(); !slices.Equal(got, tt.want) {
				t.Errorf("Route(%q, %q) = %v, want %v", tt.from, tt.to, got, tt.want)
			}
			if tt.states != nil {
				if got := r.States(tt.from); !slices.Equal(got, tt.states) {
					t.Errorf("Route(%q, %q).States = %v, want %v", tt.from, tt.to, got, tt.states)
				}
			}
			replay(t, k, tt.from, tt.action, tt.to, tt.force, r)
			if !k.CanTransition(tt.from, tt.to, tt.force) && tt.action == "" {
				t.Errorf("CanTransition(%q, %q) = false with a route", tt.from, tt.to)
			}
		})
	}
}

// replay walks a route with Check, as the provider does, and fails unless it is valid and
// ends in to.
func replay(t testing.TB, k *Kind, from, action, to string, force bool, r Route) {
	t.Helper()
	cur := from
	if from != to {
		var err error
		if cur, err = k.Lands(from, action); err != nil {
			t.Fatalf("%s.Lands(%q, %q) = %v after a route was found", k.Name, from, action, err)
		}
	}
	for i, s := range r {
		if s.From != cur {
			t.Fatalf("%s route %v step %d starts from %s, want %s", k.Name, r.Actions(), i, s.From, cur)
		}
		a, err := k.Check(cur, s.Action, s.Force)
		if err != nil {
			t.Fatalf("%s route %v step %d: Check(%q, %q, %v) = %v", k.Name, r.Actions(), i, cur, s.Action, s.Force, err)
		}
		if s.Force && !force {
			t.Fatalf("%s route %v step %d needs force, which was not given", k.Name, r.Actions(), i)
		}
		if got := phaseStates(a.Via); !slices.Equal(got, append([]string{}, s.Via...)) {
			t.Fatalf("%s route step %s via = %v, want %v", k.Name, s.Action, s.Via, got)
		}
		if got := a.Target(cur); got != s.To {
			t.Fatalf("%s route step %s from %s lands in %s, the step says %s", k.Name, s.Action, cur, got, s.To)
		}
		cur = s.To
	}
	if cur != to {
		t.Fatalf("%s route %v from %s ends in %s, want %s", k.Name, r.Actions(), from, cur, to)
	}
}

func TestRouteErrors(t *testing.T) {
	tests := []struct {
		name          string
		kind          string
		from, action  string
		to            string
		force         bool
		wantReachable []string // for a NoRouteError
		wantErr       string
	}{
		{name: "node DECOMMISSIONED to ENABLED", kind: "node", from: "DECOMMISSIONED", to: "ENABLED",
			wantReachable: []string{}, wantErr: "node: no route from DECOMMISSIONED to ENABLED; reachable from DECOMMISSIONED: none"},
		{name: "machine never returns to VIRTUAL", kind: "machine", from: "DELETED", to: "VIRTUAL",
			wantReachable: []string{"HALTED", "RUNNING", "PAUSED"}, wantErr: "reachable from DELETED: HALTED, RUNNING, PAUSED"},
		{name: "needs force", kind: "vm", from: "Failed", to: "Terminated", wantReachable: []string{}},
		{name: "final state", kind: "vm", from: "Terminated", to: "Running", force: true, wantReachable: []string{}},
		// Where a transition lands is listed first: the object gets there with no action.
		{name: "from a transition state lists where it lands", kind: "machine", from: "STOPPING", to: "VIRTUAL",
			wantReachable: []string{"HALTED", "RUNNING", "DELETED", "PAUSED"}},
		{name: "timer actions are not routes", kind: "lease", from: "PENDING", to: "ACTIVE", wantReachable: []string{}},
		{name: "self-healing is not a route", kind: "cloudspace", from: "DISABLED", to: "VIRTUAL",
			wantReachable: []string{"DEPLOYED", "DELETED", "PAUSED"}},
		{name: "gone states are not offered", kind: "image", from: "DELETED", to: "CREATED", wantReachable: []string{}},
		{name: "unknown target", kind: "machine", from: "RUNNING", to: "FLYING", wantErr: `machine: unknown state "FLYING"`},
		{name: "transition target", kind: "machine", from: "RUNNING", to: "STOPPING",
			wantErr: "machine: STOPPING is a transition state, not a static one; static states are VIRTUAL, RUNNING, PAUSED, HALTED, DELETED"},
		{name: "unknown start", kind: "machine", from: "FLYING", to: "RUNNING", wantErr: `machine: unknown state "FLYING"`},
		{name: "ambiguous start", kind: "machine", from: "CLONING", to: "RUNNING", wantErr: "cannot tell where transition state CLONING lands"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := mustKind(t, tt.kind)
			r, err := k.Route(tt.from, tt.action, tt.to, tt.force)
			if err == nil {
				t.Fatalf("Route(%q, %q) = %v, want an error", tt.from, tt.to, r.Actions())
			}
			if tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Route(%q, %q) error = %q, want %q", tt.from, tt.to, err, tt.wantErr)
			}
			var nr *NoRouteError
			isNoRoute := errors.As(err, &nr)
			if (tt.wantReachable != nil) != isNoRoute {
				t.Fatalf("Route(%q, %q) error = %T %v, want NoRouteError: %v", tt.from, tt.to, err, err, tt.wantReachable != nil)
			}
			if isNoRoute {
				if nr.Kind != k.Name || nr.From != tt.from || nr.To != tt.to || !slices.Equal(nr.Reachable, tt.wantReachable) {
					t.Errorf("NoRouteError = %+v, want reachable %v", nr, tt.wantReachable)
				}
				if k.CanTransition(tt.from, tt.to, tt.force) {
					t.Errorf("CanTransition(%q, %q) = true", tt.from, tt.to)
				}
			}
			switch {
			case strings.Contains(tt.wantErr, "unknown state"):
				var ue *UnknownStateError
				if !errors.As(err, &ue) {
					t.Errorf("error %T, want *UnknownStateError", err)
				}
			case strings.Contains(tt.wantErr, "not a static one"):
				var ne *NotStaticError
				if !errors.As(err, &ne) || ne.State != tt.to {
					t.Errorf("error %T, want *NotStaticError", err)
				}
			case strings.Contains(tt.wantErr, "cannot tell"):
				var ae *AmbiguousStateError
				if !errors.As(err, &ae) {
					t.Errorf("error %T, want *AmbiguousStateError", err)
				}
			}
		})
	}
}

// TestReachableMatchesRoute checks, for every state of every kind, that Reachable lists
// exactly the static states Route finds a route to (besides the state itself), and that
// every such route replays.
func TestReachableMatchesRoute(t *testing.T) {
	for _, k := range builtin.Kinds() {
		for _, from := range k.allStates() {
			for _, force := range []bool{false, true} {
				reach := k.Reachable(from, force)
				for _, to := range k.States.Static {
					r, err := k.Route(from, "", to, force)
					listed := slices.Contains(reach, to)
					switch {
					case err == nil:
						replay(t, k, from, "", to, force, r)
						if !listed && to != from {
							t.Errorf("%s: Route(%q, %q) = %v but Reachable(%q) = %v", k.Name, from, to, r.Actions(), from, reach)
						}
					case listed:
						t.Errorf("%s: Reachable(%q) = %v lists %s but Route = %v", k.Name, from, reach, to, err)
					default:
						var nr *NoRouteError
						if errors.As(err, &nr) {
							want := k.withoutGone(reach)
							if !slices.Equal(nr.Reachable, want) {
								t.Errorf("%s: Route(%q, %q) reachable = %v, want %v", k.Name, from, to, nr.Reachable, want)
							}
						}
					}
				}
			}
		}
	}
}

func TestReachable(t *testing.T) {
	tests := []struct {
		kind, from string
		force      bool
		want       []string
	}{
		{"machine", "HALTED", false, []string{"RUNNING", "DELETED", "DESTROYED", "PAUSED"}},
		{"node", "DECOMMISSIONED", false, nil},
		{"vm", "Failed", false, nil},
		{"vm", "Failed", true, []string{"Terminated"}},
		{"cloudspace", "PAUSED", false, []string{"DEPLOYED", "DISABLED", "DELETED", "DESTROYED"}},
		{"machine", "STARTING", false, []string{"RUNNING", "PAUSED", "HALTED", "DELETED", "DESTROYED"}},
		{"machine", "CLONING", false, nil}, // where it lands depends on where it started
		{"machine", "FLYING", false, nil},
	}
	for _, tt := range tests {
		if got := mustKind(t, tt.kind).Reachable(tt.from, tt.force); !slices.Equal(got, tt.want) {
			t.Errorf("%s.Reachable(%q, %v) = %v, want %v", tt.kind, tt.from, tt.force, got, tt.want)
		}
	}
}

func TestRouteSteps(t *testing.T) {
	k := mustKind(t, "cluster_inst")
	r, err := k.Route("NotPresent", "", "Ready", false)
	if err != nil {
		t.Fatal(err)
	}
	want := Route{{Action: "create", From: "NotPresent", Via: []string{"CreateRequested", "Creating"}, To: "Ready"}}
	if len(r) != 1 || r[0].Action != want[0].Action || r[0].From != want[0].From || r[0].To != want[0].To || !slices.Equal(r[0].Via, want[0].Via) || r[0].Force {
		t.Errorf("Route(NotPresent, Ready) = %+v, want %+v", r, want)
	}
	vm := mustKind(t, "vm")
	r, _ = vm.Route("Undefined", "", "Terminated", true)
	if len(r) != 1 || !r[0].Force {
		t.Errorf("Route(Undefined, Terminated, force) = %+v, want one forced step", r)
	}
	if got := (Route{}).Actions(); len(got) != 0 {
		t.Errorf("empty Route.Actions() = %v", got)
	}
}

func TestSettles(t *testing.T) {
	tests := []struct {
		kind, state, action, from string
		want                      string // "" means an error
	}{
		{"machine", "CLONING", "clone", "HALTED", "HALTED"},
		{"machine", "CLONING", "clone", "", ""},  // returns, origin unknown
		{"machine", "CLONING", "", "HALTED", ""}, // action unknown
		{"machine", "STOPPING", "stop", "RUNNING", "HALTED"},
		{"machine", "HALTED", "", "", "HALTED"},
		{"cloudspace", "RESETTING", "reset", "DEPLOYED", "DEPLOYED"},
		{"cloudspace", "PAUSED", "", "", "DEPLOYED"}, // self-healing resumes it
		{"lease", "UPDATING", "update", "ACTIVE", "ACTIVE"},
	}
	for _, tt := range tests {
		k := mustKind(t, tt.kind)
		got, err := k.Settles(tt.state, tt.action, tt.from)
		if tt.want == "" {
			if err == nil {
				t.Errorf("%s.Settles(%q, %q, %q) = %q, want an error", tt.kind, tt.state, tt.action, tt.from, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s.Settles(%q, %q, %q) = %q, %v, want %q", tt.kind, tt.state, tt.action, tt.from, got, err, tt.want)
		}
	}
}
