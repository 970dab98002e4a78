# A reusable module: one CB-Tumblebug MCI of two subgroups on two clouds (a web tier on one
# CSP, a database tier on another), Running or Suspended as a whole. Its terraform test suite
# (tests/) runs against a lifecyclesim from `make test`.
terraform {
  required_version = ">= 1.6"
  required_providers {
    lifecycle = {
      source = "lifecyclesim/lifecycle"
    }
  }
}

resource "lifecycle_mci" "this" {
  name   = var.name
  status = var.status

  subgroup {
    name   = "web"
    count  = var.web.count
    csp    = var.web.csp
    region = var.web.region
    spec   = var.web.spec
    image  = var.web.image
  }

  subgroup {
    name   = "db"
    count  = var.db.count
    csp    = var.db.csp
    region = var.db.region
    spec   = var.db.spec
    image  = var.db.image
  }
}
