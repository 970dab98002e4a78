# Terraform 1.14+, in a .tfquery.hcl file: the cloudlets left in UpdateError by a failed
# upgrade, which need their fix action.
list "lifecycle_cloudlet" "failed_upgrades" {
  provider = lifecycle

  config {
    state = "UpdateError"
  }
}
