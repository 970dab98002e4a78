data "lifecycle_image" "ubuntu" {
  name = "ubuntu-24.04"
}

data "lifecycle_cloudspace" "web" {
  name = "web"
}

# Boot a machine from an image managed elsewhere.
resource "lifecycle_machine" "app2" {
  name          = "app-2"
  cloudspace_id = data.lifecycle_cloudspace.web.id
  image_id      = data.lifecycle_image.ubuntu.id
}
