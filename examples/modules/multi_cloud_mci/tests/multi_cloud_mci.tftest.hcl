# terraform test suite of the multi_cloud_mci module, run by `make test` against a lifecyclesim
# (LIFECYCLE_ENDPOINT) with the provider from a local build (dev_overrides).

variables {
  name = "shop"
}

run "creates_two_subgroups_on_two_clouds" {
  assert {
    condition     = output.status_text == "Running:3 (R:3/3)"
    error_message = "expected 3 running VMs, got ${output.status_text}"
  }

  assert {
    condition     = toset([for vm in values(output.vms) : vm.csp]) == toset(["aws", "gcp"])
    error_message = "the VMs should be on aws and gcp"
  }
}

run "suspends_and_scales_in_place" {
  variables {
    status = "Suspended"
    web    = { count = 3, csp = "aws", region = "us-east-1" }
  }

  assert {
    condition     = output.status_text == "Suspended:4 (R:0/4)"
    error_message = "expected 4 suspended VMs, got ${output.status_text}"
  }
}
