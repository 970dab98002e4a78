# Terraform 1.14+. Remove the Failed and Undefined VMs of the MCI of the lifecycle_mci
# example, whatever its status: terraform apply -invoke=action.lifecycle_mci.refine
action "lifecycle_mci" "refine" {
  config {
    id     = lifecycle_mci.shop.id
    action = "refine"
  }
}

# Reboot every VM of the MCI (Running -> Rebooting -> Running), under the per-CSP limits:
# terraform apply -invoke=action.lifecycle_mci.reboot
action "lifecycle_mci" "reboot" {
  config {
    id            = lifecycle_mci.shop.id
    object_status = lifecycle_mci.shop.status
    action        = "reboot"
    timeout       = "15m"
  }
}
