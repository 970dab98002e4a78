# Look an account up by name (or by id).
data "lifecycle_account" "acme" {
  name = "acme"
}

output "acme_status" {
  value = data.lifecycle_account.acme.status
}
