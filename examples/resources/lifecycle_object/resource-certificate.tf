# A user-defined kind (certificates.yaml, next to this file): its state machine comes from the
# simulator, started with `lifecyclesim --kinds certificates.yaml`.
resource "lifecycle_object" "cert" {
  kind = "certificate"
  name = "api.example.com"

  # ISSUED after create; REVOKED is reached by the revoke action. Asking for PENDING
  # fails at plan time: no action leads back to it.
  status = "ISSUED"

  spec = {
    common_name = "api.example.com"
  }
}

# Renew the certificate every time the rotation date changes; it stays ISSUED.
resource "lifecycle_action" "renew" {
  kind      = lifecycle_object.cert.kind
  object_id = lifecycle_object.cert.id
  action    = "renew"

  triggers = {
    rotated = "2026-01"
  }
}
