package lifecycle

import (
	"errors"
	"slices"
	"testing"
)

func TestFamilyFunctions(t *testing.T) {
	vms := func(states ...string) []View {
		out := make([]View, len(states))
		for i, s := range states {
			out[i] = View{ID: "vm", Kind: "vm", State: s}
		}
		return out
	}
	// The MCI's whole derivation: the generic dominant_state of its spec, then the family's
	// status fields.
	reg := Builtin()
	mci, err := reg.Kind("mci")
	if err != nil {
		t.Fatal(err)
	}
	derive, ok := reg.Derivation(mci.Derive)
	if !ok {
		t.Fatal("the mci kind's derive has no function")
	}
	d := derive(View{ID: "mci-1", Kind: "mci", Action: "suspend", Target: "Suspended"}, vms("Suspending", "Suspended", "Running"))
	if d.State != "Suspended" || d.Status["text"] != "Partial-Suspended:1 (R:1/3)" || d.Status["target_action"] != "suspend" || d.Status["target_status"] != "Suspended" {
		t.Errorf("MCI status while suspending = %+v", d)
	}
	if counts := d.Status["status_count"].(map[string]any); counts["count_total"] != 3 || counts["count_suspending"] != 1 {
		t.Errorf("status_count = %v", counts)
	}
	d = derive(View{ID: "mci-1", Kind: "mci"}, vms("Running", "Running"))
	if d.State != "Running" || d.Status["target_action"] != "None" || d.Status["partial"] != false {
		t.Errorf("idle MCI status = %+v", d)
	}
	leaseKind, err := Builtin().Kind("lease")
	if err != nil {
		t.Fatal(err)
	}
	// The invariants find the children through the kind's relations: renamed copies of the
	// kinds (an MCI "fleet" of "node"s, a lease "booking" of "slot"s) are checked as the
	// originals are.
	for _, names := range []struct{ mci, vm, lease, reservation, event string }{
		{"mci", "vm", "lease", "reservation", "event"},
		{"fleet", "node", "booking", "slot", "tick"},
	} {
		mciDecl := renamedChildren(mci, names.mci, map[string]string{"vm": names.vm})
		vmsOf := func(states ...string) []View {
			out := vms(states...)
			for i := range out {
				out[i].Kind = names.vm
			}
			return out
		}
		check, _ := NewRegistry().Invariant("tumblebug.mci_aggregate")
		self := View{ID: "m", Kind: names.mci, Decl: mciDecl, Status: map[string]any{"text": "Running:2 (R:2/2)"}}
		if err := check(self, vmsOf("Running", "Running")); err != nil {
			t.Errorf("%s: consistent MCI: %v", names.mci, err)
		}
		if err := check(self, vmsOf("Running", "Failed")); err == nil {
			t.Errorf("%s: an MCI whose text lags its VMs passed the invariant", names.mci)
		}

		lease, _ := NewRegistry().Invariant("blazar.lease_consistency")
		leaseDecl := renamedChildren(leaseKind, names.lease, map[string]string{"reservation": names.reservation, "event": names.event})
		family := func(lease string, res string, start, end string) (View, []View) {
			return View{ID: "l", Kind: names.lease, State: lease, Decl: leaseDecl}, []View{
				{Kind: names.reservation, State: res},
				{Kind: names.event, State: start, Spec: map[string]any{"event_type": EventStartLease}},
				{Kind: names.event, State: end, Spec: map[string]any{"event_type": EventEndLease}},
				{Kind: "other", State: "x"},
			}
		}
		for _, ok := range [][4]string{
			{"PENDING", "pending", "UNDONE", "UNDONE"},
			{"ACTIVE", "active", "DONE", "UNDONE"},
			{"TERMINATED", "deleted", "DONE", "DONE"},
			{"TERMINATED", "deleted", "ERROR", "DONE"}, // terminated from ERROR
			{"ERROR", "error", "ERROR", "UNDONE"},
		} {
			if err := lease(family(ok[0], ok[1], ok[2], ok[3])); err != nil {
				t.Errorf("%s %v: %v", names.lease, ok, err)
			}
		}
		var le *LeaseConsistencyError
		if err := lease(family("ACTIVE", "pending", "DONE", "UNDONE")); !errors.As(err, &le) {
			t.Errorf("%s: ACTIVE with a pending reservation: %v", names.lease, err)
		}
		if err := lease(family("ACTIVE", "active", "DONE", "IN_PROGRESS")); err == nil {
			t.Errorf("%s: ACTIVE with end_lease IN_PROGRESS passed", names.lease)
		}
		status, _ := NewRegistry().funcs.derive("blazar.lease_status")
		_, kids := family("UPDATING", "active", "DONE", "UNDONE")
		if d := status(View{}, kids); d.State != "ACTIVE" {
			t.Errorf("%s: lease status from events = %q, want ACTIVE", names.lease, d.State)
		}
	}
}

// renamedChildren is a copy of k named name whose child declarations name the child kinds
// renamed (old name: new name).
func renamedChildren(k *Kind, name string, renamed map[string]string) *Kind {
	c := *k
	c.Name = name
	c.Children = slices.Clone(k.Children)
	for i := range c.Children {
		if n, ok := renamed[c.Children[i].Kind]; ok {
			c.Children[i].Kind = n
		}
	}
	return &c
}

// A registry's functions are its own: what one registers, another does not see, and the
// built-in families' are in every registry.
func TestRegisterFunctions(t *testing.T) {
	reg, other := NewRegistry(), NewRegistry()
	reg.RegisterDerive("test.none", func(View, []View) Derived { return Derived{State: "X"} })
	reg.RegisterCountDerive("test.count", func(View, map[string]int) Derived { return Derived{State: "Y"} })
	reg.RegisterInvariant("test.never", func(View, []View) error { return errors.New("never") })
	if f, ok := reg.Derivation(&Derive{Function: "test.none"}); !ok || f(View{}, nil).State != "X" {
		t.Error("registered derive function not found")
	}
	if f, ok := reg.CountDerivation(&Derive{Function: "test.count"}); !ok || f(View{}, nil).State != "Y" {
		t.Error("registered count derive function not found")
	}
	if f, ok := reg.Invariant("test.never"); !ok || f(View{}, nil) == nil {
		t.Error("registered invariant not found")
	}
	if _, ok := reg.Derivation(&Derive{Function: "test.missing"}); ok {
		t.Error("an unregistered function was found")
	}
	for name, found := range map[string]bool{
		"derive":       func() bool { _, ok := other.Derivation(&Derive{Function: "test.none"}); return ok }(),
		"count derive": func() bool { _, ok := other.CountDerivation(&Derive{Function: "test.count"}); return ok }(),
		"invariant":    func() bool { _, ok := other.Invariant("test.never"); return ok }(),
		"built-in kind check": func() bool {
			_, err := Parse("k.yaml", []byte("kinds:\n  - {name: w, collection: ws, states: {static: [A]}, create: {to: A}, invariants: [test.never]}\n"))
			return err == nil
		}(),
	} {
		if found {
			t.Errorf("another registry (or the kind file check) sees the %s registered in one", name)
		}
	}
	for _, name := range []string{"blazar.lease_consistency", "tumblebug.mci_aggregate"} {
		if _, ok := other.Invariant(name); !ok {
			t.Errorf("the built-in invariant %s is not in a new registry", name)
		}
	}
}

func TestPropagationMatching(t *testing.T) {
	mci := mustKind(t, "mci")
	if got := mci.StartPropagations("suspend"); len(got) != 1 || got[0].To.Children != "vm" || !got[0].Wait || got[0].RunAction("suspend") != "suspend" {
		t.Errorf("mci suspend propagations = %+v", got)
	}
	if got := mci.StartPropagations("refine"); len(got) != 1 || !got[0].Remove || !got[0].Picks("Failed", nil) || got[0].Picks("Running", nil) {
		t.Errorf("mci refine propagations = %+v", got)
	}
	lease := mustKind(t, "lease")
	start := lease.StartPropagations("start")
	if len(start) != 1 || !start[0].Follow || !start[0].Picks("UNDONE", map[string]any{"event_type": "start_lease"}) ||
		start[0].Picks("UNDONE", map[string]any{"event_type": "end_lease"}) {
		t.Errorf("lease start propagation = %+v", start)
	}
	if got := lease.LandPropagations("ERROR", "PENDING", "start", true); len(got) != 1 || got[0].Run != "fail" {
		t.Errorf("a failed start's landing = %+v", got)
	}
	if got := lease.LandPropagations("ERROR", "PENDING", "start", false); len(got) != 0 {
		t.Errorf("a non-failed landing in ERROR fires %+v", got)
	}
	limit := start[0].Limit
	if limit != nil {
		t.Errorf("lease start has a limit %+v", limit)
	}
	l := mci.StartPropagations("terminate")[0].Limit
	if g := l.For("aws"); g.Inner != 10 || g.PerInner != 30 {
		t.Errorf("aws limits = %+v", g)
	}
	if g := l.For("nimbus"); g != l.Default {
		t.Errorf("unknown CSP limits = %+v, want the default", g)
	}
}

func TestSelectors(t *testing.T) {
	vm, mci := mustKind(t, "vm"), mustKind(t, "mci")
	tests := []struct {
		sel  Selector
		self *Kind
		kind string
		text string
	}{
		{Selector{Children: "vm"}, mci, "vm", "children vm"},
		{Selector{Descendants: "app_inst"}, mustKind(t, "cloudlet"), "app_inst", "descendants app_inst"},
		{Selector{Parent: true}, vm, "mci", "parent"},
		{Selector{Parent: true}, mci, "", "parent"},
		{Selector{Linked: &LinkRef{Kind: "disk", Field: "machine_id"}}, mustKind(t, "machine"), "disk", "disk objects linked by machine_id"},
		{Selector{}, mci, "", "nothing"},
	}
	for _, tt := range tests {
		if got := tt.sel.Kind(tt.self); got != tt.kind {
			t.Errorf("%+v.Kind(%s) = %q, want %q", tt.sel, tt.self.Name, got, tt.kind)
		}
		if got := tt.sel.String(); got != tt.text {
			t.Errorf("%+v.String() = %q, want %q", tt.sel, got, tt.text)
		}
	}
}

func TestGuardsAndPolicies(t *testing.T) {
	app := mustKind(t, "app_inst")
	update, _ := app.Action("update")
	guards := app.GuardsFor(update)
	if len(guards) != 2 || guards[0].Ancestor != "cluster_inst" || guards[1].Ancestor != "cloudlet" || !slices.Equal(guards[1].States, []string{"Ready"}) {
		t.Errorf("app_inst update guards = %+v", guards)
	}
	machine := mustKind(t, "machine")
	del, _ := machine.Action("delete")
	if got := machine.GuardsFor(del); len(got) != 0 {
		t.Errorf("machine delete (ignore_parent) guards = %+v", got)
	}
	g := Guard{Actions: Names{"launch"}}
	if a, _ := machine.Action("start"); g.AppliesTo(a) {
		t.Error("a guard on launch applies to start")
	}
	for kind, want := range map[string]string{"cluster_inst": DeleteRefuse, "reservation": DeleteCascade, "machine": DeleteDetach, "account": DeleteCascade} {
		if got := mustKind(t, kind).DeletePolicy(); got != want {
			t.Errorf("%s delete policy = %q, want %q", kind, got, want)
		}
	}
	reg := builtin
	for _, tt := range []struct {
		kind, action string
		want         bool
	}{
		{"reservation", "activate", true}, {"event", "run", true}, {"disk", "machine_deleted", true}, {"vm", "terminate", true},
		{"vm", "lose_track", false}, {"cloudlet", "crm_restart", false}, {"machine", "start", false},
	} {
		if got := reg.DrivenByRelations(tt.kind, tt.action); got != tt.want {
			t.Errorf("DrivenByRelations(%s, %s) = %v, want %v", tt.kind, tt.action, got, tt.want)
		}
	}
	if got := mustKind(t, "disk").linkTo("nope"); got != "" {
		t.Errorf("linkTo(nope) = %q", got)
	}
}

func TestNamesScalarOrList(t *testing.T) {
	kinds, err := Parse("n.yaml", []byte(`kinds:
  - name: box
    collection: boxes
    parent: {kind: crate}
    states: {static: [A, B]}
    create: {to: A}
    actions:
      - {name: go, from: [A], to: B}
      - {name: back, from: [B], to: A}
    propagate:
      - {start: go, to: {parent: true}, run: go}
      - {start: [go, back], to: {parent: true}, run: back}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds[0].Propagate[1].Start; !slices.Equal(got, []string{"go", "back"}) {
		t.Errorf("start list = %v", got)
	}
	if got := kinds[0].Propagate[0].Start; !slices.Equal(got, []string{"go"}) {
		t.Errorf("start scalar = %v", got)
	}
}
