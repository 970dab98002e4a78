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

  triggers = {
    release = var.app_release
  }
}
