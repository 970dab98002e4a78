data "lifecycle_cluster_inst" "k8s" {
  name = "k8s"
}

output "cluster" {
  value = {
    cloudlet_id = data.lifecycle_cluster_inst.k8s.cloudlet_id
    state       = data.lifecycle_cluster_inst.k8s.state
    num_nodes   = data.lifecycle_cluster_inst.k8s.num_nodes
  }
}
