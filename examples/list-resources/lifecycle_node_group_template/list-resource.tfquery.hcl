# Terraform 1.14+, in a .tfquery.hcl file: the node group templates named worker, to import them.
list "lifecycle_node_group_template" "workers" {
  provider = lifecycle

  config {
    name = "worker"
  }
}
