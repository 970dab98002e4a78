package provider

import (
	"fmt"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

func leaseKind() kindConfig {
	return kindConfig{
		typeName: "lease",
		kind:     "lease",
		description: "An OpenStack Blazar lease: capacity reserved between `start_date` and `end_date`. Its create makes one " +
			"reservation per `reservation` block and the lease's `start_lease` and `end_lease` events; at `start_date` the " +
			"lease, its reservations and the event move together to `ACTIVE`, and at `end_date` to `TERMINATED`. The lease's " +
			"state is driven by time: there is no `status` to choose; `wait_for` makes the create wait until the lease is " +
			"`ACTIVE`. Moving `end_date` (while `PENDING` or `ACTIVE`) or `start_date` (while `PENDING`) updates the lease in " +
			"place, and the reservations' and events' IDs stay known in the plan. A lease that can no longer take the change " +
			"(a new start for a started lease, a new window for an ended one) is replaced, and the plan warns why. Changing " +
			"the reservations replaces the lease. Delete works from any status, transitional ones included.",
		// Time drives the lease: no route to walk.
		desired: func(*objectModel) string { return "" },
		names:   map[string]string{"reservations": "reservation"},
		waitFor: []string{"PENDING", "ACTIVE"},
		related: []relatedAttr{
			{attr: "reservation_states", kind: "reservation", fields: []string{"resource_type"},
				description: "The lease's reservations, in `reservation` block order: ID, name, state (`pending`, `active`, `deleted`, `error`) and resource type."},
			{attr: "events", kind: "event", fields: []string{"event_type", "time"},
				description: "The lease's `start_lease` and `end_lease` events: ID, name, state (`UNDONE`, `IN_PROGRESS`, `DONE`, `ERROR`), type and time."},
		},
		notice: leaseNotice,
	}
}

// leaseNotice explains a lease that ended by itself: Terraform keeps it, it does not replace
// it or fail.
func leaseNotice(o *client.Object) string {
	switch o.State {
	case "TERMINATED":
		return fmt.Sprintf("The lease reached its end_date (%v) and ended: its reservations are released. Terraform keeps it "+
			"in the state as it is, and plans no change. To reserve again, give it a new window (new start_date and "+
			"end_date): an ended lease cannot change, so the plan replaces it (terraform apply -replace=ADDRESS with the "+
			"new window does the same). Or remove it.", o.Spec["end_date"])
	case "ERROR":
		return "The lease failed (" + lastError(o) + "). Terraform keeps it in the state; replace it with " +
			"terraform apply -replace=ADDRESS, or remove it."
	}
	return ""
}

// reservationKind is the data source of a lease's reservations (made by the lease).
func reservationKind() kindConfig {
	return kindConfig{
		typeName:    "reservation",
		kind:        "reservation",
		description: "A reservation of a Blazar lease, made by the lease's create from one of its `reservation` blocks.",
		parentAttr:  "lease_id",
		parentKind:  "lease",
	}
}
