# Any kind the simulator serves, built-in or user-defined.
data "lifecycle_object" "cluster" {
  kind = "cluster_inst"
  name = "k8s-small"
}

output "cluster" {
  value = {
    state    = data.lifecycle_object.cluster.state
    cloudlet = data.lifecycle_object.cluster.parent_id
    flavor   = lookup(data.lifecycle_object.cluster.spec, "flavor", null)
  }
}
