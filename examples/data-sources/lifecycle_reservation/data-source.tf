# Read one of a lease's reservations by ID.
data "lifecycle_reservation" "hosts" {
  id = lifecycle_lease.capacity.reservation_states[0].id
}

output "hosts_reserved" {
  value = data.lifecycle_reservation.hosts.state == "active"
}
