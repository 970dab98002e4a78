package provider

// The Blazar kinds as their resources describe them; the lease's timers, its wait targets and
// its children come from its spec (lifecycle/specs/blazar.yaml), the names of the reservation
// blocks (item_name) and of reservation_states (the list of the children made from a field
// takes <kind>_states) too.
func blazarDocs() map[string]familyDoc {
	return map[string]familyDoc{
		"lease": {description: "An OpenStack Blazar lease: capacity reserved between `start_date` and `end_date`. Its create makes one " +
			"reservation per `reservation` block and the lease's `start_lease`, `end_lease` and `before_end_lease` events (the " +
			"last runs by itself an hour before `end_date`); at `start_date` the " +
			"lease, its reservations and the event move together to `ACTIVE`, and at `end_date` to `TERMINATED`. The lease's " +
			"state is driven by time: there is no `status` to choose; `wait_for` makes the create wait until the lease is " +
			"`ACTIVE`. Moving `end_date` (while `PENDING` or `ACTIVE`) or `start_date` (while `PENDING`) updates the lease in " +
			"place, and the reservations' and events' IDs stay known in the plan. A lease that can no longer take the change " +
			"(a new start for a started lease, a new window for an ended one) is replaced, and the plan warns why. Changing " +
			"the reservations replaces the lease. Delete works from any status, transitional ones included."},
		"reservation": {description: "A reservation of a Blazar lease, made by the lease's create from one of its `reservation` blocks."},
	}
}
