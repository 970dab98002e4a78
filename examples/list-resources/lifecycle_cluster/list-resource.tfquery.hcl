# Terraform 1.14+, in a .tfquery.hcl file: the Sahara clusters in Error (a failed create or a
# failed rollback of a scale), to import and replace them.
list "lifecycle_cluster" "in_error" {
  provider = lifecycle

  config {
    state = "Error"
  }
}
