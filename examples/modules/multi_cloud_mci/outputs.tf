output "id" {
  description = "The MCI's ID."
  value       = lifecycle_mci.this.id
}

output "status_text" {
  description = "The aggregated status, such as Running:3 (R:3/3) or Partial-Running:2 (R:2/3)."
  value       = lifecycle_mci.this.status_text
}

output "vms" {
  description = "The VMs by name: subgroup, cloud and status."
  value       = { for vm in lifecycle_mci.this.vms : vm.name => { subgroup = vm.subgroup, csp = vm.csp, status = vm.status } }
}
