package lifecycle

import (
	"fmt"
	"slices"
)

// Blazar event types and statuses.
const (
	EventStartLease = "start_lease"
	EventEndLease   = "end_lease"
	// EventBeforeEndLease runs before the end (notifications, snapshots); it moves no status.
	EventBeforeEndLease = "before_end_lease"

	EventUndone     = "UNDONE"
	EventInProgress = "IN_PROGRESS"
	EventDone       = "DONE"
	EventError      = "ERROR"
)

// leaseRule is one row of the seed's "Relationships between statuses" table.
type leaseRule struct {
	reservations  []string // allowed reservation statuses; nil means any
	start, end    []string // allowed start_lease / end_lease event statuses; nil means any
	notInProgress bool     // no event may be IN_PROGRESS
}

var leaseRules = map[string]leaseRule{
	"CREATING":    {reservations: []string{"pending"}, start: []string{EventUndone}, end: []string{EventUndone}},
	"PENDING":     {reservations: []string{"pending"}, start: []string{EventUndone}, end: []string{EventUndone}},
	"STARTING":    {reservations: []string{"pending", "active", "error"}, start: []string{EventInProgress}, end: []string{EventUndone}},
	"ACTIVE":      {reservations: []string{"active"}, start: []string{EventDone}, end: []string{EventUndone}},
	"TERMINATING": {reservations: []string{"active", "deleted", "error"}, start: []string{EventDone}, end: []string{EventInProgress}},
	"TERMINATED":  {reservations: []string{"deleted"}, start: []string{EventDone}, end: []string{EventDone}},
	"DELETING":    {},
	"UPDATING":    {notInProgress: true},
}

// LeaseConsistencyError reports a violation of Blazar's lease ↔ reservation ↔ event table.
type LeaseConsistencyError struct {
	Lease  string
	Reason string
}

func (e *LeaseConsistencyError) Error() string {
	return fmt.Sprintf("blazar: lease %s: %s", e.Lease, e.Reason)
}

// CheckLeaseConsistency checks the seed's table of the statuses reservations and events must
// have for a lease status. events maps an event type (start_lease, end_lease) to its status.
// ERROR leases are not constrained by the table.
func CheckLeaseConsistency(lease string, reservations []string, events map[string]string) error {
	rule, ok := leaseRules[lease]
	if !ok {
		if lease == "ERROR" {
			return nil
		}
		return &LeaseConsistencyError{Lease: lease, Reason: "unknown lease status"}
	}
	if rule.reservations != nil {
		for _, r := range reservations {
			if !slices.Contains(rule.reservations, r) {
				return &LeaseConsistencyError{Lease: lease,
					Reason: fmt.Sprintf("reservation is %s, want %s", r, orList(rule.reservations))}
			}
		}
	}
	for _, ev := range []struct {
		typ   string
		allow []string
	}{{EventStartLease, rule.start}, {EventEndLease, rule.end}} {
		st, ok := events[ev.typ]
		if !ok {
			continue
		}
		if ev.allow != nil && !slices.Contains(ev.allow, st) {
			return &LeaseConsistencyError{Lease: lease,
				Reason: fmt.Sprintf("%s event is %s, want %s", ev.typ, st, orList(ev.allow))}
		}
		if rule.notInProgress && st == EventInProgress {
			return &LeaseConsistencyError{Lease: lease, Reason: fmt.Sprintf("%s event is IN_PROGRESS during an update", ev.typ)}
		}
	}
	return nil
}

// LeaseStatusFromEvents derives the stable lease status from its events, as Blazar does when
// an update completes: any ERROR event gives ERROR; otherwise the furthest event done decides.
func LeaseStatusFromEvents(events map[string]string) string {
	start, end := events[EventStartLease], events[EventEndLease]
	switch {
	case start == EventError || end == EventError:
		return "ERROR"
	case end == EventDone:
		return "TERMINATED"
	case start == EventDone:
		return "ACTIVE"
	default:
		return "PENDING"
	}
}

func orList(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	out := ""
	for i, x := range xs {
		switch {
		case i == 0:
		case i == len(xs)-1:
			out += " or "
		default:
			out += ", "
		}
		out += x
	}
	return out
}

// leaseEvents maps a lease's event types to their statuses. An event is a child with an
// event_type, whatever its kind is called (a user's copy of the Blazar kinds names its own).
func leaseEvents(children []View) map[string]string {
	events := map[string]string{}
	for _, c := range children {
		if t, ok := c.Spec["event_type"].(string); ok {
			events[t] = c.State
		}
	}
	return events
}

// deriveLeaseStatus is the lease status its events give (where an update lands).
func deriveLeaseStatus(_ View, events []View) Derived {
	return Derived{State: LeaseStatusFromEvents(leaseEvents(events))}
}

// checkLease checks the seed's consistency table for a lease and its children: its
// reservations are the children its kind makes from its list field, its events those with an
// event_type (found through the relations, whatever the kinds are called). The table has
// no rows for a lease terminated from ERROR (status.py allows it): its start_lease event stays
// ERROR (or UNDONE, when its create failed) while it terminates and once it is terminated,
// which is not a violation. The before_end_lease event is in no row (Blazar checks only the
// other two).
func checkLease(lease View, children []View) error {
	reservations := StatesOfViews(lease.ItemChildren(children))
	events := leaseEvents(children)
	if st := events[EventStartLease]; (lease.State == "TERMINATING" || lease.State == "TERMINATED") && (st == EventError || st == EventUndone) {
		delete(events, EventStartLease)
	}
	return CheckLeaseConsistency(lease.State, reservations, events)
}
