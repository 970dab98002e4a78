# Terraform 1.14+, in a .tfquery.hcl file: terraform query lists the disabled accounts, to
# import them (terraform query -generate-config-out=accounts.tf).
list "lifecycle_account" "disabled" {
  provider = lifecycle

  config {
    state = "DISABLED"
  }
}
