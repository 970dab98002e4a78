# Terraform 1.14+, in a .tfquery.hcl file: the nodes in MAINTENANCE.
list "lifecycle_node" "maintenance" {
  provider = lifecycle

  config {
    state = "MAINTENANCE"
  }
}
