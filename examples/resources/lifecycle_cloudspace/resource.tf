resource "lifecycle_account" "acme" {
  name = "acme"
}

resource "lifecycle_cloudspace" "web" {
  name       = "web"
  account_id = lifecycle_account.acme.id

  # DEPLOYED (the default) or DISABLED.
  status = "DEPLOYED"

  # Move the cloudspace to the recycle bin on destroy instead of destroying it.
  deletion_mode = "delete"
}
