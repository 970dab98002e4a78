data "lifecycle_machine" "app" {
  id = "machine-0a1b2c3d4e5f6a7b"
}

output "app" {
  value = {
    state  = data.lifecycle_machine.app.state  # RUNNING, or a transition state such as REBOOTING
    status = data.lifecycle_machine.app.status # where it is or will settle: RUNNING
    image  = data.lifecycle_machine.app.image_id
  }
}
