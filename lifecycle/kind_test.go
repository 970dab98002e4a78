package lifecycle

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// builtin is loaded once; every test reads it and none changes it.
var builtin = Builtin()

func mustKind(t testing.TB, name string) *Kind {
	t.Helper()
	k, err := builtin.Kind(name)
	if err != nil {
		t.Fatalf("Kind(%q): %v", name, err)
	}
	return k
}

func mustParse(t testing.TB, spec string) *Kind {
	t.Helper()
	kinds, err := Parse("test.yaml", []byte(spec))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return kinds[0]
}

func TestBuiltinKinds(t *testing.T) {
	want := []string{
		"account", "app_inst", "cloudlet", "cloudspace", "cluster", "cluster_inst", "cluster_template", "disk",
		"event", "image", "lease", "machine", "mci", "node", "node_group_template", "reservation", "vm",
	}
	if got := builtin.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	kinds := builtin.Kinds()
	if len(kinds) != len(want) {
		t.Fatalf("Kinds() has %d kinds, want %d", len(kinds), len(want))
	}
	families := map[string][]string{}
	for i, k := range kinds {
		if k.Name != want[i] {
			t.Errorf("Kinds()[%d] = %s, want %s", i, k.Name, want[i])
		}
		got, ok := builtin.ByCollection(k.Collection)
		if !ok || got != k {
			t.Errorf("ByCollection(%q) = %v, %v, want kind %s", k.Collection, got, ok, k.Name)
		}
		families[k.Family] = append(families[k.Family], k.Name)
	}
	wantFamilies := map[string][]string{
		"blazar":     {"event", "lease", "reservation"},
		"mobiledgex": {"app_inst", "cloudlet", "cluster_inst"},
		"openvcloud": {"account", "cloudspace", "disk", "image", "machine", "node"},
		"savanna":    {"cluster", "cluster_template", "node_group_template"},
		"tumblebug":  {"mci", "vm"},
	}
	for f, names := range wantFamilies {
		if !slices.Equal(families[f], names) {
			t.Errorf("family %s = %v, want %v", f, families[f], names)
		}
	}
	if len(families) != len(wantFamilies) {
		t.Errorf("families = %v, want %v", families, wantFamilies)
	}
}

func TestRegistryUnknown(t *testing.T) {
	_, err := builtin.Kind("spaceship")
	var uk *UnknownKindError
	if !errors.As(err, &uk) {
		t.Fatalf("Kind(spaceship) error = %v, want *UnknownKindError", err)
	}
	if uk.Kind != "spaceship" || !slices.Equal(uk.Known, builtin.Names()) {
		t.Errorf("UnknownKindError = %+v", uk)
	}
	if !strings.Contains(err.Error(), `unknown kind "spaceship"; kinds are account, app_inst`) {
		t.Errorf("Error() = %q", err)
	}
	if _, ok := builtin.ByCollection("spaceships"); ok {
		t.Error(`ByCollection("spaceships") found a kind`)
	}
	if got := NewRegistry().Names(); len(got) != 0 {
		t.Errorf("NewRegistry().Names() = %v, want none", got)
	}
}

// TestBuiltinInvariants checks rules every built-in kind keeps, beyond what the loader checks.
func TestBuiltinInvariants(t *testing.T) {
	for _, k := range builtin.Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			for _, s := range k.States.Static {
				if !k.IsStatic(s) || k.IsTransition(s) || !k.HasState(s) {
					t.Errorf("static state %s: IsStatic=%v IsTransition=%v HasState=%v", s, k.IsStatic(s), k.IsTransition(s), k.HasState(s))
				}
			}
			for _, s := range k.States.Transition {
				if k.IsStatic(s) || !k.IsTransition(s) || !k.HasState(s) {
					t.Errorf("transition state %s: IsStatic=%v IsTransition=%v HasState=%v", s, k.IsStatic(s), k.IsTransition(s), k.HasState(s))
				}
			}
			if k.HasState("NO_SUCH_STATE") {
				t.Error("HasState(NO_SUCH_STATE) = true")
			}
			// Final states have no way out for users, even forced, but their removal.
			for _, s := range k.States.Final {
				for _, name := range k.Allowed(s, true) {
					if a, _ := k.Action(name); !k.IsGone(a.Target(s)) {
						t.Errorf("final state %s allows %s to %s", s, name, a.Target(s))
					}
				}
			}
			// Gone states are not offered as states an object can be in.
			for _, s := range k.StaticStates() {
				if k.IsGone(s) {
					t.Errorf("StaticStates() lists gone state %s", s)
				}
			}
			for _, a := range k.AllActions() {
				got, ok := k.Action(a.Name)
				if !ok || got != a {
					t.Errorf("Action(%q) = %v, %v", a.Name, got, ok)
				}
				for _, p := range a.Via {
					if d := k.PhaseDuration(p); d <= 0 {
						t.Errorf("action %s phase %s: PhaseDuration = %v", a.Name, p.State, d)
					}
				}
			}
			for _, mode := range []string{"delete", "destroy"} {
				for _, s := range k.DeletionTargets(mode) {
					if !k.IsStatic(s) {
						t.Errorf("DeletionTargets(%s) lists %s, not a static state", mode, s)
					}
				}
			}
		})
	}
}

// TestAllowedMatchesCheck asserts, for every state of every kind and every action, that Check
// accepts exactly the actions Allowed lists, and refuses the rest with a typed error naming
// what is allowed.
func TestAllowedMatchesCheck(t *testing.T) {
	for _, k := range builtin.Kinds() {
		for _, state := range k.allStates() {
			for _, force := range []bool{false, true} {
				allowed := k.Allowed(state, force)
				for _, a := range k.AllActions() {
					_, err := k.Check(state, a.Name, force)
					switch {
					case slices.Contains(allowed, a.Name):
						if err != nil {
							t.Errorf("%s: Check(%q, %q, %v) = %v, want nil (Allowed lists it)", k.Name, state, a.Name, force, err)
						}
						if ok, needsForce := a.AllowedFrom(state); !ok || needsForce && !force {
							t.Errorf("%s: Allowed(%q, %v) lists %s, but AllowedFrom = %v, %v", k.Name, state, force, a.Name, ok, needsForce)
						}
						if k.IsTransition(state) && !a.FromAny {
							t.Errorf("%s: %s allowed from transition state %s", k.Name, a.Name, state)
						}
					case !a.ByUser():
						var ua *UnknownActionError
						if !errors.As(err, &ua) {
							t.Errorf("%s: Check(%q, %q) = %v, want *UnknownActionError (not a user action)", k.Name, state, a.Name, err)
						}
					default:
						var it *InvalidTransitionError
						if !errors.As(err, &it) {
							t.Fatalf("%s: Check(%q, %q, %v) = %v, want *InvalidTransitionError", k.Name, state, a.Name, force, err)
						}
						if it.Kind != k.Name || it.From != state || it.Action != a.Name || !slices.Equal(it.Allowed, allowed) {
							t.Errorf("%s: Check(%q, %q, %v) error = %+v, want allowed %v", k.Name, state, a.Name, force, it, allowed)
						}
					}
				}
			}
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		kind    string
		state   string
		action  string
		force   bool
		wantErr string // substring; "" means allowed
	}{
		{name: "allowed", kind: "machine", state: "RUNNING", action: "stop"},
		{name: "create from initial", kind: "machine", state: "VIRTUAL", action: "deploy"},
		{name: "refused lists allowed", kind: "machine", state: "HALTED", action: "pause",
			wantErr: `machine: action "pause" is not allowed from state HALTED; allowed: start, delete, destroy, add_disk`},
		{name: "refused from final", kind: "machine", state: "DESTROYED", action: "start",
			wantErr: `machine: action "start" is not allowed from state DESTROYED; allowed: none`},
		{name: "refused from transition", kind: "machine", state: "STOPPING", action: "start",
			wantErr: `not allowed from state STOPPING; allowed: none`},
		{name: "unknown action lists user actions", kind: "node", state: "ENABLED", action: "fly",
			wantErr: `node: unknown action "fly"; actions are create, deactivate, enable, decommission, update`},
		{name: "system action is not offered", kind: "cloudspace", state: "PAUSED", action: "resume",
			wantErr: `cloudspace: unknown action "resume"`},
		{name: "timer action is not offered", kind: "lease", state: "PENDING", action: "start",
			wantErr: `lease: unknown action "start"`},
		{name: "needs force", kind: "vm", state: "Failed", action: "terminate",
			wantErr: `vm: action "terminate" from state Failed needs force`},
		{name: "forced", kind: "vm", state: "Failed", action: "terminate", force: true},
		{name: "force does not widen from", kind: "vm", state: "Terminated", action: "terminate", force: true,
			wantErr: `not allowed from state Terminated`},
		{name: "from any includes transition states", kind: "lease", state: "STARTING", action: "delete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := mustKind(t, tt.kind)
			a, err := k.Check(tt.state, tt.action, tt.force)
			if tt.wantErr == "" {
				if err != nil || a == nil || a.Name != tt.action {
					t.Fatalf("Check(%q, %q, %v) = %v, %v, want action %s", tt.state, tt.action, tt.force, a, err, tt.action)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check(%q, %q, %v) error = %v, want %q", tt.state, tt.action, tt.force, err, tt.wantErr)
			}
			if a != nil {
				t.Errorf("Check returned action %s with an error", a.Name)
			}
		})
	}
}

func TestCheckNeedsForceError(t *testing.T) {
	k := mustKind(t, "mci")
	_, err := k.Check("Undefined", "terminate", false)
	var it *InvalidTransitionError
	if !errors.As(err, &it) {
		t.Fatalf("Check = %v, want *InvalidTransitionError", err)
	}
	if !it.NeedsForce || !slices.Equal(it.Allowed, []string{"refine"}) {
		t.Errorf("error = %+v, want NeedsForce and only refine allowed unforced", it)
	}
	// force_any: a forced resume of a running MCI skips the checks...
	if _, err = k.Check("Running", "resume", true); err != nil {
		t.Errorf("Check(Running, resume, force) = %v, want allowed (force skips the checks)", err)
	}
	// ...but unforced it is simply not allowed (the error does not suggest forcing it)...
	if _, err = k.Check("Running", "resume", false); !errors.As(err, &it) || it.NeedsForce {
		t.Errorf("Check(Running, resume) = %v, want an InvalidTransitionError without NeedsForce", err)
	}
	// ...and nothing leaves a final state, forced or not.
	if _, err = k.Check("Terminated", "resume", true); !errors.As(err, &it) {
		t.Errorf("Check(Terminated, resume, force) = %v, want refused", err)
	}
	// A kind without force_any refuses what its spec does not list, forced or not.
	if _, err = mustKind(t, "machine").Check("HALTED", "pause", true); !errors.As(err, &it) || it.NeedsForce {
		t.Errorf("machine Check(HALTED, pause, force) = %v, want refused", err)
	}
}

func TestDeletionAction(t *testing.T) {
	tests := []struct {
		kind, mode, state string
		want              string // action name; "" means an error
		wantErr           string
	}{
		{kind: "machine", mode: "destroy", state: "RUNNING", want: "destroy"},
		{kind: "machine", mode: "delete", state: "HALTED", want: "delete"},
		{kind: "machine", mode: "destroy", state: "DELETED", want: "destroy"},
		{kind: "machine", mode: "delete", state: "DELETED", wantErr: `machine: action "delete" is not allowed from state DELETED; allowed: destroy, restore`},
		// A disk's delete mode picks the action that fits its state.
		{kind: "disk", mode: "delete", state: "CREATED", want: "delete"},
		{kind: "disk", mode: "delete", state: "ASSIGNED", want: "delete_attached"},
		{kind: "lease", mode: "destroy", state: "STARTING", want: "delete"},
		{kind: "node", mode: "destroy", state: "MAINTENANCE", want: "decommission"},
		{kind: "node", mode: "delete", state: "ENABLED", wantErr: `node: unknown action "deletion mode delete"; actions are destroy`},
		{kind: "machine", mode: "shred", state: "RUNNING", wantErr: `actions are delete, destroy`},
		{kind: "vm", mode: "destroy", state: "Failed", wantErr: `not allowed from state Failed`},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.mode+"/"+tt.state, func(t *testing.T) {
			a, err := mustKind(t, tt.kind).DeletionAction(tt.mode, tt.state)
			if tt.want != "" {
				if err != nil || a.Name != tt.want {
					t.Fatalf("DeletionAction(%q, %q) = %v, %v, want %s", tt.mode, tt.state, a, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("DeletionAction(%q, %q) error = %v, want %q", tt.mode, tt.state, err, tt.wantErr)
			}
		})
	}
}

func TestDeletionTargets(t *testing.T) {
	tests := []struct {
		kind, mode string
		want       []string
	}{
		{"machine", "destroy", []string{"DESTROYED"}},
		{"machine", "delete", []string{"DELETED"}},
		{"disk", "delete", []string{"DELETED", "TOBEDELETED"}},
		{"node", "destroy", []string{"DECOMMISSIONED"}},
		{"node", "delete", nil},
		{"cluster_inst", "destroy", []string{"NotPresent"}},
	}
	for _, tt := range tests {
		if got := mustKind(t, tt.kind).DeletionTargets(tt.mode); !slices.Equal(got, tt.want) {
			t.Errorf("%s.DeletionTargets(%q) = %v, want %v", tt.kind, tt.mode, got, tt.want)
		}
	}
}

func TestLands(t *testing.T) {
	tests := []struct {
		kind, state, action string
		want                string
		wantErr             string
	}{
		{kind: "machine", state: "RUNNING", want: "RUNNING"},
		{kind: "machine", state: "STOPPING", want: "HALTED"},
		{kind: "machine", state: "STOPPING", action: "stop", want: "HALTED"},
		{kind: "machine", state: "DEPLOYING", want: "RUNNING"},
		// A paused cloudspace is resumed by self-healing.
		{kind: "cloudspace", state: "PAUSED", want: "DEPLOYED"},
		// A failure phase lands where the failure goes.
		{kind: "cluster_inst", state: "CreateError", want: "NotPresent"},
		{kind: "cluster_inst", state: "DeleteError", want: "Ready"},
		// Shared phases that land in the same state are fine (Savanna's create and scale).
		{kind: "cluster", state: "Configuring", want: "Active"},
		{kind: "cluster", state: "Deleting", want: "Deleted"},
		{kind: "machine", state: "ADDING_DISK", wantErr: "cannot tell where transition state ADDING_DISK lands: action add_disk returns to the state it started from"},
		{kind: "machine", state: "ADDING_DISK", action: "add_disk", wantErr: "returns to the state it started from"},
		{kind: "cloudspace", state: "RESETTING", wantErr: "action reset returns"},
		// The lease's update returns to where it started; its failure rolls back.
		{kind: "lease", state: "UPDATING", wantErr: "action update returns"},
		{kind: "machine", state: "STOPPING", action: "start", wantErr: "no action passes through it"},
		{kind: "machine", state: "FLYING", wantErr: `machine: unknown state "FLYING"; states are VIRTUAL, RUNNING`},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.state+"/"+tt.action, func(t *testing.T) {
			got, err := mustKind(t, tt.kind).Lands(tt.state, tt.action)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Lands(%q, %q) = %q, %v, want %q", tt.state, tt.action, got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Lands(%q, %q) = %q, %v, want error %q", tt.state, tt.action, got, err, tt.wantErr)
			}
		})
	}
}

func TestLandsAmbiguous(t *testing.T) {
	k := mustParse(t, `
kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B, C], transition: [T, F]}
    failure: {via: [F], to: A}
    create: {to: A}
    actions:
      - {name: ab, from: [A], via: [T], to: B}
      - {name: ac, from: [A], via: [T], to: C}
      - {name: rollback, from: [B], via: [T], to: C, failure: {via: [F], rollback: true}}
`)
	_, err := k.Lands("T", "")
	var ae *AmbiguousStateError
	if !errors.As(err, &ae) || ae.State != "T" || !strings.Contains(err.Error(), "land in different states (B, C)") {
		t.Fatalf("Lands(T) = %v, want an AmbiguousStateError naming B and C", err)
	}
	if got, err := k.Lands("T", "ac"); err != nil || got != "C" {
		t.Errorf("Lands(T, ac) = %q, %v, want C", got, err)
	}
	// F is the failure phase of every action: ab and ac go on to A, rollback back to B.
	if _, err := k.Lands("F", ""); err == nil || !strings.Contains(err.Error(), "returns to the state it started from") {
		t.Errorf("Lands(F) = %v, want an error about rolling back", err)
	}
	if got, err := k.Lands("F", "ab"); err != nil || got != "A" {
		t.Errorf("Lands(F, ab) = %q, %v, want A", got, err)
	}
}

func TestActionHelpers(t *testing.T) {
	m := mustKind(t, "machine")
	reboot, _ := m.Action("reboot")
	clone, _ := m.Action("clone")
	if got := reboot.Target("PAUSED"); got != "RUNNING" {
		t.Errorf("reboot.Target(PAUSED) = %s, want RUNNING", got)
	}
	if got := clone.Target("HALTED"); got != "HALTED" {
		t.Errorf("clone.Target(HALTED) = %s, want HALTED", got)
	}
	if _, ok := m.Action("fly"); ok {
		t.Error(`Action("fly") found an action`)
	}
	vm := mustKind(t, "vm")
	term, _ := vm.Action("terminate")
	for _, tt := range []struct {
		state          string
		ok, needsForce bool
	}{{"Running", true, false}, {"Failed", true, true}, {"Terminated", false, false}} {
		ok, nf := term.AllowedFrom(tt.state)
		if ok != tt.ok || nf != tt.needsForce {
			t.Errorf("terminate.AllowedFrom(%q) = %v, %v, want %v, %v", tt.state, ok, nf, tt.ok, tt.needsForce)
		}
	}
	cs := mustKind(t, "cloudspace")
	resume, _ := cs.Action("resume")
	if resume.ByUser() || !reboot.ByUser() {
		t.Errorf("ByUser: resume = %v, reboot = %v", resume.ByUser(), reboot.ByUser())
	}
	if got := m.AllActions(); got[0] != &m.Create || got[0].Name != "deploy" || len(got) != len(m.Actions)+1 {
		t.Errorf("AllActions() starts with %s and has %d actions", got[0].Name, len(got))
	}
	if got, want := m.StaticStates(), []string{"VIRTUAL", "RUNNING", "PAUSED", "HALTED", "DELETED"}; !slices.Equal(got, want) {
		t.Errorf("StaticStates() = %v, want %v", got, want)
	}
}

func TestFailureRuleAndDurations(t *testing.T) {
	m := mustKind(t, "machine")
	deploy, _ := m.Action("deploy")
	stop, _ := m.Action("stop")
	if got := m.FailureRule(stop); !got.Rollback {
		t.Errorf("machine FailureRule(stop) = %+v, want the kind's rollback", got)
	}
	if got := m.PhaseDuration(deploy.Via[0]); got != 3*time.Second {
		t.Errorf("PhaseDuration(DEPLOYING) = %v, want 3s (its own)", got)
	}
	if got := m.PhaseDuration(stop.Via[0]); got != 2*time.Second {
		t.Errorf("PhaseDuration(STOPPING) = %v, want 2s (the kind's default)", got)
	}
	k := mustParse(t, `
kinds:
  - name: plain
    collection: plains
    states: {static: [A, B], transition: [T]}
    failure: {to: A}
    create: {to: A}
    actions:
      - {name: go, from: [A], via: [T], to: B}
`)
	g, _ := k.Action("go")
	if got := k.PhaseDuration(g.Via[0]); got != time.Second {
		t.Errorf("PhaseDuration without any duration = %v, want 1s", got)
	}
	lease := mustKind(t, "lease")
	upd, _ := lease.Action("update")
	if got := lease.FailureRule(upd); !got.Rollback || got.Fatal != "ERROR" {
		t.Errorf("lease FailureRule(update) = %+v, want rollback with fatal ERROR", got)
	}
}

func TestRequiredParentStates(t *testing.T) {
	tests := []struct {
		kind, action string
		want         []string
	}{
		{"machine", "start", []string{"DEPLOYED"}},
		{"machine", "deploy", []string{"DEPLOYED"}},
		{"machine", "delete", nil}, // ignore_parent
		{"app_inst", "create", []string{"Ready"}},
		{"app_inst", "delete", []string{"Ready"}},
		{"cluster_inst", "update", []string{"Ready"}},
		{"vm", "suspend", nil},  // parent without states
		{"mci", "suspend", nil}, // no parent
	}
	for _, tt := range tests {
		k := mustKind(t, tt.kind)
		a, _ := k.Action(tt.action)
		if got := k.RequiredParentStates(a); !slices.Equal(got, tt.want) {
			t.Errorf("%s.RequiredParentStates(%s) = %v, want %v", tt.kind, tt.action, got, tt.want)
		}
	}
	kinds, err := Parse("test.yaml", []byte(`
kinds:
  - name: p
    collection: ps
    states: {static: [A, B]}
    create: {to: A}
    actions:
      - {name: b, from: [A], to: B}
  - name: c
    collection: cs
    parent: {kind: p, states: [A]}
    states: {static: [X, Y]}
    create: {to: X}
    actions:
      - {name: go, from: [X], to: Y, parent_states: []}
      - {name: back, from: [Y], to: X, parent_states: [B]}
`))
	if err != nil {
		t.Fatal(err)
	}
	c := kinds[1]
	g, _ := c.Action("go")
	if got := c.RequiredParentStates(g); got == nil || len(got) != 0 {
		t.Errorf("RequiredParentStates(go) = %#v, want an empty list (no requirement)", got)
	}
	back, _ := c.Action("back")
	if got := c.RequiredParentStates(back); !slices.Equal(got, []string{"B"}) {
		t.Errorf("RequiredParentStates(back) = %v, want [B]", got)
	}
	create, _ := c.Action("create")
	if got := c.RequiredParentStates(create); !slices.Equal(got, []string{"A"}) {
		t.Errorf("RequiredParentStates(create) = %v, want the kind's [A]", got)
	}
}

// TestKindJSONRoundTrip checks that a kind served as JSON (GET /v1/kinds) compiles back into
// the same state machine on the client side.
func TestKindJSONRoundTrip(t *testing.T) {
	for _, k := range builtin.Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			b, err := json.Marshal(k)
			if err != nil {
				t.Fatal(err)
			}
			var got Kind
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("Unmarshal: %v\n%s", err, b)
			}
			if err := got.Compile(); err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if got.Mermaid() != k.Mermaid() {
				t.Error("the round-tripped kind renders differently")
			}
			for _, s := range k.allStates() {
				for _, force := range []bool{false, true} {
					if a, b := got.Allowed(s, force), k.Allowed(s, force); !slices.Equal(a, b) {
						t.Errorf("Allowed(%q, %v) = %v, want %v", s, force, a, b)
					}
				}
				for _, to := range k.StaticStates() {
					r1, err1 := got.Route(s, "", to, true)
					r2, err2 := k.Route(s, "", to, true)
					if (err1 == nil) != (err2 == nil) || !slices.Equal(r1.Actions(), r2.Actions()) {
						t.Errorf("Route(%q, %q) = %v, %v, want %v, %v", s, to, r1.Actions(), err1, r2.Actions(), err2)
					}
				}
			}
			for _, a := range k.AllActions() {
				for _, p := range a.Via {
					if got.PhaseDuration(p) != k.PhaseDuration(p) {
						t.Errorf("PhaseDuration(%s) changed", p.State)
					}
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	k := &Kind{Name: "broken", Collection: "brokens", States: States{Static: []string{"A"}},
		Create: Action{To: "B"}}
	err := k.Compile()
	var se SpecErrors
	if !errors.As(err, &se) || len(se) != 1 {
		t.Fatalf("Compile() = %v, want one SpecError", err)
	}
	if se[0].File != "kind broken" || se[0].Kind != "broken" || se[0].Field != "create.to" || se[0].Line != 0 {
		t.Errorf("SpecError = %+v", se[0])
	}
	if want := `kind broken: kind "broken": create.to: unknown state "B" (did you mean "A"?); static states are A`; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	var d Duration
	if err := d.UnmarshalText([]byte("soon")); err == nil {
		t.Error(`Duration.UnmarshalText("soon") succeeded`)
	}
	if err := d.UnmarshalText([]byte("1m30s")); err != nil || time.Duration(d) != 90*time.Second {
		t.Errorf(`Duration.UnmarshalText("1m30s") = %v, %v`, time.Duration(d), err)
	}
	if b, _ := d.MarshalText(); string(b) != "1m30s" {
		t.Errorf("MarshalText = %s", b)
	}
	if v, _ := d.MarshalYAML(); v != "1m30s" {
		t.Errorf("MarshalYAML = %v", v)
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&NoRouteError{Kind: "node", From: "DECOMMISSIONED", To: "ENABLED"},
			"node: no route from DECOMMISSIONED to ENABLED; reachable from DECOMMISSIONED: none"},
		{&NotStaticError{Kind: "machine", State: "STOPPING", Static: []string{"RUNNING", "HALTED"}},
			"machine: STOPPING is a transition state, not a static one; static states are RUNNING, HALTED"},
		{&UnknownStateError{Kind: "machine", State: "X"}, `machine: unknown state "X"; states are none`},
		{&SpecError{File: "f.yaml", Msg: "boom"}, "f.yaml: boom"},
		{&SpecError{File: "f.yaml", Line: 3, Kind: "k", Field: "states", Msg: "boom"}, `f.yaml:3: kind "k": states: boom`},
		{SpecErrors{{File: "a", Msg: "x"}, {File: "b", Msg: "y"}}, "a: x\nb: y"},
		{&LeaseConsistencyError{Lease: "ACTIVE", Reason: "why"}, "blazar: lease ACTIVE: why"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// A held MCI (CB-Tumblebug's option=hold) leaves Holding only by continue (the create's
// phases to Running) or withdraw (removed); every other action is refused, forced or not,
// naming the two. Routes, deletion and the states users may ask for know the hold.
func TestHoldState(t *testing.T) {
	k := mustKind(t, "mci")
	if !k.IsHeld("Holding") || k.IsHeld("Running") || !k.IsStatic("Holding") {
		t.Fatalf("mci hold = %q: Holding should be its static hold state", k.Hold)
	}
	tests := []struct {
		name, action string
		force        bool
		wantErr      bool
	}{
		{"continue", "continue", false, false},
		{"withdraw", "withdraw", false, false},
		{"suspend", "suspend", false, true},
		{"forced suspend", "suspend", true, true},
		{"forced terminate", "terminate", true, true},
		{"refine", "refine", false, true},
		{"scale", "scale", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Check("Holding", tt.action, tt.force)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Check(Holding, %q, %v) = %v, want error %v", tt.action, tt.force, err, tt.wantErr)
			}
			var it *InvalidTransitionError
			if tt.wantErr && (!errors.As(err, &it) || !slices.Equal(it.Allowed, []string{"continue", "withdraw"})) {
				t.Errorf("Check(Holding, %q, %v) = %v, want an InvalidTransitionError allowing continue, withdraw", tt.action, tt.force, err)
			}
		})
	}
	cont, _ := k.Action("continue")
	if !slices.Equal(cont.Via, k.Create.Via) || cont.To != k.Create.To {
		t.Errorf("continue = via %v to %q, want the create's %v to %q", cont.Via, cont.To, k.Create.Via, k.Create.To)
	}
	r, err := k.Route("Holding", "", "Running", false)
	if err != nil || !slices.Equal(r.Actions(), []string{"continue"}) {
		t.Errorf("Route(Holding → Running) = %v, %v, want [continue]", r.Actions(), err)
	}
	if a, err := k.DeletionAction("destroy", "Holding"); err != nil || a.Name != "withdraw" {
		t.Errorf("DeletionAction(destroy, Holding) = %v, %v, want withdraw", a, err)
	}
	if !slices.Contains(k.RequestableStates(), "Holding") {
		t.Errorf("RequestableStates() = %v, want Holding among them", k.RequestableStates())
	}
	if got, err := k.Lands("Holding", ""); err != nil || got != "Holding" {
		t.Errorf("Lands(Holding) = %q, %v, want Holding (static: a held create waits)", got, err)
	}
	d := deriveMCIStatus(View{State: "Holding", Decl: k}, nil)
	if d.Status["text"] != "Holding:0 (R:0/0)" || d.Status["target_action"] != "create" || d.Status["target_status"] != "Running" {
		t.Errorf("held MCI status = %v, want text Holding:0 (R:0/0), target create → Running", d.Status)
	}
	if err := checkMCIAggregate(View{State: "Holding", Decl: k, Status: d.Status}, nil); err != nil {
		t.Errorf("checkMCIAggregate(held MCI) = %v", err)
	}
}
