# Terraform 1.14+, in a .tfquery.hcl file: the app instances of one cluster instance, with
# their attributes (include_resource), for example those a pipeline deployed outside Terraform.
list "lifecycle_app_inst" "on_k8s" {
  provider         = lifecycle
  include_resource = true

  config {
    cluster_inst_id = "cluster_inst-0a1b2c3d4e5f6a7b"
  }
}
