resource "lifecycle_account" "acme" {
  name = "acme"
}

resource "lifecycle_cloudspace" "web" {
  name       = "web"
  account_id = lifecycle_account.acme.id
}

resource "lifecycle_image" "ubuntu" {
  name = "ubuntu-24.04"
}

resource "lifecycle_machine" "app" {
  name          = "app-1"
  cloudspace_id = lifecycle_cloudspace.web.id
  image_id      = lifecycle_image.ubuntu.id
  status        = "RUNNING"
}

variable "app_release" {
  type    = string
  default = "1.4.2"
}

# Reboot the machine whenever the release changes. The machine stays RUNNING.
resource "lifecycle_action" "reboot" {
  kind      = "machine"
  object_id = lifecycle_machine.app.id
  action    = "reboot"

  # The plan checks the reboot against the status the machine is planned to have (so a
  # machine PAUSED now and set to RUNNING in the same apply passes), and the reboot runs
  # after the machine's own changes.
  object_status = lifecycle_machine.app.status

  triggers = {
    release = var.app_release
  }
}
