# Read a Savanna cluster by name: its phase and its node groups.
data "lifecycle_cluster" "hadoop" {
  name = "analytics"
}

output "workers" {
  value = [for g in data.lifecycle_cluster.hadoop.node_group : "${g.name}: ${g.count}"]
}
