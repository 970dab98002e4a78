# Terraform 1.14+, in a .tfquery.hcl file: the Ready cluster instances of one cloudlet, with
# their attributes (include_resource).
list "lifecycle_cluster_inst" "ready" {
  provider         = lifecycle
  include_resource = true

  config {
    cloudlet_id = "cloudlet-0a1b2c3d4e5f6a7b"
    state       = "Ready"
  }
}
