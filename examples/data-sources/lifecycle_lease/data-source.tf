# Read a lease by name: its state, dates, reservations and events.
data "lifecycle_lease" "capacity" {
  name = "batch-window"
}

output "lease_active" {
  value = data.lifecycle_lease.capacity.state == "ACTIVE"
}
