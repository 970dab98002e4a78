# Terraform 1.14+. Repair the cloudlet of the lifecycle_cloudlet example after a failed
# upgrade (UpdateError -> Ready): terraform apply -invoke=action.lifecycle_cloudlet.fix
# The plan refuses it, naming the actions allowed, while the cloudlet is Ready.
action "lifecycle_cloudlet" "fix" {
  config {
    id     = lifecycle_cloudlet.edge.id
    action = "fix"
  }
}

# Run the upgrade again on demand (Ready -> UpdateRequested -> Updating -> Ready):
# terraform apply -invoke=action.lifecycle_cloudlet.upgrade
action "lifecycle_cloudlet" "upgrade" {
  config {
    id     = lifecycle_cloudlet.edge.id
    action = "upgrade"
  }
}
