# Terraform 1.14+, in a .tfquery.hcl file: every image named ubuntu-24.04, whatever its state.
list "lifecycle_image" "ubuntu" {
  provider = lifecycle

  config {
    name = "ubuntu-24.04"
  }
}
