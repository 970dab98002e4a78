resource "lifecycle_account" "acme" {
  name = "acme"

  # CONFIRMED (the default) or DISABLED. Disabling and enabling again run in place.
  status = "CONFIRMED"
}
