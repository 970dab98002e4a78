# Mocked: no simulator. A computed nested list (lifecycle_mci's vms, lifecycle_lease's
# reservation_states) cannot be mocked on the resource: Terraform (1.11 to 1.15) refuses a list
# in override_resource's values ("incompatible types; expected object type, found tuple") and
# applies an object to each element of a list it leaves empty. The way round: mock one level up.
# override_module replaces the module's outputs, which have no schema, so the VMs are taken as
# written; the caller's logic on them (tests/caller) is what this run checks.
mock_provider "lifecycle" {}

run "groups_the_vms_by_cloud" {
  module {
    source = "./tests/caller"
  }

  override_module {
    target = module.mci
    outputs = {
      id          = "mci-0a1b2c3d4e5f6a7b"
      status_text = "Partial-Running:2 (R:2/3)"
      vms = {
        "shop-web-1" = { subgroup = "web", csp = "aws", status = "Running" }
        "shop-web-2" = { subgroup = "web", csp = "aws", status = "Failed" }
        "shop-db-1"  = { subgroup = "db", csp = "gcp", status = "Running" }
      }
    }
  }

  assert {
    condition     = jsonencode(output.vms_by_csp) == jsonencode({ aws = ["shop-web-1", "shop-web-2"], gcp = ["shop-db-1"] })
    error_message = "the VMs by cloud are ${jsonencode(output.vms_by_csp)}"
  }
}
