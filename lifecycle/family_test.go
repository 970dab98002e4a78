package lifecycle

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func repeat(status string, n int) []string { return slices.Repeat([]string{status}, n) }

// ---- CB-Tumblebug: MCI status aggregation ------------------------------------------------------

func TestAggregateMCIStatus(t *testing.T) {
	tests := []struct {
		name     string
		give     []string
		want     string
		dominant string
		partial  bool
	}{
		// The seed's "Example Status" table.
		{name: "seed: all 5 VMs are running", give: repeat("Running", 5), want: "Running:5 (R:5/5)", dominant: "Running"},
		{name: "seed: 3 of 5 VMs running, others in different states",
			give: slices.Concat(repeat("Running", 3), []string{"Suspended", "Failed"}), want: "Partial-Running:3 (R:3/5)", dominant: "Running", partial: true},
		{name: "seed: 4 VMs suspended, 1 still running",
			give: slices.Concat(repeat("Suspended", 4), []string{"Running"}), want: "Partial-Suspended:4 (R:1/5)", dominant: "Suspended", partial: true},
		{name: "seed: all 5 VMs terminated", give: repeat("Terminated", 5), want: "Terminated:5 (R:0/5)", dominant: "Terminated"},
		// DESIGN.md: if every VM of a create fails the MCI is Failed.
		{name: "every VM failed", give: repeat("Failed", 3), want: "Failed:3 (R:0/3)", dominant: "Failed"},
		// The seed's aggregation flowchart examples.
		{name: "seed: Running:10 (R:10/10)", give: repeat("Running", 10), want: "Running:10 (R:10/10)", dominant: "Running"},
		{name: "seed: Partial-Suspended:6 (R:4/10)",
			give: slices.Concat(repeat("Running", 4), repeat("Suspended", 6)), want: "Partial-Suspended:6 (R:4/10)", dominant: "Suspended", partial: true},
		{name: "seed: Terminated:10 (R:0/10)", give: repeat("Terminated", 10), want: "Terminated:10 (R:0/10)", dominant: "Terminated"},
		// Ties go to the earlier of Failed, Suspended, Running, Terminated, Creating,
		// Suspending, Resuming, Rebooting, Terminating, Undefined (DESIGN.md).
		{name: "tie Suspended beats Running", give: []string{"Running", "Suspended", "Running", "Suspended"},
			want: "Partial-Suspended:2 (R:2/4)", dominant: "Suspended", partial: true},
		{name: "tie Failed beats everything", give: []string{"Running", "Failed"}, want: "Partial-Failed:1 (R:1/2)", dominant: "Failed", partial: true},
		{name: "tie Creating beats Terminating", give: []string{"Terminating", "Creating"}, want: "Partial-Creating:1 (R:0/2)", dominant: "Creating", partial: true},
		{name: "three-way tie", give: []string{"Rebooting", "Resuming", "Suspending"}, want: "Partial-Suspending:1 (R:0/3)", dominant: "Suspending", partial: true},
		{name: "the most frequent wins over the tie order", give: []string{"Failed", "Undefined", "Undefined"},
			want: "Partial-Undefined:2 (R:0/3)", dominant: "Undefined", partial: true},
		// Unknown statuses count as Undefined.
		{name: "unknown statuses are Undefined", give: []string{"Exploding", "", "Running"}, want: "Partial-Undefined:2 (R:1/3)", dominant: "Undefined", partial: true},
		{name: "MCI statuses are not VM statuses", give: []string{"Preparing", "Partial-Running"}, want: "Undefined:2 (R:0/2)", dominant: "Undefined"},
		{name: "no VMs", give: nil, want: "Undefined:0 (R:0/0)", dominant: "Undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AggregateMCIStatus(tt.give)
			if got.Text != tt.want || got.Dominant != tt.dominant || got.Partial != tt.partial {
				t.Errorf("AggregateMCIStatus(%q) = %+v, want %q (dominant %s, partial %v)", tt.give, got, tt.want, tt.dominant, tt.partial)
			}
			if got.Count.Total != len(tt.give) {
				t.Errorf("Count.Total = %d, want %d", got.Count.Total, len(tt.give))
			}
			// The order of the VMs does not matter.
			rev := slices.Clone(tt.give)
			slices.Reverse(rev)
			if again := AggregateMCIStatus(rev); again != got {
				t.Errorf("AggregateMCIStatus(%q) = %+v, want %+v", rev, again, got)
			}
			// The dominant status is a state of the mci kind.
			if !mustKind(t, "mci").HasState(got.Dominant) {
				t.Errorf("dominant %s is not an mci state", got.Dominant)
			}
		})
	}
}

func TestAggregateMCIStatusCount(t *testing.T) {
	give := []string{"Creating", "Running", "Running", "Failed", "Suspended", "Rebooting", "Terminated",
		"Suspending", "Resuming", "Terminating", "Undefined", "what"}
	got := AggregateMCIStatus(give).Count
	want := StatusCount{Total: 12, Creating: 1, Running: 2, Failed: 1, Suspended: 1, Rebooting: 1, Terminated: 1,
		Suspending: 1, Resuming: 1, Terminating: 1, Undefined: 2}
	if got != want {
		t.Errorf("Count = %+v, want %+v", got, want)
	}
}

// Every pair of statuses tied: the earlier in the tie order wins.
func TestAggregateMCIStatusTieOrder(t *testing.T) {
	for i, a := range mciTieOrder {
		for _, b := range mciTieOrder[i+1:] {
			for _, give := range [][]string{{a, b}, {b, a}} {
				if got := AggregateMCIStatus(give); got.Dominant != a {
					t.Errorf("AggregateMCIStatus(%q).Dominant = %s, want %s", give, got.Dominant, a)
				}
			}
		}
	}
	// Every VM status the vm kind declares is counted under its own name.
	vm := mustKind(t, "vm")
	for _, s := range vm.allStates() {
		if !slices.Contains(mciTieOrder, s) {
			t.Errorf("vm state %s is missing from the tie order", s)
		}
		if got := AggregateMCIStatus([]string{s}); got.Dominant != s || got.Text != s+":1 (R:"+map[bool]string{true: "1", false: "0"}[s == "Running"]+"/1)" {
			t.Errorf("AggregateMCIStatus([%s]) = %+v", s, got)
		}
	}
}

func TestRefineKeeps(t *testing.T) {
	// "The refine action removes VMs in Failed or Undefined status from an MCI".
	for _, s := range mciTieOrder {
		want := s != "Failed" && s != "Undefined"
		if got := RefineKeeps(s); got != want {
			t.Errorf("RefineKeeps(%q) = %v, want %v", s, got, want)
		}
	}
	if RefineKeeps("Exploding") {
		t.Error(`RefineKeeps("Exploding") = true, want false (unknown statuses count as Undefined)`)
	}
}

// ---- Blazar: lease ↔ reservation ↔ event consistency --------------------------------------------

func ev(start, end string) map[string]string {
	return map[string]string{EventStartLease: start, EventEndLease: end}
}

// One group of cases per row of the seed's "Relationships between statuses" table.
func TestCheckLeaseConsistency(t *testing.T) {
	const (
		U  = EventUndone
		IP = EventInProgress
		D  = EventDone
		E  = EventError
	)
	tests := []struct {
		name         string
		lease        string
		reservations []string
		events       map[string]string
		wantErr      string // "" means consistent
	}{
		// CREATING | pending | start_lease: UNDONE, end_lease: UNDONE
		{"CREATING ok", "CREATING", []string{"pending"}, ev(U, U), ""},
		{"CREATING active reservation", "CREATING", []string{"active"}, ev(U, U), "reservation is active, want pending"},
		{"CREATING start in progress", "CREATING", []string{"pending"}, ev(IP, U), "start_lease event is IN_PROGRESS, want UNDONE"},
		{"CREATING end done", "CREATING", []string{"pending"}, ev(U, D), "end_lease event is DONE, want UNDONE"},
		// PENDING | pending | start_lease: UNDONE, end_lease: UNDONE
		{"PENDING ok", "PENDING", []string{"pending", "pending"}, ev(U, U), ""},
		{"PENDING one reservation error", "PENDING", []string{"pending", "error"}, ev(U, U), "reservation is error, want pending"},
		{"PENDING start done", "PENDING", []string{"pending"}, ev(D, U), "start_lease event is DONE, want UNDONE"},
		// STARTING | pending or active or error | start_lease: IN_PROGRESS, end_lease: UNDONE
		{"STARTING pending", "STARTING", []string{"pending"}, ev(IP, U), ""},
		{"STARTING active", "STARTING", []string{"active"}, ev(IP, U), ""},
		{"STARTING error", "STARTING", []string{"error"}, ev(IP, U), ""},
		{"STARTING mixed", "STARTING", []string{"pending", "active", "error"}, ev(IP, U), ""},
		{"STARTING deleted", "STARTING", []string{"deleted"}, ev(IP, U), "reservation is deleted, want pending, active or error"},
		{"STARTING start undone", "STARTING", []string{"pending"}, ev(U, U), "start_lease event is UNDONE, want IN_PROGRESS"},
		{"STARTING end in progress", "STARTING", []string{"active"}, ev(IP, IP), "end_lease event is IN_PROGRESS, want UNDONE"},
		// ACTIVE | active | start_lease: DONE, end_lease: UNDONE
		{"ACTIVE ok", "ACTIVE", []string{"active"}, ev(D, U), ""},
		{"ACTIVE pending reservation", "ACTIVE", []string{"pending"}, ev(D, U), "reservation is pending, want active"},
		{"ACTIVE start in progress", "ACTIVE", []string{"active"}, ev(IP, U), "start_lease event is IN_PROGRESS, want DONE"},
		{"ACTIVE end done", "ACTIVE", []string{"active"}, ev(D, D), "end_lease event is DONE, want UNDONE"},
		// TERMINATING | active or deleted or error | start_lease: DONE, end_lease: IN_PROGRESS
		{"TERMINATING active", "TERMINATING", []string{"active"}, ev(D, IP), ""},
		{"TERMINATING deleted", "TERMINATING", []string{"deleted"}, ev(D, IP), ""},
		{"TERMINATING error", "TERMINATING", []string{"error"}, ev(D, IP), ""},
		{"TERMINATING pending", "TERMINATING", []string{"pending"}, ev(D, IP), "reservation is pending, want active, deleted or error"},
		{"TERMINATING end undone", "TERMINATING", []string{"active"}, ev(D, U), "end_lease event is UNDONE, want IN_PROGRESS"},
		{"TERMINATING end done", "TERMINATING", []string{"deleted"}, ev(D, D), "end_lease event is DONE, want IN_PROGRESS"},
		// TERMINATED | deleted | start_lease: DONE, end_lease: DONE
		{"TERMINATED ok", "TERMINATED", []string{"deleted"}, ev(D, D), ""},
		{"TERMINATED active reservation", "TERMINATED", []string{"active"}, ev(D, D), "reservation is active, want deleted"},
		{"TERMINATED end in progress", "TERMINATED", []string{"deleted"}, ev(D, IP), "end_lease event is IN_PROGRESS, want DONE"},
		// DELETING | Any status | Any status
		{"DELETING anything", "DELETING", []string{"pending", "active", "deleted", "error"}, ev(IP, IP), ""},
		{"DELETING errors", "DELETING", []string{"error"}, ev(E, E), ""},
		// UPDATING | Any status | Any status other than IN_PROGRESS
		{"UPDATING any reservation", "UPDATING", []string{"pending", "active", "deleted", "error"}, ev(D, U), ""},
		{"UPDATING done events", "UPDATING", []string{"deleted"}, ev(D, D), ""},
		{"UPDATING start in progress", "UPDATING", []string{"pending"}, ev(IP, U), "start_lease event is IN_PROGRESS during an update"},
		{"UPDATING end in progress", "UPDATING", []string{"active"}, ev(D, IP), "end_lease event is IN_PROGRESS during an update"},
		// Not in the table: ERROR leases are unconstrained; unknown statuses are refused.
		{"ERROR unconstrained", "ERROR", []string{"error", "active"}, ev(E, IP), ""},
		{"unknown lease status", "FLYING", []string{"pending"}, ev(U, U), "unknown lease status"},
		// Events that do not exist yet are not checked; other event types are ignored.
		{"no events yet", "CREATING", []string{"pending"}, nil, ""},
		{"only the start event", "ACTIVE", []string{"active"}, map[string]string{EventStartLease: D}, ""},
		{"other event types", "PENDING", nil, map[string]string{"before_end_lease": D}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckLeaseConsistency(tt.lease, tt.reservations, tt.events)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("CheckLeaseConsistency(%q, %q, %v) = %v, want nil", tt.lease, tt.reservations, tt.events, err)
				}
				return
			}
			var lc *LeaseConsistencyError
			if !errors.As(err, &lc) || lc.Lease != tt.lease || !strings.Contains(lc.Reason, tt.wantErr) {
				t.Errorf("CheckLeaseConsistency(%q, %q, %v) = %v, want %q", tt.lease, tt.reservations, tt.events, err, tt.wantErr)
			}
		})
	}
}

// The consistency table speaks of the statuses the lease, reservation and event kinds declare.
func TestLeaseRulesMatchKinds(t *testing.T) {
	lease, res, event := mustKind(t, "lease"), mustKind(t, "reservation"), mustKind(t, "event")
	for status, rule := range leaseRules {
		if !lease.HasState(status) {
			t.Errorf("rule for %s: not a lease status", status)
		}
		for _, r := range rule.reservations {
			if !res.IsStatic(r) {
				t.Errorf("rule for %s: %s is not a reservation status", status, r)
			}
		}
		for _, e := range slices.Concat(rule.start, rule.end) {
			if !event.HasState(e) {
				t.Errorf("rule for %s: %s is not an event status", status, e)
			}
		}
	}
	for _, s := range lease.allStates() {
		if _, ok := leaseRules[s]; !ok && s != "ERROR" && !lease.IsGone(s) {
			t.Errorf("lease status %s has no consistency rule", s)
		}
	}
}

// A lease's life, step by step, keeps the table at every moment (DESIGN.md: "Reservation and
// event statuses must satisfy the seed's consistency table at every moment").
func TestLeaseLifeIsConsistent(t *testing.T) {
	type moment struct {
		lease, reservation, start, end string
	}
	lives := map[string][]moment{
		"start to end": {
			{"CREATING", "pending", EventUndone, EventUndone},
			{"PENDING", "pending", EventUndone, EventUndone},
			{"STARTING", "pending", EventInProgress, EventUndone},
			{"STARTING", "active", EventInProgress, EventUndone},
			{"ACTIVE", "active", EventDone, EventUndone},
			{"UPDATING", "active", EventDone, EventUndone},
			{"ACTIVE", "active", EventDone, EventUndone},
			{"TERMINATING", "active", EventDone, EventInProgress},
			{"TERMINATING", "deleted", EventDone, EventInProgress},
			{"TERMINATED", "deleted", EventDone, EventDone},
			{"DELETING", "deleted", EventDone, EventDone},
		},
		"failed start": {
			{"PENDING", "pending", EventUndone, EventUndone},
			{"STARTING", "pending", EventInProgress, EventUndone},
			{"STARTING", "error", EventInProgress, EventUndone},
			{"ERROR", "error", EventError, EventUndone},
			{"TERMINATING", "error", EventDone, EventInProgress},
			{"TERMINATED", "deleted", EventDone, EventDone},
		},
		"deleted while starting": {
			{"STARTING", "active", EventInProgress, EventUndone},
			{"DELETING", "active", EventInProgress, EventUndone},
			{"DELETING", "deleted", EventInProgress, EventUndone},
		},
	}
	lease := mustKind(t, "lease")
	for name, life := range lives {
		t.Run(name, func(t *testing.T) {
			for i, m := range life {
				if err := CheckLeaseConsistency(m.lease, []string{m.reservation}, ev(m.start, m.end)); err != nil {
					t.Errorf("moment %d %+v: %v", i, m, err)
				}
				if !lease.HasState(m.lease) {
					t.Errorf("moment %d: %s is not a lease status", i, m.lease)
				}
			}
		})
	}
}

func TestLeaseStatusFromEvents(t *testing.T) {
	tests := []struct {
		start, end string
		want       string
	}{
		{EventUndone, EventUndone, "PENDING"},
		{EventInProgress, EventUndone, "PENDING"},
		{EventDone, EventUndone, "ACTIVE"},
		{EventDone, EventInProgress, "ACTIVE"},
		{EventDone, EventDone, "TERMINATED"},
		{EventError, EventUndone, "ERROR"},
		{EventDone, EventError, "ERROR"},
		{"", "", "PENDING"},
	}
	lease := mustKind(t, "lease")
	for _, tt := range tests {
		events := ev(tt.start, tt.end)
		got := LeaseStatusFromEvents(events)
		if got != tt.want {
			t.Errorf("LeaseStatusFromEvents(%v) = %s, want %s", events, got, tt.want)
		}
		// UPDATING lands in a stable status of the lease kind.
		if !lease.IsStatic(got) || lease.IsGone(got) {
			t.Errorf("LeaseStatusFromEvents(%v) = %s, not a stable lease status", events, got)
		}
	}
	if got := LeaseStatusFromEvents(nil); got != "PENDING" {
		t.Errorf("LeaseStatusFromEvents(nil) = %s, want PENDING", got)
	}
}

func TestOrList(t *testing.T) {
	tests := []struct {
		give []string
		want string
	}{
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c"}, "a, b or c"},
	}
	for _, tt := range tests {
		if got := orList(tt.give); got != tt.want {
			t.Errorf("orList(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// ---- OpenvCloud: propagation to disks --------------------------------------------------------

// moves lists what a machine's landing does to its linked disks, as "from→to" of each disk
// action it runs.
func moves(t *testing.T, from, to string) []string {
	t.Helper()
	machine, disk := mustKind(t, "machine"), mustKind(t, "disk")
	var got []string
	for _, p := range machine.LandPropagations(to, from, "", false) {
		if p.To.Linked == nil || p.To.Linked.Kind != "disk" || p.To.Linked.Field != "machine_id" {
			t.Errorf("propagation %+v does not pick disks by machine_id", p)
		}
		a, ok := disk.Action(p.Run)
		if !ok {
			t.Fatalf("disk has no action %q", p.Run)
		}
		for _, s := range p.States {
			if ok, _ := a.AllowedFrom(s); !ok {
				t.Errorf("disk %s is not allowed from %s", a.Name, s)
			}
			got = append(got, s+"→"+a.Target(s))
		}
	}
	return got
}

func TestOpenvCloudMachinePropagations(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		want     []string
	}{
		{"deleting a running machine sends its attached disks to TOBEDELETED", "RUNNING", "DELETED", []string{"ASSIGNED→TOBEDELETED"}},
		{"deleting a halted machine too", "HALTED", "DELETED", []string{"ASSIGNED→TOBEDELETED"}},
		{"restoring the machine restores them", "DELETED", "HALTED", []string{"TOBEDELETED→ASSIGNED"}},
		{"stopping a machine does not", "RUNNING", "HALTED", nil},
		{"a machine halted otherwise does not restore disks", "PAUSED", "HALTED", nil},
		{"destroying a deleted machine purges its deleted disks", "DELETED", "DESTROYED", []string{"ASSIGNED→CREATED", "TOBEDELETED→DESTROYED"}},
		{"destroying a running machine detaches its disks", "RUNNING", "DESTROYED", []string{"ASSIGNED→CREATED", "TOBEDELETED→DESTROYED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := moves(t, tt.from, tt.to); !slices.Equal(got, tt.want) {
				t.Errorf("machine %s → %s moves disks %v, want %v", tt.from, tt.to, got, tt.want)
			}
		})
	}
	if got := mustKind(t, "disk").LandPropagations("DELETED", "CREATED", "delete", false); len(got) != 0 {
		t.Errorf("a disk's own delete propagates %v", got)
	}
}

func TestLinksSetBy(t *testing.T) {
	tests := []struct {
		kind, action string
		sets, clears int
	}{
		{"disk", "attach", 1, 0},
		{"disk", "restore_attached", 1, 0},
		{"disk", "detach", 0, 1},
		{"disk", "machine_destroyed", 0, 1},
		{"disk", "delete", 0, 0},
		{"machine", "attach", 0, 0},
	}
	for _, tt := range tests {
		sets, clears := mustKind(t, tt.kind).LinksSetBy(tt.action)
		if len(sets) != tt.sets || len(clears) != tt.clears {
			t.Errorf("LinksSetBy(%q, %q) = %d sets, %d clears; want %d, %d", tt.kind, tt.action, len(sets), len(clears), tt.sets, tt.clears)
		}
	}
}
