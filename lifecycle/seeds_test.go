package lifecycle

import (
	"errors"
	"slices"
	"testing"
)

// This file has one case per row of every table in the seed documents (../shared/seeds/),
// each commented with the row it covers. Where DESIGN.md's "Seed errata and decisions" or a
// "Departure:" comment in specs/*.yaml overrides a row, the case asserts the decided
// behaviour and says why.

// move is a row of a "initial state | transition state(s) | desired state" table: a user
// action from a static state through transition states to a static state.
type move struct {
	name   string // the seed row
	kind   string
	from   string
	action string
	via    []string
	to     string
}

func (m move) check(t *testing.T) {
	t.Helper()
	k := mustKind(t, m.kind)
	a, err := k.Check(m.from, m.action, false)
	if err != nil {
		t.Fatalf("%s.Check(%q, %q) = %v, want allowed", m.kind, m.from, m.action, err)
	}
	if got := phaseStates(a.Via); !slices.Equal(got, m.via) {
		t.Errorf("%s action %s via = %v, want %v", m.kind, m.action, got, m.via)
	}
	if got := a.Target(m.from); got != m.to {
		t.Errorf("%s action %s from %s lands in %s, want %s", m.kind, m.action, m.from, got, m.to)
	}
	if !k.IsStatic(m.to) {
		t.Errorf("%s: %s is not a static state", m.kind, m.to)
	}
	for _, s := range m.via {
		if !k.IsTransition(s) {
			t.Errorf("%s: %s is not a transition state", m.kind, s)
		}
		if got, err := k.Lands(s, m.action); err == nil && got != m.to {
			t.Errorf("%s.Lands(%q, %q) = %s, want %s", m.kind, s, m.action, got, m.to)
		}
	}
	if k.Family == "openvcloud" && !k.FailureRule(a).Rollback {
		// Seed 000 "Rollback actions": a failed action restores the initial object state.
		t.Errorf("%s action %s does not roll back on failure", m.kind, m.action)
	}
}

// refusal is a seed row the decided spec does not allow as written.
type refusal struct {
	name   string // the seed row
	why    string // the decision overriding it
	kind   string
	from   string
	via    []string
	to     string
	action string // the user action the row would have run, refused from `from`; may be ""
}

func (r refusal) check(t *testing.T) {
	t.Helper()
	k := mustKind(t, r.kind)
	for _, a := range k.AllActions() {
		ok, _ := a.AllowedFrom(r.from)
		if ok && slices.Equal(phaseStates(a.Via), r.via) && a.Target(r.from) == r.to {
			t.Errorf("%s action %s runs %s → %v → %s, which was decided against: %s", r.kind, a.Name, r.from, r.via, r.to, r.why)
		}
	}
	if r.action == "" {
		return
	}
	_, err := k.Check(r.from, r.action, true)
	var it *InvalidTransitionError
	if !errors.As(err, &it) {
		t.Fatalf("%s.Check(%q, %q) = %v, want *InvalidTransitionError", r.kind, r.from, r.action, err)
	}
	if it.From != r.from || it.Action != r.action || !slices.Equal(it.Allowed, k.Allowed(r.from, true)) {
		t.Errorf("InvalidTransitionError = %+v", it)
	}
}

func phaseStates(via []Phase) []string {
	out := []string{}
	for _, p := range via {
		out = append(out, p.State)
	}
	return out
}

// edge is one move of a kind's full state graph: an action starting, a phase completing (or
// being skipped), a failure and its undo.
type edge struct {
	action   string
	from, to string
	actor    Actor  // who makes the move; phases with no actor are completed by the system
	how      string // start, phase, skip, fail, undo, fatal, retry
}

// edges lists every move the spec of k allows, as the simulator runs it: any phase may fail.
func edges(k *Kind) []edge {
	var out []edge
	add := func(a *Action, from, to string, actor Actor, how string) {
		if actor == "" {
			actor = ActorSystem
		}
		out = append(out, edge{a.Name, from, to, actor, how})
	}
	for _, a := range k.AllActions() {
		froms := append(slices.Clone(a.From), a.ForceFrom...)
		if a.FromAny {
			froms = k.allStates()
		}
		if a == &k.Create && k.Initial == "" {
			froms = []string{""}
		}
		starter := a.Actor
		if starter == "" {
			starter = ActorUser
		}
		f := k.FailureRule(a)
		for _, from := range froms {
			to := a.Target(from)
			state := func(i int) string {
				if i < len(a.Via) {
					return a.Via[i].State
				}
				return to
			}
			add(a, from, state(0), starter, "start")
			for i, p := range a.Via {
				add(a, p.State, state(i+1), p.Actor, "phase")
				for j := i + 1; j < len(a.Via) && a.Via[j].Skippable; j++ {
					// The message that arrives is the one that completes the skipped phase.
					add(a, p.State, state(j+1), a.Via[j].Actor, "skip")
				}
				if f.Retry {
					add(a, p.State, p.State, p.Actor, "retry")
					continue
				}
				end := f.To
				if f.Rollback {
					end = from
				}
				if len(f.Via) == 0 {
					add(a, p.State, end, p.Actor, "fail")
				} else {
					add(a, p.State, f.Via[0].State, p.Actor, "fail")
					for i, fp := range f.Via {
						next := end
						if i+1 < len(f.Via) {
							next = f.Via[i+1].State
						}
						add(a, fp.State, next, fp.Actor, "undo")
					}
				}
				if f.Fatal != "" {
					add(a, p.State, f.Fatal, p.Actor, "fatal")
				}
			}
		}
	}
	return out
}

// step is a row of a "current state | actor | next state" table: one edge of the graph.
type step struct {
	name     string // the seed row
	kind     string
	action   string // "" matches any action
	from, to string
	actor    Actor  // "" matches any actor
	how      string // "" matches any
	absent   bool   // the decided spec has no such move (the comment says why)
}

func (s step) check(t *testing.T) {
	t.Helper()
	k := mustKind(t, s.kind)
	var found []edge
	for _, e := range edges(k) {
		if e.from == s.from && e.to == s.to &&
			(s.action == "" || e.action == s.action) &&
			(s.actor == "" || e.actor == s.actor) &&
			(s.how == "" || e.how == s.how) {
			found = append(found, e)
		}
	}
	switch {
	case s.absent && len(found) > 0:
		t.Errorf("%s has a move %s → %s (%+v), which was decided against", s.kind, s.from, s.to, found)
	case !s.absent && len(found) == 0:
		t.Errorf("%s has no move %s → %s by %q (action %q, %q); moves from %s: %+v",
			s.kind, s.from, s.to, s.actor, s.action, s.how, s.from, edgesFrom(k, s.from))
	}
}

func edgesFrom(k *Kind, from string) []edge {
	var out []edge
	for _, e := range edges(k) {
		if e.from == from {
			out = append(out, e)
		}
	}
	return out
}

// ---- Seed 000: OpenvCloud -------------------------------------------------------------------

func TestSeedOpenvCloudMachine(t *testing.T) {
	moves := []move{
		{name: "VIRTUAL|DEPLOYING|RUNNING", kind: "machine", from: "VIRTUAL", action: "deploy", via: []string{"DEPLOYING"}, to: "RUNNING"},
		{name: "RUNNING|PAUSING|PAUSED", kind: "machine", from: "RUNNING", action: "pause", via: []string{"PAUSING"}, to: "PAUSED"},
		{name: "PAUSED|RESUMING|RUNNING", kind: "machine", from: "PAUSED", action: "resume", via: []string{"RESUMING"}, to: "RUNNING"},
		{name: "RUNNING/PAUSED|STOPPING|HALTED (RUNNING)", kind: "machine", from: "RUNNING", action: "stop", via: []string{"STOPPING"}, to: "HALTED"},
		{name: "RUNNING/PAUSED|STOPPING|HALTED (PAUSED)", kind: "machine", from: "PAUSED", action: "stop", via: []string{"STOPPING"}, to: "HALTED"},
		{name: "RUNNING/PAUSED|DELETING|DELETED (RUNNING)", kind: "machine", from: "RUNNING", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "RUNNING/PAUSED|DELETING|DELETED (PAUSED)", kind: "machine", from: "PAUSED", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "RUNNING/PAUSED|DESTROYING|DESTROYED (RUNNING)", kind: "machine", from: "RUNNING", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "RUNNING/PAUSED|DESTROYING|DESTROYED (PAUSED)", kind: "machine", from: "PAUSED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "HALTED|DELETING|DELETED", kind: "machine", from: "HALTED", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "HALTED|DESTROYING|DESTROYED", kind: "machine", from: "HALTED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		// DESIGN.md decisions (no seed row): start, VIRTUAL delete/destroy, DELETED restore/destroy.
		{name: "decided: HALTED|STARTING|RUNNING (seed omits starting)", kind: "machine", from: "HALTED", action: "start", via: []string{"STARTING"}, to: "RUNNING"},
		{name: "decided: VIRTUAL|DELETING|DELETED", kind: "machine", from: "VIRTUAL", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "decided: VIRTUAL|DESTROYING|DESTROYED", kind: "machine", from: "VIRTUAL", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "decided: DELETED|RESTORING|HALTED", kind: "machine", from: "DELETED", action: "restore", via: []string{"RESTORING"}, to: "HALTED"},
		{name: "decided: DELETED|DESTROYING|DESTROYED", kind: "machine", from: "DELETED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
	}
	for _, m := range moves {
		t.Run(m.name, m.check)
	}
	refusals := []refusal{
		{name: "no row: RUNNING start", why: "start runs only from HALTED", kind: "machine", from: "RUNNING", via: []string{"STARTING"}, to: "RUNNING", action: "start"},
		{name: "no row: HALTED pause", why: "a halted machine cannot be paused", kind: "machine", from: "HALTED", via: []string{"PAUSING"}, to: "PAUSED", action: "pause"},
		{name: "no row: DESTROYED restore", why: "DESTROYED is final", kind: "machine", from: "DESTROYED", via: []string{"RESTORING"}, to: "HALTED", action: "restore"},
		{name: "no row: VIRTUAL start", why: "a modelled machine is deployed, not started", kind: "machine", from: "VIRTUAL", via: []string{"STARTING"}, to: "RUNNING", action: "start"},
	}
	for _, r := range refusals {
		t.Run(r.name, r.check)
	}
	// The seed's "Actions restoring initial state" table: every initial state (rows RUNNING,
	// PAUSED, HALTED) crossed with every transition state it lists.
	restoring := []struct {
		from, via string
		action    string // "" when refused
		to        string
		why       string // for departures from the table
	}{
		{"RUNNING", "REBOOTING", "reboot", "RUNNING", ""},
		{"PAUSED", "REBOOTING", "reboot", "RUNNING", "decided: a reboot lands a paused machine RUNNING (real code)"},
		{"HALTED", "REBOOTING", "", "", "decided: only running or paused machines reboot (real code)"},
		{"RUNNING", "PAUSING", "pause", "PAUSED", "decided: PAUSING is the pause action, it does not restore the state"},
		{"PAUSED", "PAUSING", "", "", "decided: PAUSING is the pause action, from RUNNING only"},
		{"HALTED", "PAUSING", "", "", "decided: PAUSING is the pause action, from RUNNING only"},
		{"RUNNING", "RESETTING", "reset", "RUNNING", ""},
		{"PAUSED", "RESETTING", "reset", "RUNNING", "decided: a reset lands a paused machine RUNNING (real code)"},
		{"HALTED", "RESETTING", "", "", "decided: only running or paused machines reset (real code)"},
	}
	diskOps := map[string]string{
		"ADDING_DISK": "add_disk", "ATTACHING_DISK": "attach_disk", "DETACHING_DISK": "detach_disk",
		"DELETING_DISK": "delete_disk", "CREATING_TEMPLATE": "create_template",
		"CHANGING_DISK_LIMITS": "change_disk_limits", "CLONING": "clone",
	}
	for via, action := range diskOps {
		for _, from := range []string{"RUNNING", "PAUSED", "HALTED"} {
			restoring = append(restoring, struct{ from, via, action, to, why string }{from, via, action, from, ""})
		}
	}
	k := mustKind(t, "machine")
	for _, tt := range restoring {
		t.Run("restoring "+tt.from+"|"+tt.via, func(t *testing.T) {
			if tt.action != "" {
				move{kind: "machine", from: tt.from, action: tt.action, via: []string{tt.via}, to: tt.to}.check(t)
				if a, _ := k.Action(tt.action); tt.why == "" && tt.to == tt.from && !a.Returns && tt.via != "REBOOTING" && tt.via != "RESETTING" {
					t.Errorf("%s should return to where it started", tt.action)
				}
				return
			}
			// Refused: no action from tt.from passes through tt.via.
			for _, a := range k.AllActions() {
				if ok, _ := a.AllowedFrom(tt.from); ok && slices.Contains(phaseStates(a.Via), tt.via) {
					t.Errorf("action %s runs %s from %s; %s", a.Name, tt.via, tt.from, tt.why)
				}
			}
		})
	}
	// DESIGN.md: the disk operations return the machine to the state it started in.
	for _, action := range diskOps {
		if a, _ := k.Action(action); !a.Returns {
			t.Errorf("machine action %s does not return to where it started", action)
		}
	}
}

func TestSeedOpenvCloudCloudspace(t *testing.T) {
	moves := []move{
		{name: "VIRTUAL|DEPLOYING|DEPLOYED", kind: "cloudspace", from: "VIRTUAL", action: "deploy", via: []string{"DEPLOYING"}, to: "DEPLOYED"},
		{name: "DEPLOYED|DISABLING|DISABLED", kind: "cloudspace", from: "DEPLOYED", action: "disable", via: []string{"DISABLING"}, to: "DISABLED"},
		{name: "DISABLED|ENABLING|DEPLOYED", kind: "cloudspace", from: "DISABLED", action: "enable", via: []string{"ENABLING"}, to: "DEPLOYED"},
		{name: "DEPLOYED / DISABLED|DELETING|DELETED (DEPLOYED)", kind: "cloudspace", from: "DEPLOYED", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "DEPLOYED / DISABLED|DELETING|DELETED (DISABLED)", kind: "cloudspace", from: "DISABLED", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "DELETED|DESTROYING|DESTROYED", kind: "cloudspace", from: "DELETED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "DELETED|RESTORING|DEPLOYED", kind: "cloudspace", from: "DELETED", action: "restore", via: []string{"RESTORING"}, to: "DEPLOYED"},
		{name: "DEPLOYED|PAUSING|PAUSED**", kind: "cloudspace", from: "DEPLOYED", action: "pause", via: []string{"PAUSING"}, to: "PAUSED"},
		{name: "DEPLOYED|RESETTING|DEPLOYED", kind: "cloudspace", from: "DEPLOYED", action: "reset", via: []string{"RESETTING"}, to: "DEPLOYED"},
		// Departure in specs/openvcloud.yaml: VIRTUAL may be deleted or destroyed, as machines.
		{name: "decided: VIRTUAL|DELETING|DELETED", kind: "cloudspace", from: "VIRTUAL", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "decided: VIRTUAL|DESTROYING|DESTROYED", kind: "cloudspace", from: "VIRTUAL", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
	}
	for _, m := range moves {
		t.Run(m.name, m.check)
	}
	// Row "PAUSED*|RESUMING|DEPLOYED" and its footnote: self-healing (the system, not a user)
	// restarts the virtual firewall and the cloudspace returns to DEPLOYED after a while.
	t.Run("PAUSED*|RESUMING|DEPLOYED (self-healing)", func(t *testing.T) {
		k := mustKind(t, "cloudspace")
		step{kind: "cloudspace", action: "resume", from: "PAUSED", to: "RESUMING", actor: ActorSystem, how: "start"}.check(t)
		step{kind: "cloudspace", action: "resume", from: "RESUMING", to: "DEPLOYED", how: "phase"}.check(t)
		a, _ := k.Action("resume")
		if a.After <= 0 {
			t.Errorf("resume starts after %v, want a self-healing delay", a.After)
		}
		if got, err := k.Lands("PAUSED", ""); err != nil || got != "DEPLOYED" {
			t.Errorf("Lands(PAUSED) = %q, %v, want DEPLOYED", got, err)
		}
		var ua *UnknownActionError
		if _, err := k.Check("PAUSED", "resume", false); !errors.As(err, &ua) {
			t.Errorf("Check(PAUSED, resume) = %v, want users refused", err)
		}
	})
	refusals := []refusal{
		{name: "no row: DEPLOYED destroy", why: "a live cloudspace is deleted first", kind: "cloudspace", from: "DEPLOYED", via: []string{"DESTROYING"}, to: "DESTROYED", action: "destroy"},
		{name: "no row: DISABLED pause", why: "only a deployed cloudspace pauses", kind: "cloudspace", from: "DISABLED", via: []string{"PAUSING"}, to: "PAUSED", action: "pause"},
	}
	for _, r := range refusals {
		t.Run(r.name, r.check)
	}
}

func TestSeedOpenvCloudAccount(t *testing.T) {
	moves := []move{
		{name: "CONFIRMED|DISABLING|DISABLED", kind: "account", from: "CONFIRMED", action: "disable", via: []string{"DISABLING"}, to: "DISABLED"},
		{name: "DISABLED|ENABLING|CONFIRMED", kind: "account", from: "DISABLED", action: "enable", via: []string{"ENABLING"}, to: "CONFIRMED"},
		{name: "CONFIRMED / DISABLED|DESTROYING|DESTROYED (CONFIRMED)", kind: "account", from: "CONFIRMED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "CONFIRMED / DISABLED|DESTROYING|DESTROYED (DISABLED)", kind: "account", from: "DISABLED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "CONFIRMED / DISABLED|DELETING|DELETED (CONFIRMED)", kind: "account", from: "CONFIRMED", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "CONFIRMED / DISABLED|DELETING|DELETED (DISABLED)", kind: "account", from: "DISABLED", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		// Departure in specs/openvcloud.yaml: the recycle bin is purged (DELETED → DESTROYED).
		{name: "decided: DELETED|DESTROYING|DESTROYED", kind: "account", from: "DELETED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		// The seed has no creation row: an account is CONFIRMED at once.
		{name: "decided: create lands CONFIRMED", kind: "account", from: "", action: "create", via: []string{}, to: "CONFIRMED"},
	}
	for _, m := range moves {
		if m.action == "create" {
			t.Run(m.name, func(t *testing.T) {
				step{kind: "account", action: "create", from: "", to: "CONFIRMED", actor: ActorUser, how: "start"}.check(t)
			})
			continue
		}
		t.Run(m.name, m.check)
	}
	refusals := []refusal{
		{name: "no row: DELETED enable", why: "the seed has no restore for accounts", kind: "account", from: "DELETED", via: []string{"ENABLING"}, to: "CONFIRMED", action: "enable"},
	}
	for _, r := range refusals {
		t.Run(r.name, r.check)
	}
}

func TestSeedOpenvCloudDisk(t *testing.T) {
	moves := []move{
		{name: "MODELED|CREATING|CREATED", kind: "disk", from: "MODELED", action: "create", via: []string{"CREATING"}, to: "CREATED"},
		{name: "CREATED|ATTACHING|ASSIGNED", kind: "disk", from: "CREATED", action: "attach", via: []string{"ATTACHING"}, to: "ASSIGNED"},
		{name: "ASSIGNED|DETACHING|CREATED", kind: "disk", from: "ASSIGNED", action: "detach", via: []string{"DETACHING"}, to: "CREATED"},
		{name: "CREATED|DELETING_DETACHED_DISK|DELETED", kind: "disk", from: "CREATED", action: "delete", via: []string{"DELETING_DETACHED_DISK"}, to: "DELETED"},
		{name: "CREATED|DESTROYING|DESTROYED", kind: "disk", from: "CREATED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "ASSIGNED|DELETING_ATTACHED_DISK|TOBEDELETED", kind: "disk", from: "ASSIGNED", action: "delete_attached", via: []string{"DELETING_ATTACHED_DISK"}, to: "TOBEDELETED"},
		{name: "ASSIGNED|DESTROYING|DESTROYED", kind: "disk", from: "ASSIGNED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		// The seed's two restore rows are swapped against its own definitions (DELETED =
		// detached disk in the recycle bin, TOBEDELETED = attached disk deleted with its VM);
		// DESIGN.md decides: restore each to where it was deleted from.
		{name: "decided (row DELETED|RESTORING_ATTACHED_DISK|ASSIGNED swapped): DELETED|RESTORING_DETACHED_DISK|CREATED", kind: "disk", from: "DELETED", action: "restore", via: []string{"RESTORING_DETACHED_DISK"}, to: "CREATED"},
		{name: "decided (row TOBEDELETED|RESTORING_DETACHED_DISK|CREATED swapped): TOBEDELETED|RESTORING_ATTACHED_DISK|ASSIGNED", kind: "disk", from: "TOBEDELETED", action: "restore_attached", via: []string{"RESTORING_ATTACHED_DISK"}, to: "ASSIGNED"},
		// Departure in specs/openvcloud.yaml: destroy purges the recycle bin.
		{name: "decided: DELETED|DESTROYING|DESTROYED", kind: "disk", from: "DELETED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "decided: TOBEDELETED|DESTROYING|DESTROYED", kind: "disk", from: "TOBEDELETED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
	}
	for _, m := range moves {
		t.Run(m.name, m.check)
	}
	refusals := []refusal{
		{name: "DELETED|RESTORING_ATTACHED_DISK|ASSIGNED", why: "swapped seed row: a detached disk in the recycle bin restores detached (DESIGN.md)",
			kind: "disk", from: "DELETED", via: []string{"RESTORING_ATTACHED_DISK"}, to: "ASSIGNED", action: "restore_attached"},
		{name: "TOBEDELETED|RESTORING_DETACHED_DISK|CREATED", why: "swapped seed row: a disk deleted with its VM restores attached (DESIGN.md)",
			kind: "disk", from: "TOBEDELETED", via: []string{"RESTORING_DETACHED_DISK"}, to: "CREATED", action: "restore"},
		{name: "no row: ASSIGNED|DELETING_DETACHED_DISK", why: "an attached disk is deleted to TOBEDELETED",
			kind: "disk", from: "ASSIGNED", via: []string{"DELETING_DETACHED_DISK"}, to: "DELETED", action: "delete"},
	}
	for _, r := range refusals {
		t.Run(r.name, r.check)
	}
	// The seed's definitions list: the four static states it defines.
	k := mustKind(t, "disk")
	for _, s := range []string{"CREATED", "ASSIGNED", "DELETED", "TOBEDELETED"} {
		if !k.IsStatic(s) {
			t.Errorf("disk state %s is not static", s)
		}
	}
}

func TestSeedOpenvCloudImage(t *testing.T) {
	moves := []move{
		{name: "VIRTUAL|CREATING|CREATED", kind: "image", from: "VIRTUAL", action: "create", via: []string{"CREATING"}, to: "CREATED"},
		{name: "CREATED|DISABLING|DISABLED", kind: "image", from: "CREATED", action: "disable", via: []string{"DISABLING"}, to: "DISABLED"},
		// The seed's second DISABLING is a slip for ENABLING (DESIGN.md).
		{name: "decided (row DISABLED|DISABLING|CREATED): DISABLED|ENABLING|CREATED", kind: "image", from: "DISABLED", action: "enable", via: []string{"ENABLING"}, to: "CREATED"},
		{name: "CREATED / DISABLED|DELETING|DELETED (CREATED)", kind: "image", from: "CREATED", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "CREATED / DISABLED|DELETING|DELETED (DISABLED)", kind: "image", from: "DISABLED", action: "delete", via: []string{"DELETING"}, to: "DELETED"},
		{name: "CREATED / DISABLED|DESTROYING|DESTROYED (CREATED)", kind: "image", from: "CREATED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "CREATED / DISABLED|DESTROYING|DESTROYED (DISABLED)", kind: "image", from: "DISABLED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
		{name: "decided: DELETED|DESTROYING|DESTROYED", kind: "image", from: "DELETED", action: "destroy", via: []string{"DESTROYING"}, to: "DESTROYED"},
	}
	for _, m := range moves {
		t.Run(m.name, m.check)
	}
	refusal{name: "DISABLED|DISABLING|CREATED", why: "slip for ENABLING (DESIGN.md)",
		kind: "image", from: "DISABLED", via: []string{"DISABLING"}, to: "CREATED", action: "disable"}.check(t)
}

func TestSeedOpenvCloudNode(t *testing.T) {
	moves := []move{
		{name: "ENABLED|DEACTIVATING|MAINTENANCE", kind: "node", from: "ENABLED", action: "deactivate", via: []string{"DEACTIVATING"}, to: "MAINTENANCE"},
		{name: "MAINTENANCE|ENABLING|ENABLED", kind: "node", from: "MAINTENANCE", action: "enable", via: []string{"ENABLING"}, to: "ENABLED"},
		{name: "ENABLED/MAINTENANCE|DECOMMISSIONING|DECOMMISSIONED (ENABLED)", kind: "node", from: "ENABLED", action: "decommission", via: []string{"DECOMMISSIONING"}, to: "DECOMMISSIONED"},
		{name: "ENABLED/MAINTENANCE|DECOMMISSIONING|DECOMMISSIONED (MAINTENANCE)", kind: "node", from: "MAINTENANCE", action: "decommission", via: []string{"DECOMMISSIONING"}, to: "DECOMMISSIONED"},
		{name: "ENABLED|UPDATING|ENABLED", kind: "node", from: "ENABLED", action: "update", via: []string{"UPDATING"}, to: "ENABLED"},
	}
	for _, m := range moves {
		t.Run(m.name, m.check)
	}
	refusals := []refusal{
		{name: "no row: MAINTENANCE|UPDATING", why: "only an enabled node updates", kind: "node", from: "MAINTENANCE", via: []string{"UPDATING"}, to: "MAINTENANCE", action: "update"},
		{name: "no row: DECOMMISSIONED|ENABLING|ENABLED", why: "DECOMMISSIONED is final", kind: "node", from: "DECOMMISSIONED", via: []string{"ENABLING"}, to: "ENABLED", action: "enable"},
	}
	for _, r := range refusals {
		t.Run(r.name, r.check)
	}
	if k := mustKind(t, "node"); !k.IsFinal("DECOMMISSIONED") {
		t.Error("DECOMMISSIONED is not final")
	}
}

// Seed 000's list "To all resources the following applies" and "Rollback actions".
func TestSeedOpenvCloudCommon(t *testing.T) {
	for _, name := range []string{"account", "cloudspace", "machine", "disk", "image"} {
		k := mustKind(t, name)
		// DESTROYED - object is permanently deleted.
		if !k.IsGone("DESTROYED") || !k.IsFinal("DESTROYED") {
			t.Errorf("%s: DESTROYED gone=%v final=%v, want both", name, k.IsGone("DESTROYED"), k.IsFinal("DESTROYED"))
		}
		// DELETED - moved to the recycle bin: the delete mode goes there, destroy beyond.
		if got := k.DeletionTargets("delete"); !slices.Contains(got, "DELETED") {
			t.Errorf("%s: DeletionTargets(delete) = %v, want DELETED", name, got)
		}
		if got := k.DeletionTargets("destroy"); !slices.Equal(got, []string{"DESTROYED"}) {
			t.Errorf("%s: DeletionTargets(destroy) = %v, want DESTROYED", name, got)
		}
		// VIRTUAL or MODELED - only the object model was created.
		switch name {
		case "disk":
			if k.Initial != "MODELED" {
				t.Errorf("disk initial = %q, want MODELED", k.Initial)
			}
		case "cloudspace", "machine", "image":
			if k.Initial != "VIRTUAL" {
				t.Errorf("%s initial = %q, want VIRTUAL", name, k.Initial)
			}
		}
	}
	for _, k := range builtin.Kinds() {
		if k.Family != "openvcloud" {
			continue
		}
		for _, a := range k.AllActions() {
			if len(a.Via) > 0 && !k.FailureRule(a).Rollback {
				t.Errorf("%s.%s does not roll back on failure", k.Name, a.Name)
			}
		}
	}
}

// ---- Seed 001: Blazar ------------------------------------------------------------------------

func TestSeedBlazarStatuses(t *testing.T) {
	lease := mustKind(t, "lease")
	tests := []struct {
		kind, status string
		static       bool
	}{
		// "A lease has the following four stable statuses"
		{"lease", "PENDING", true},
		{"lease", "ACTIVE", true},
		{"lease", "TERMINATED", true},
		{"lease", "ERROR", true},
		// "Transitional statuses are as follows"
		{"lease", "CREATING", false},
		{"lease", "STARTING", false},
		{"lease", "UPDATING", false},
		{"lease", "TERMINATING", false},
		{"lease", "DELETING", false},
		// "A reservation has the following four statuses"
		{"reservation", "pending", true},
		{"reservation", "active", true},
		{"reservation", "deleted", true},
		{"reservation", "error", true},
		// Event statuses (the consistency table's UNDONE, IN_PROGRESS, DONE; ERROR from status.py)
		{"event", "UNDONE", true},
		{"event", "IN_PROGRESS", false},
		{"event", "DONE", true},
		{"event", "ERROR", true},
	}
	for _, tt := range tests {
		k := mustKind(t, tt.kind)
		if k.IsStatic(tt.status) != tt.static || k.IsTransition(tt.status) == tt.static {
			t.Errorf("%s status %s: static=%v transition=%v, want static=%v", tt.kind, tt.status, k.IsStatic(tt.status), k.IsTransition(tt.status), tt.static)
		}
	}
	if !lease.IsError("ERROR") {
		t.Error(`lease: ERROR is not an error state ("unrecoverable failures")`)
	}
	// "DELETING: Any status can change to this status ... when a lease hangs up in the
	// STARTING status, delete should be allowed."
	for _, s := range lease.allStates() {
		if lease.IsGone(s) {
			continue
		}
		if _, err := lease.Check(s, "delete", false); err != nil {
			t.Errorf("lease.Check(%q, delete) = %v, want allowed from any status", s, err)
		}
	}
	if got, err := lease.Lands("DELETING", ""); err != nil || got != "DELETED" || !lease.IsGone(got) {
		t.Errorf("Lands(DELETING) = %q, %v, want the gone state DELETED", got, err)
	}
}

// DESIGN.md: "use the real status.py table, a superset of the seed".
func TestSeedBlazarLeaseTransitions(t *testing.T) {
	steps := []step{
		{name: "CREATING → PENDING", kind: "lease", action: "create", from: "", to: "CREATING", actor: ActorUser, how: "start"},
		{name: "CREATING → PENDING (done)", kind: "lease", action: "create", from: "CREATING", to: "PENDING", how: "phase"},
		{name: "PENDING → STARTING at start_date", kind: "lease", action: "start", from: "PENDING", to: "STARTING", actor: ActorTimer, how: "start"},
		{name: "STARTING → ACTIVE", kind: "lease", action: "start", from: "STARTING", to: "ACTIVE", how: "phase"},
		{name: "STARTING → ERROR", kind: "lease", action: "start", from: "STARTING", to: "ERROR", how: "fail"},
		{name: "ACTIVE → TERMINATING at end_date", kind: "lease", action: "end", from: "ACTIVE", to: "TERMINATING", actor: ActorTimer, how: "start"},
		{name: "TERMINATING → TERMINATED", kind: "lease", action: "end", from: "TERMINATING", to: "TERMINATED", how: "phase"},
		{name: "TERMINATING → ERROR", kind: "lease", action: "end", from: "TERMINATING", to: "ERROR", how: "fail"},
		{name: "status.py: ERROR → TERMINATING", kind: "lease", action: "terminate", from: "ERROR", to: "TERMINATING", actor: ActorUser, how: "start"},
		// UPDATING from any stable status back to the status derived from the events.
		{name: "PENDING → UPDATING", kind: "lease", action: "update", from: "PENDING", to: "UPDATING", actor: ActorUser, how: "start"},
		{name: "ACTIVE → UPDATING", kind: "lease", action: "update", from: "ACTIVE", to: "UPDATING", actor: ActorUser, how: "start"},
		{name: "TERMINATED → UPDATING", kind: "lease", action: "update", from: "TERMINATED", to: "UPDATING", actor: ActorUser, how: "start"},
		{name: "ERROR → UPDATING", kind: "lease", action: "update", from: "ERROR", to: "UPDATING", actor: ActorUser, how: "start"},
		{name: "UPDATING → ACTIVE (derived)", kind: "lease", action: "update", from: "UPDATING", to: "ACTIVE", how: "phase"},
		{name: "non-fatal update error restores the previous status", kind: "lease", action: "update", from: "UPDATING", to: "PENDING", how: "fail"},
		{name: "other update errors give ERROR", kind: "lease", action: "update", from: "UPDATING", to: "ERROR", how: "fatal"},
		{name: "DELETING from a transitional status", kind: "lease", action: "delete", from: "STARTING", to: "DELETING", actor: ActorUser, how: "start"},
		{name: "DELETING → DELETED", kind: "lease", action: "delete", from: "DELETING", to: "DELETED", how: "phase"},
		{name: "no user start: leases start at start_date", kind: "lease", from: "PENDING", to: "STARTING", actor: ActorUser, absent: true},
		{name: "CREATING → UPDATING is not a move (update from stable statuses only)", kind: "lease", action: "update", from: "CREATING", to: "UPDATING", absent: true},
	}
	for _, s := range steps {
		t.Run(s.name, s.check)
	}
	lease := mustKind(t, "lease")
	for name, field := range map[string]string{"start": "start_date", "end": "end_date"} {
		if a, _ := lease.Action(name); a.At != field || a.Actor != ActorTimer {
			t.Errorf("lease.%s: actor %s at %q, want the timer at %s", name, a.Actor, a.At, field)
		}
	}
	if lease.Update != "update" {
		t.Errorf("lease.Update = %q, want update", lease.Update)
	}
}

// ---- Seed 002: MobiledgeX --------------------------------------------------------------------

func TestSeedMobiledgeXInstances(t *testing.T) {
	for _, kind := range []string{"cluster_inst", "app_inst"} {
		steps := []step{
			// Create table.
			{name: "NotPresent|User create|CreateRequested", action: "create", from: "NotPresent", to: "CreateRequested", actor: ActorUser, how: "start"},
			{name: "CreateRequested|CRM response|Creating", action: "create", from: "CreateRequested", to: "Creating", actor: ActorCRM, how: "phase"},
			{name: "CreateRequested|CRM response|Ready (if Creating message was missed)", action: "create", from: "CreateRequested", to: "Ready", actor: ActorCRM, how: "skip"},
			{name: "CreateRequested|CRM error|CreateError", action: "create", from: "CreateRequested", to: "CreateError", actor: ActorCRM, how: "fail"},
			{name: "Creating|CRM response|Ready", action: "create", from: "Creating", to: "Ready", actor: ActorCRM, how: "phase"},
			{name: "Creating|CRM error|CreateError", action: "create", from: "Creating", to: "CreateError", actor: ActorCRM, how: "fail"},
			{name: "CreateError|Controller|NotPresent (undo)", action: "create", from: "CreateError", to: "NotPresent", actor: ActorController, how: "undo"},
			// Update table.
			{name: "Ready|User update|UpdateRequested", action: "update", from: "Ready", to: "UpdateRequested", actor: ActorUser, how: "start"},
			{name: "UpdateRequested|CRM response|Updating", action: "update", from: "UpdateRequested", to: "Updating", actor: ActorCRM, how: "phase"},
			{name: "UpdateRequested|CRM response|Ready (if Updating message was missed)", action: "update", from: "UpdateRequested", to: "Ready", actor: ActorCRM, how: "skip"},
			{name: "UpdateRequested|CRM error|UpdateError", action: "update", from: "UpdateRequested", to: "UpdateError", actor: ActorCRM, how: "fail"},
			{name: "Updating|CRM response|Ready", action: "update", from: "Updating", to: "Ready", actor: ActorCRM, how: "phase"},
			{name: "Updating|CRM error|UpdateError", action: "update", from: "Updating", to: "UpdateError", actor: ActorCRM, how: "fail"},
			// DESIGN.md: "an update error stays in UpdateError and may be retried" — the
			// seed's undo by the controller is decided against; UpdateError is left only by a
			// user's retried update (or a delete).
			{name: "UpdateError|Controller|Ready (undo) — decided against", from: "UpdateError", to: "Ready", actor: ActorController, absent: true},
			{name: "decided: UpdateError|User update|UpdateRequested (retry)", action: "update", from: "UpdateError", to: "UpdateRequested", actor: ActorUser, how: "start"},
			// Delete table.
			{name: "Ready|User delete|DeletePrepare", action: "delete", from: "Ready", to: "DeletePrepare", actor: ActorUser, how: "start"},
			{name: "DeletePrepare|Controller|DeleteRequested", action: "delete", from: "DeletePrepare", to: "DeleteRequested", actor: ActorController, how: "phase"},
			{name: "DeleteRequested|CRM response|Deleting", action: "delete", from: "DeleteRequested", to: "Deleting", actor: ActorCRM, how: "phase"},
			// The seed's "Deleted" is NotPresent: "the state of NotPresent means the object does not exist".
			{name: "DeleteRequested|CRM response|Deleted (if Deleting message was missed)", action: "delete", from: "DeleteRequested", to: "NotPresent", actor: ActorCRM, how: "skip"},
			{name: "DeleteRequested|CRM error|DeleteError", action: "delete", from: "DeleteRequested", to: "DeleteError", actor: ActorCRM, how: "fail"},
			{name: "Deleting|CRM response|NotPresent", action: "delete", from: "Deleting", to: "NotPresent", actor: ActorCRM, how: "phase"},
			{name: "Deleting|CRM error|DeleteError", action: "delete", from: "Deleting", to: "DeleteError", actor: ActorCRM, how: "fail"},
			{name: "DeleteError|Controller|Ready (undo)", action: "delete", from: "DeleteError", to: "Ready", actor: ActorController, how: "undo"},
		}
		for _, s := range steps {
			s.kind = kind
			t.Run(kind+"/"+s.name, s.check)
		}
		k := mustKind(t, kind)
		t.Run(kind+"/transitional states", func(t *testing.T) {
			if !k.IsGone("NotPresent") {
				t.Error("NotPresent: the object does not exist, want a gone state")
			}
			// DESIGN.md: delete is refused while transient (one action at a time on the CRM).
			for _, s := range k.States.Transition {
				if _, err := k.Check(s, "delete", true); err == nil {
					t.Errorf("Check(%q, delete) allowed, want refused while transient", s)
				}
			}
			if !k.IsStatic("UpdateError") || !k.IsError("UpdateError") {
				t.Error("UpdateError is not a static error state")
			}
		})
	}
	// DESIGN.md: an AppInst cannot be created or changed while its ClusterInst is not Ready;
	// a ClusterInst not while its cloudlet is upgrading or in UpdateError.
	for _, tt := range []struct{ kind, parent string }{{"app_inst", "cluster_inst"}, {"cluster_inst", "cloudlet"}} {
		k := mustKind(t, tt.kind)
		if k.Parent == nil || k.Parent.Kind != tt.parent {
			t.Fatalf("%s parent = %+v, want %s", tt.kind, k.Parent, tt.parent)
		}
		for _, a := range k.AllActions() {
			if got := k.RequiredParentStates(a); !slices.Equal(got, []string{"Ready"}) {
				t.Errorf("%s.%s needs parent in %v, want [Ready]", tt.kind, a.Name, got)
			}
		}
	}
}

func TestSeedMobiledgeXCloudletUpgrade(t *testing.T) {
	steps := []step{
		{name: "Ready|User|Initiates cloudlet upgrade|UpdateRequested", action: "upgrade", from: "Ready", to: "UpdateRequested", actor: ActorUser, how: "start"},
		{name: "UpdateRequested|CRMv1|Ack start of upgrade|Updating", action: "upgrade", from: "UpdateRequested", to: "Updating", actor: ActorCRM, how: "phase"},
		// The spec gives each phase one actor (the CRM); the seed names the controller, which
		// acks CRMv2's init before CRMv1's Updating ack arrives: Updating is skipped.
		{name: "UpdateRequested|Controller|CRMv2 connects, Controller ack for init|InitOk", action: "upgrade", from: "UpdateRequested", to: "InitOk", how: "skip"},
		{name: "UpdateRequested|CRMv1|Start CRMv2 fails|UpdateError", action: "upgrade", from: "UpdateRequested", to: "UpdateError", how: "fail"},
		{name: "Updating|Controller|CRMv2 connects, Controller ack for init|InitOk", action: "upgrade", from: "Updating", to: "InitOk", how: "phase"},
		{name: "Updating|CRMv2|Gather Info, Kill CRMv1|Ready", action: "upgrade", from: "Updating", to: "Ready", actor: ActorCRM, how: "skip"},
		{name: "Updating|CRMv1|CRMv2 bringup failed|UpdateError", action: "upgrade", from: "Updating", to: "UpdateError", how: "fail"},
		{name: "InitOk|CRMv2|Gather Info, Kill CRMv1|Ready", action: "upgrade", from: "InitOk", to: "Ready", actor: ActorCRM, how: "phase"},
		{name: "InitOk|CRMv1|CRMv2 bringup failed|UpdateError", action: "upgrade", from: "InitOk", to: "UpdateError", how: "fail"},
	}
	for _, s := range steps {
		s.kind = "cloudlet"
		t.Run(s.name, s.check)
	}
	// Row "UpdateError|CRMv1|Continue using CRMv1 (set Ready), resend all data|UpdateError":
	// the state stays UpdateError ("left as it is, so that it can be fixed manually by admin").
	t.Run("UpdateError|CRMv1|Continue using CRMv1|UpdateError", func(t *testing.T) {
		k := mustKind(t, "cloudlet")
		for _, e := range edgesFrom(k, "UpdateError") {
			if e.actor != ActorUser {
				t.Errorf("UpdateError is left by %s (%+v), want only an admin's action", e.actor, e)
			}
		}
		if got, err := k.Lands("UpdateError", ""); err != nil || got != "UpdateError" {
			t.Errorf("Lands(UpdateError) = %q, %v, want UpdateError", got, err)
		}
		// No upgrade again from UpdateError; the departure `fix` is the admin's manual fix.
		if _, err := k.Check("UpdateError", "upgrade", true); err == nil {
			t.Error("upgrade allowed from UpdateError")
		}
		step{kind: "cloudlet", action: "fix", from: "UpdateError", to: "Ready", actor: ActorUser, how: "start"}.check(t)
		if !k.IsError("UpdateError") {
			t.Error("UpdateError is not an error state")
		}
	})
	// "During which, modifications to appInst/clusterInst is not allowed": the cloudlet is
	// not Ready while upgrading or in UpdateError, and instances need it Ready.
	k := mustKind(t, "cloudlet")
	upgrade, _ := k.Action("upgrade")
	for _, p := range upgrade.Via {
		if slices.Contains(mustKind(t, "cluster_inst").Parent.States, p.State) {
			t.Errorf("cluster_inst may change while its cloudlet is in %s", p.State)
		}
	}
}

func TestSeedMobiledgeXCloudletCreate(t *testing.T) {
	steps := []step{
		{name: "Offline|User|Initiates cloudlet create|Init", action: "create", from: "Offline", to: "Init", actor: ActorUser, how: "start"},
		{name: "Offline|CRM|CRM started manually|Init", action: "crm_start", from: "Offline", to: "Init", actor: ActorCRM, how: "start"},
		{name: "Ready/Init/InitOk|CRM|Start up, new notify-id|Init (Ready)", action: "crm_restart", from: "Ready", to: "Init", actor: ActorCRM, how: "start"},
		{name: "Init|Controller|Ack cloudlet start|InitOk", from: "Init", to: "InitOk", actor: ActorController, how: "phase"},
		{name: "InitOk|CRM|Gather cloudlet data|Ready", from: "InitOk", to: "Ready", actor: ActorCRM, how: "phase"},
		{name: "InitOk|CRM|Gather cloudlet data failed, exits|Offline (create)", action: "create", from: "InitOk", to: "Offline", actor: ActorCRM, how: "fail"},
		{name: "InitOk|CRM|Gather cloudlet data failed, exits|Offline (crm_start)", action: "crm_start", from: "InitOk", to: "Offline", actor: ActorCRM, how: "fail"},
		{name: "InitOk|CRM|Gather cloudlet data failed, exits|Offline (crm_restart)", action: "crm_restart", from: "InitOk", to: "Offline", actor: ActorCRM, how: "fail"},
	}
	for _, s := range steps {
		s.kind = "cloudlet"
		t.Run(s.name, s.check)
	}
	// Row "Ready/Init/InitOk|CRM|Start up|Init" from Init and InitOk: a CRM restarting while
	// it registers re-runs the same registration, which the spec does not model as a separate
	// move (actions start from static states): the object stays in its operation and lands
	// Ready, as the row's registration does.
	t.Run("Ready/Init/InitOk|CRM|Start up|Init (Init, InitOk)", func(t *testing.T) {
		k := mustKind(t, "cloudlet")
		for _, s := range []string{"Init", "InitOk"} {
			if got, err := k.Lands(s, ""); err != nil || got != "Ready" {
				t.Errorf("Lands(%q) = %q, %v, want Ready", s, got, err)
			}
		}
	})
}

// ---- Seed 003: Savanna -----------------------------------------------------------------------

func TestSeedSavanna(t *testing.T) {
	k := mustKind(t, "cluster")
	createVia := []string{"Validating", "InfraUpdating", "Spawning", "Waiting", "Preparing", "Configuring", "Starting"}
	scaleVia := []string{"Validating", "Scaling", "Adding Instances", "Configuring", "Decommissioning", "Deleting Instances"}
	// "Creating a new Cluster": steps 1-8.
	t.Run("create: Validating … Starting → Active", func(t *testing.T) {
		if got := phaseStates(k.Create.Via); !slices.Equal(got, createVia) || k.Create.To != "Active" {
			t.Errorf("create via %v to %s, want %v to Active", got, k.Create.To, createVia)
		}
	})
	steps := []step{
		// "If any of validations fails, the Cluster will still be kept in database with Error".
		{name: "create: Validating fails → Error", action: "create", from: "Validating", to: "Error", how: "fail"},
		// "If Cluster creation fails, the Cluster will get into Error state."
		{name: "create: Spawning fails → Error", action: "create", from: "Spawning", to: "Error", how: "fail"},
		{name: "create: Starting → Active", action: "create", from: "Starting", to: "Active", how: "phase"},
		// "Scaling/Shrinking an existing Cluster": steps 1-7, from Active only (DESIGN.md).
		{name: "scale: Active → Validating", action: "scale", from: "Active", to: "Validating", actor: ActorUser, how: "start"},
		{name: "scale: Deleting Instances → Active", action: "scale", from: "Deleting Instances", to: "Active", how: "phase"},
		// "If an error occurs during Adding Instances operation, Savanna will first try to
		// rollback this operation. If rollback is impossible or fails itself ... Error".
		{name: "scale: Adding Instances fails → rolled back to Active", action: "scale", from: "Adding Instances", to: "Active", how: "fail"},
		{name: "scale: Adding Instances rollback fails → Error", action: "scale", from: "Adding Instances", to: "Error", how: "fatal"},
		{name: "scale from Error is refused", action: "scale", from: "Error", to: "Validating", absent: true},
		// "Deleting an existing Cluster": the only step, it removes it from the database.
		{name: "delete: Active → Deleting", action: "delete", from: "Active", to: "Deleting", actor: ActorUser, how: "start"},
		{name: "delete: Error → Deleting (\"stay in database until it is manually deleted\")", action: "delete", from: "Error", to: "Deleting", actor: ActorUser, how: "start"},
		{name: "delete: Deleting → Deleted", action: "delete", from: "Deleting", to: "Deleted", how: "phase"},
		// DESIGN.md: Deleting is never left except by removal.
		{name: "delete: Deleting fails → retried", action: "delete", from: "Deleting", to: "Deleting", how: "retry"},
	}
	for _, s := range steps {
		s.kind = "cluster"
		t.Run(s.name, s.check)
	}
	t.Run("scale via", func(t *testing.T) {
		a, _ := k.Action("scale")
		if got := phaseStates(a.Via); !slices.Equal(got, scaleVia) || a.To != "Active" || !slices.Equal(a.From, []string{"Active"}) {
			t.Errorf("scale from %v via %v to %s, want from [Active] via %v to Active", a.From, got, a.To, scaleVia)
		}
		if k.Update != "scale" {
			t.Errorf("Update = %q, want scale", k.Update)
		}
	})
	t.Run("Deleting is never left except by removal", func(t *testing.T) {
		for _, e := range edgesFrom(k, "Deleting") {
			if e.to != "Deleted" && e.to != "Deleting" {
				t.Errorf("Deleting is left for %s (%+v)", e.to, e)
			}
		}
	})
	t.Run("delete from any status", func(t *testing.T) {
		for _, s := range k.allStates() {
			if k.IsGone(s) {
				continue
			}
			if _, err := k.Check(s, "delete", false); err != nil {
				t.Errorf("Check(%q, delete) = %v", s, err)
			}
		}
	})
	if !k.IsError("Error") || !k.IsGone("Deleted") {
		t.Errorf("Error is error: %v; Deleted is gone: %v", k.IsError("Error"), k.IsGone("Deleted"))
	}
}

// ---- Seed 004: CB-Tumblebug ------------------------------------------------------------------

// The seed's "Allowed Transitions" matrix, every cell, for MCIs and VMs alike.
func TestSeedTumblebugActionMatrix(t *testing.T) {
	const yes, no, force = "✅", "❌", "✅ (Force)"
	actions := []string{"suspend", "resume", "reboot", "terminate"}
	matrix := []struct {
		status string
		cells  [4]string // Suspend, Resume, Reboot, Terminate
	}{
		{"Running", [4]string{yes, no, yes, yes}},
		{"Suspended", [4]string{no, yes, no, yes}},
		{"Creating", [4]string{no, no, no, no}},
		{"Terminating", [4]string{no, no, no, no}},
		{"Terminated", [4]string{no, no, no, no}},
		{"Failed", [4]string{no, no, no, force}},
	}
	for _, kind := range []string{"mci", "vm"} {
		k := mustKind(t, kind)
		for _, row := range matrix {
			for i, cell := range row.cells {
				action := actions[i]
				t.Run(kind+"/"+row.status+"/"+action+" "+cell, func(t *testing.T) {
					_, err := k.Check(row.status, action, false)
					_, forcedErr := k.Check(row.status, action, true)
					var it *InvalidTransitionError
					switch cell {
					case yes:
						if err != nil {
							t.Errorf("Check(%q, %q) = %v, want allowed", row.status, action, err)
						}
					case no:
						if !errors.As(err, &it) || it.NeedsForce {
							t.Errorf("Check(%q, %q) = %v, want refused", row.status, action, err)
						}
						// "force skips the checks" (DESIGN.md): from a static state that is not
						// final a forced action runs; transitional and final states refuse it.
						forcedOK := k.IsStatic(row.status) && !k.IsFinal(row.status)
						if (forcedErr == nil) != forcedOK {
							t.Errorf("Check(%q, %q, force) = %v, want allowed=%v", row.status, action, forcedErr, forcedOK)
						}
					case force:
						if !errors.As(err, &it) || !it.NeedsForce {
							t.Errorf("Check(%q, %q) = %v, want refused for want of force", row.status, action, err)
						}
						if forcedErr != nil {
							t.Errorf("Check(%q, %q, force) = %v, want allowed", row.status, action, forcedErr)
						}
					}
				})
			}
		}
	}
}

func TestSeedTumblebugStatuses(t *testing.T) {
	// The "MCI Status" and "VM Status" tables: status | stable?
	tests := []struct {
		kinds  []string
		status string
		stable string // "no", "yes", "final"
	}{
		{[]string{"mci"}, "Preparing", "no"},
		{[]string{"mci"}, "Prepared", "no"},
		{[]string{"mci", "vm"}, "Creating", "no"},
		{[]string{"mci", "vm"}, "Running", "yes"},
		{[]string{"mci", "vm"}, "Suspending", "no"},
		{[]string{"mci", "vm"}, "Suspended", "yes"},
		{[]string{"mci", "vm"}, "Resuming", "no"},
		{[]string{"mci", "vm"}, "Rebooting", "no"},
		{[]string{"mci", "vm"}, "Terminating", "no"},
		{[]string{"mci", "vm"}, "Terminated", "final"},
		// "Failed | Yes (Final)": decided as a static error state, not final, because the
		// seed's own matrix and diagrams let a forced terminate leave it (Failed → Terminating).
		{[]string{"mci", "vm"}, "Failed", "yes"},
		{[]string{"mci", "vm"}, "Undefined", "yes"},
	}
	for _, tt := range tests {
		for _, kind := range tt.kinds {
			k := mustKind(t, kind)
			static, final := k.IsStatic(tt.status), k.IsFinal(tt.status)
			want := map[string][2]bool{"no": {false, false}, "yes": {true, false}, "final": {true, true}}[tt.stable]
			if static != want[0] || final != want[1] || !k.HasState(tt.status) {
				t.Errorf("%s status %s: static=%v final=%v, want %s", kind, tt.status, static, final, tt.stable)
			}
		}
	}
	for _, kind := range []string{"mci", "vm"} {
		if k := mustKind(t, kind); !k.IsError("Failed") {
			t.Errorf("%s: Failed is not an error state", kind)
		}
	}
	// "Partial-* | Mixed VM states | Yes": an aggregated display status, not a state of the
	// machine (see TestAggregateMCIStatus).
	if mustKind(t, "mci").HasState("Partial-Running") {
		t.Error("Partial-Running is a declared state")
	}
}

// The "Action Constants" table: action | target status.
func TestSeedTumblebugActions(t *testing.T) {
	tests := []struct {
		action, from, target string
	}{
		{"create", "", "Running"},
		{"suspend", "Running", "Suspended"},
		{"resume", "Suspended", "Running"},
		{"reboot", "Running", "Running"},
		{"terminate", "Running", "Terminated"},
	}
	for _, kind := range []string{"mci", "vm"} {
		k := mustKind(t, kind)
		for _, tt := range tests {
			a, ok := k.Action(tt.action)
			if !ok || a.Target(tt.from) != tt.target {
				t.Errorf("%s.%s lands in %v, want %s", kind, tt.action, a, tt.target)
			}
		}
	}
	// "Refine | Clean up failed/undefined VMs | -": see TestRefineKeeps.
}

// The "MCI State Transitions" and "VM State Transitions" diagrams, edge by edge.
func TestSeedTumblebugDiagrams(t *testing.T) {
	mci := []step{
		{name: "[*] --> Preparing: Create MCI Request", action: "create", from: "", to: "Preparing", actor: ActorUser, how: "start"},
		{name: "Preparing --> Prepared: Resources Ready", from: "Preparing", to: "Prepared", how: "phase"},
		{name: "Preparing --> Failed: Resource Creation Error", from: "Preparing", to: "Failed", how: "fail"},
		{name: "Prepared --> Creating: Start VM Provisioning", from: "Prepared", to: "Creating", how: "phase"},
		{name: "Prepared --> Failed: Provisioning Error", from: "Prepared", to: "Failed", how: "fail"},
		{name: "Creating --> Running: All/Some VMs Running", from: "Creating", to: "Running", how: "phase"},
		{name: "Creating --> Failed: All VMs Failed", from: "Creating", to: "Failed", how: "fail"},
	}
	vm := []step{
		{name: "[*] --> Creating: Create Action", action: "create", from: "", to: "Creating", actor: ActorUser, how: "start"},
		{name: "Creating --> Running: Success", from: "Creating", to: "Running", how: "phase"},
		{name: "Creating --> Failed: Error", from: "Creating", to: "Failed", how: "fail"},
		{name: "Suspending --> Failed: Error", from: "Suspending", to: "Failed", how: "fail"},
		{name: "Resuming --> Failed: Error", from: "Resuming", to: "Failed", how: "fail"},
		{name: "Rebooting --> Failed: Error", from: "Rebooting", to: "Failed", how: "fail"},
		{name: "Terminating --> Failed: Error", from: "Terminating", to: "Failed", how: "fail"},
	}
	common := []step{
		{name: "Running --> Suspending: Suspend Action", action: "suspend", from: "Running", to: "Suspending", actor: ActorUser, how: "start"},
		{name: "Running --> Rebooting: Reboot Action", action: "reboot", from: "Running", to: "Rebooting", actor: ActorUser, how: "start"},
		{name: "Running --> Terminating: Terminate Action", action: "terminate", from: "Running", to: "Terminating", actor: ActorUser, how: "start"},
		{name: "Suspending --> Suspended", from: "Suspending", to: "Suspended", how: "phase"},
		{name: "Suspended --> Resuming: Resume Action", action: "resume", from: "Suspended", to: "Resuming", actor: ActorUser, how: "start"},
		{name: "Suspended --> Terminating: Terminate Action", action: "terminate", from: "Suspended", to: "Terminating", actor: ActorUser, how: "start"},
		{name: "Resuming --> Running", from: "Resuming", to: "Running", how: "phase"},
		{name: "Rebooting --> Running: Success", from: "Rebooting", to: "Running", how: "phase"},
		{name: "Terminating --> Terminated", from: "Terminating", to: "Terminated", how: "phase"},
		{name: "Failed --> Terminating: Terminate Force", action: "terminate", from: "Failed", to: "Terminating", actor: ActorUser, how: "start"},
	}
	for _, kind := range []string{"mci", "vm"} {
		steps := slices.Concat(common, map[string][]step{"mci": mci, "vm": vm}[kind])
		for _, s := range steps {
			s.kind = kind
			t.Run(kind+"/"+s.name, s.check)
		}
		// "Terminated --> [*]": nothing leaves Terminated but the removal.
		k := mustKind(t, kind)
		for _, e := range edgesFrom(k, "Terminated") {
			if !k.IsGone(e.to) {
				t.Errorf("%s: Terminated is left by %+v", kind, e)
			}
		}
	}
}

// The cascade of seed 000's disk definitions and DESIGN.md: "Deleting a machine moves its
// attached disks to TOBEDELETED; restoring the machine restores them."
func TestSeedOpenvCloudCascadeStates(t *testing.T) {
	if got := moves(t, "RUNNING", "DELETED"); !slices.Equal(got, []string{"ASSIGNED→TOBEDELETED"}) {
		t.Errorf("deleting a machine moves its disks %v", got)
	}
	if got := moves(t, "DELETED", "HALTED"); !slices.Equal(got, []string{"TOBEDELETED→ASSIGNED"}) {
		t.Errorf("restoring a machine moves its disks %v", got)
	}
}
