# Read a cluster template by name: its node groups and their node group templates.
data "lifecycle_cluster_template" "hadoop" {
  name = "hadoop"
}

output "groups" {
  value = [for g in data.lifecycle_cluster_template.hadoop.node_group : "${g.name}: ${g.count} from ${g.node_group_template_id}"]
}
