# What the module needs but does not make: an account and an image.
terraform {
  required_providers {
    lifecycle = {
      source = "lifecyclesim/lifecycle"
    }
  }
}

resource "lifecycle_account" "test" {
  name = "web-tier-test"
}

resource "lifecycle_image" "test" {
  name = "ubuntu-24.04"
}

output "account_id" {
  value = lifecycle_account.test.id
}

output "image_id" {
  value = lifecycle_image.test.id
}
