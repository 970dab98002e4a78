# Look a machine up by name (or by id).
data "lifecycle_machine" "app" {
  name = "app-1"
}

output "app" {
  value = {
    id     = data.lifecycle_machine.app.id
    state  = data.lifecycle_machine.app.state  # RUNNING, or a transition state such as REBOOTING
    status = data.lifecycle_machine.app.status # where it is or will settle: RUNNING
    image  = data.lifecycle_machine.app.image_id
  }
}
