data "lifecycle_kind" "machine" {
  name = "machine"
}

output "machine_static_states" {
  value = data.lifecycle_kind.machine.static_states
}

# The actions a user may start on a RUNNING machine.
output "machine_actions_from_running" {
  value = [
    for a in data.lifecycle_kind.machine.actions : a.name
    if a.actor == "user" && (a.from_any || contains(a.from, "RUNNING"))
  ]
}

# The state diagram, for rendering with Mermaid.
output "machine_diagram" {
  value = data.lifecycle_kind.machine.mermaid
}
