# Terraform 1.14+, in a .tfquery.hcl file: the deployed cloudspaces of one account.
list "lifecycle_cloudspace" "deployed" {
  provider = lifecycle

  config {
    account_id = "account-0a1b2c3d4e5f6a7b"
    state      = "DEPLOYED"
  }
}
