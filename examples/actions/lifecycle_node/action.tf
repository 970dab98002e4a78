# Terraform 1.14+. Push a firmware update to the node of the lifecycle_node example
# (ENABLED -> UPDATING -> ENABLED): terraform apply -invoke=action.lifecycle_node.update
action "lifecycle_node" "update" {
  config {
    id = lifecycle_node.rack1.id
    # The update runs only from ENABLED: checked at plan time against the status the resource
    # asks for, so a node in MAINTENANCE is refused, naming the actions allowed, before
    # anything runs. Set status = "ENABLED" first.
    object_status = lifecycle_node.rack1.status
    action        = "update"
  }
}
