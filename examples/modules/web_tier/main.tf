# A reusable module: a cloudspace in an existing account with a number of machines from one
# image, all in one status. Its terraform test suite (tests/) runs against a lifecyclesim
# from `make test`; PROVIDER.md says how to use it offline from a local build.
terraform {
  required_version = ">= 1.6"
  required_providers {
    lifecycle = {
      source = "lifecyclesim/lifecycle"
    }
  }
}

resource "lifecycle_cloudspace" "this" {
  name       = var.name
  account_id = var.account_id
}

resource "lifecycle_machine" "this" {
  count = var.machine_count

  name          = "${var.name}-${count.index}"
  cloudspace_id = lifecycle_cloudspace.this.id
  image_id      = var.image_id
  vcpus         = var.vcpus
  status        = var.machine_status
}
