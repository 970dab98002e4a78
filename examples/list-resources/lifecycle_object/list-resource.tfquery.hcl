# Terraform 1.14+: every object of a kind, user-defined kinds included, by name.
list "lifecycle_object" "certificates" {
  provider = lifecycle

  config {
    kind = "certificate"
    name = "www"
  }
}
