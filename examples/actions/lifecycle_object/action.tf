# Terraform 1.14+. Repair the cloudlet of the lifecycle_object example after a failed upgrade
# (UpdateError -> Ready) through the generic action, which runs any kind's actions that return
# the object to where it started and its repairs:
# terraform apply -invoke=action.lifecycle_object.fix_cloudlet
# While the cloudlet is Ready, the plan refuses it and names the actions allowed.
action "lifecycle_object" "fix_cloudlet" {
  config {
    kind   = "cloudlet"
    id     = lifecycle_object.cloudlet.id
    action = "fix"
  }
}
