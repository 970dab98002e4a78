data "lifecycle_cluster_inst" "k8s" {
  id = "cluster_inst-0a1b2c3d4e5f6a7b"
}

output "cluster" {
  value = {
    cloudlet_id = data.lifecycle_cluster_inst.k8s.cloudlet_id
    state       = data.lifecycle_cluster_inst.k8s.state
    num_nodes   = data.lifecycle_cluster_inst.k8s.num_nodes
  }
}
