data "lifecycle_node" "rack1" {
  name = "rack1-node07"
}

output "rack1_in_maintenance" {
  value = data.lifecycle_node.rack1.status == "MAINTENANCE"
}
