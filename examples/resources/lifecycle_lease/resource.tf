# Reserve two hosts for two days, starting now, and wait until the lease is ACTIVE.
resource "lifecycle_lease" "capacity" {
  name     = "batch-window"
  end_date = "2030-01-03T00:00:00Z"
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

# Launch into the reservation: its ID comes from the lease.
resource "lifecycle_object" "worker" {
  kind      = "machine"
  name      = "batch-worker"
  parent_id = var.cloudspace_id
  spec = {
    image_id       = var.image_id
    reservation_id = lifecycle_lease.capacity.reservation_states[0].id
  }
}

variable "cloudspace_id" { type = string }
variable "image_id" { type = string }
