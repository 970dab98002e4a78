# Terraform 1.14+, in a .tfquery.hcl file: the detached disks of one account, to import (or
# clean up) the ones nobody manages.
list "lifecycle_disk" "detached" {
  provider = lifecycle

  config {
    account_id = "account-0a1b2c3d4e5f6a7b"
    state      = "CREATED"
  }
}
