resource "lifecycle_app_inst" "web" {
  name            = "web"
  cluster_inst_id = lifecycle_cluster_inst.k8s.id
  app_name        = "web" # app_name, app_version, flavor: replaced when changed
  app_version     = "1.4.2"

  # configs and power_state change in place (the update table).
  configs     = file("${path.module}/web-values.yaml")
  power_state = "PowerOn"
}
