# A lease's start_lease, end_lease and before_end_lease events are made by its create: find
# them through the lease.
data "lifecycle_lease" "capacity" {
  name = "batch-window"
}

data "lifecycle_event" "end" {
  id = [for e in data.lifecycle_lease.capacity.events : e.id if e.event_type == "end_lease"][0]
}

output "lease_ends_at" {
  value = data.lifecycle_event.end.time
}
