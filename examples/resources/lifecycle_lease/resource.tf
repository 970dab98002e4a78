# Reserve one or two hosts from now until end_date, and wait until the lease is ACTIVE.
resource "lifecycle_lease" "capacity" {
  name     = "batch-window"
  end_date = "2036-01-03T00:00:00Z"
  # start_date omitted: the lease starts now (the effective start is kept in the state).
  wait_for = "ACTIVE"

  reservation {
    resource_type = "physical:host"
    min           = 1
    max           = 2
  }

  timeouts {
    create = "10m"
  }
}

resource "lifecycle_account" "batch" {
  name = "batch"
}

resource "lifecycle_cloudspace" "batch" {
  name       = "batch"
  account_id = lifecycle_account.batch.id
}

resource "lifecycle_image" "worker" {
  name = "batch-worker"
}

# Launch a machine into the reservation: its ID comes from the lease. A spec field the typed
# lifecycle_machine does not declare (reservation_id) goes through lifecycle_object.
resource "lifecycle_object" "worker" {
  kind      = "machine"
  name      = "batch-worker"
  parent_id = lifecycle_cloudspace.batch.id
  spec = {
    image_id       = lifecycle_image.worker.id
    reservation_id = lifecycle_lease.capacity.reservation_states[0].id
  }
}
