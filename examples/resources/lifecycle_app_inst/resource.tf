resource "lifecycle_cloudlet" "edge" {
  name = "berlin-1"
}

resource "lifecycle_cluster_inst" "k8s" {
  name        = "k8s"
  cloudlet_id = lifecycle_cloudlet.edge.id
  flavor      = "m4.small"
}

resource "lifecycle_app_inst" "web" {
  name            = "web"
  cluster_inst_id = lifecycle_cluster_inst.k8s.id
  app_name        = "web" # app_name, app_version, flavor: replaced when changed
  app_version     = "1.4.2"

  # configs and power_state change in place (the update table).
  configs     = <<-YAML
    replicas: 2
    image: registry.example.com/web:1.4.2
  YAML
  power_state = "PowerOn"
}
