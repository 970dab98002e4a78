resource "lifecycle_image" "ubuntu" {
  name    = "ubuntu-24.04"
  os_type = "linux"

  # CREATED (the default) or DISABLED. A disabled image can be enabled again in place.
  status = "CREATED"
}
