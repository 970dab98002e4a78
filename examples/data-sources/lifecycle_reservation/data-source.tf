# A lease's reservations are made by its create: find them through the lease.
data "lifecycle_lease" "capacity" {
  name = "batch-window"
}

data "lifecycle_reservation" "hosts" {
  id = data.lifecycle_lease.capacity.reservation_states[0].id
}

output "hosts_reserved" {
  value = data.lifecycle_reservation.hosts.state == "active"
}
