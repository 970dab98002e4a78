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

resource "lifecycle_machine" "db" {
  name          = "db-1"
  cloudspace_id = lifecycle_cloudspace.web.id
  image_id      = lifecycle_image.ubuntu.id
}

resource "lifecycle_disk" "data" {
  name       = "db-data"
  account_id = lifecycle_account.acme.id
  size_gb    = 100

  # Attached (ASSIGNED) while set; remove it to detach the disk (CREATED) in place.
  machine_id = lifecycle_machine.db.id
}
