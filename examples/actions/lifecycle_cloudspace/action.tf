# Terraform 1.14+. Reset the virtual firewall of the cloudspace of the lifecycle_cloudspace
# example (DEPLOYED -> RESETTING -> DEPLOYED): terraform apply -invoke=action.lifecycle_cloudspace.reset
action "lifecycle_cloudspace" "reset" {
  config {
    id = lifecycle_cloudspace.web.id
    # Checked at plan time against the status the resource asks for: a cloudspace to be
    # DISABLED cannot be reset, and the plan says so before anything runs.
    object_status = lifecycle_cloudspace.web.status
    action        = "reset"
  }
}
