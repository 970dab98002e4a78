# Terraform 1.14+, in a .tfquery.hcl file: the suspended MCIs (CB-Tumblebug statuses are
# capitalised: Running, Suspended, Failed...).
list "lifecycle_mci" "suspended" {
  provider = lifecycle

  config {
    state = "Suspended"
  }
}
