resource "lifecycle_account" "acme" {
  name = "acme"
}

resource "lifecycle_cloudspace" "web" {
  name       = "web"
  account_id = lifecycle_account.acme.id
}

resource "lifecycle_image" "ubuntu" {
  name    = "ubuntu-24.04"
  os_type = "linux"
}

resource "lifecycle_machine" "app" {
  name          = "app-1"
  cloudspace_id = lifecycle_cloudspace.web.id
  image_id      = lifecycle_image.ubuntu.id
  vcpus         = 2
  memory_mb     = 2048

  # RUNNING (the default after deploy), PAUSED or HALTED. A plan that asks for a state
  # no route reaches fails at plan time; apply walks the route (HALTED -> PAUSED runs
  # start, then pause).
  status = "RUNNING"

  # destroy (the default) deletes permanently; delete moves the machine to the recycle
  # bin (DELETED), and its attached disks to TOBEDELETED.
  deletion_mode = "delete"

  timeouts {
    create = "10m"
  }
}
