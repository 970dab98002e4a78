output "cloudspace_id" {
  description = "ID of the cloudspace."
  value       = lifecycle_cloudspace.this.id
}

output "machine_ids" {
  description = "IDs of the machines."
  value       = lifecycle_machine.this[*].id
}

output "machine_states" {
  description = "Current state of each machine, by name."
  value       = { for m in lifecycle_machine.this : m.name => m.state }
}
