output "cloudlet_id" {
  description = "ID of the cloudlet."
  value       = lifecycle_cloudlet.this.id
}

output "cluster_inst_id" {
  description = "ID of the cluster instance."
  value       = lifecycle_cluster_inst.this.id
}

output "app_states" {
  description = "Tracked state of each application instance, by name."
  value       = { for k, a in lifecycle_app_inst.this : k => a.state }
}
