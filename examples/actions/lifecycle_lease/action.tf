# Terraform 1.14+. Run Blazar's update on the lease of the lifecycle_lease example (UPDATING,
# then back to the status its events give it): terraform apply -invoke=action.lifecycle_lease.update
action "lifecycle_lease" "update" {
  config {
    id     = lifecycle_lease.capacity.id
    action = "update"
  }
}
