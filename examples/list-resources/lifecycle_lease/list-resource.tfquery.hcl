# Terraform 1.14+, in a .tfquery.hcl file: the ACTIVE Blazar leases, with their attributes
# (include_resource), to import them.
list "lifecycle_lease" "active" {
  provider         = lifecycle
  include_resource = true

  config {
    state = "ACTIVE"
  }
}
