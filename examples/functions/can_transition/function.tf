# true: a deleted machine is restored (to HALTED), then started.
output "deleted_machine_can_run" {
  value = provider::lifecycle::can_transition("machine", "DELETED", "RUNNING")
}

# false: a decommissioned node never comes back.
output "decommissioned_node_can_be_enabled" {
  value = provider::lifecycle::can_transition("node", "DECOMMISSIONED", "ENABLED")
}

# Guard a desired status with a precondition.
variable "node_status" {
  type    = string
  default = "MAINTENANCE"
}

resource "terraform_data" "node_status_check" {
  input = var.node_status

  lifecycle {
    precondition {
      condition     = provider::lifecycle::can_transition("node", "ENABLED", var.node_status)
      error_message = "No route leads from ENABLED to ${var.node_status}."
    }
  }
}
