# Terraform 1.14+. Repair a cloudlet whose upgrade failed (UpdateError → Ready) through the
# generic action, which runs any kind's actions that return the object to where it started
# and its repairs: terraform apply -invoke=action.lifecycle_object.fix_cloudlet
action "lifecycle_object" "fix_cloudlet" {
  config {
    kind   = "cloudlet"
    id     = "cloudlet-0a1b2c3d4e5f6a7b"
    action = "fix"
  }
}
