# Terraform 1.16+ (on_failure): the tests parse this file and check it against the provider's
# schema, but run it only with Terraform 1.16 or later. A failed reboot after a resize is
# reported as a warning and the apply goes on (the resize it followed is kept either way);
# without on_failure (halt), it stops the apply.
resource "lifecycle_machine" "batch" {
  name          = "batch-1"
  cloudspace_id = lifecycle_cloudspace.web.id
  image_id      = lifecycle_image.ubuntu.id
  memory_mb     = 8192
  status        = "RUNNING"

  lifecycle {
    action_trigger {
      events     = [after_update]
      actions    = [action.lifecycle_machine.reboot_batch]
      condition  = lifecycle_machine.batch.status == "RUNNING"
      on_failure = continue
    }
  }
}

action "lifecycle_machine" "reboot_batch" {
  config {
    id            = lifecycle_machine.batch.id
    object_status = lifecycle_machine.batch.status
    action        = "reboot"
  }
}
