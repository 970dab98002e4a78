# Read a node group template by name (one made through the Sahara API, for example).
data "lifecycle_node_group_template" "worker" {
  name = "worker"
}

output "worker_processes" {
  value = data.lifecycle_node_group_template.worker.processes
}
