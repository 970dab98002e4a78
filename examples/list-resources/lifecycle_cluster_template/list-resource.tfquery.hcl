# Terraform 1.14+, in a .tfquery.hcl file: the cluster templates named hadoop, to import them.
list "lifecycle_cluster_template" "hadoop" {
  provider = lifecycle

  config {
    name = "hadoop"
  }
}
