# Terraform 1.14+. Reboot the machine after every change of its memory_mb, in the same apply:
# the action runs once the update is done. The cloudspace and the image are those of the
# lifecycle_machine example.
resource "lifecycle_machine" "web" {
  name          = "web-1"
  cloudspace_id = lifecycle_cloudspace.web.id
  image_id      = lifecycle_image.ubuntu.id
  memory_mb     = 4096
  status        = "RUNNING"

  lifecycle {
    action_trigger {
      events  = [after_update]
      actions = [action.lifecycle_machine.reboot]
      # A reboot returns the machine to where it started only from RUNNING (from PAUSED it
      # lands RUNNING; from HALTED it is not allowed): without this condition, a change to
      # status = "HALTED" or "PAUSED" would fail the plan of the action.
      condition = lifecycle_machine.web.status == "RUNNING"
    }
  }
}

action "lifecycle_machine" "reboot" {
  config {
    id     = lifecycle_machine.web.id
    action = "reboot"
    # Checked at plan against the status the update gives the machine, not its state now.
    object_status = lifecycle_machine.web.status
    timeout       = "10m"
  }
}

# Or on demand: terraform apply -invoke=action.lifecycle_machine.reboot
