resource "lifecycle_cloudlet" "edge" {
  name = "berlin-1"
}

resource "lifecycle_cluster_inst" "k8s" {
  name        = "k8s"
  cloudlet_id = lifecycle_cloudlet.edge.id
  flavor      = "m4.medium" # flavor, deployment, ip_access, num_masters: replaced when changed
  deployment  = "kubernetes"

  # num_nodes and auto_scale_policy change in place (the update table).
  num_nodes = 3

  timeouts {
    create = "15m"
  }
}
