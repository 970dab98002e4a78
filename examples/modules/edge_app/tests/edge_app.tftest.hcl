# terraform test suite of the edge_app module, run by `make test` against a lifecyclesim
# (LIFECYCLE_ENDPOINT) with the provider from a local build (dev_overrides).

variables {
  name = "edge"
}

run "creates_the_chain" {
  assert {
    condition     = length(output.app_states) == 2 && alltrue([for s in values(output.app_states) : s == "Ready"])
    error_message = "both AppInsts should be Ready after the create"
  }
}

run "upgrades_and_scales_in_place" {
  variables {
    # The IDs before this run, for the assert below: OpenTofu reads run.<name> in variables but
    # not in asserts, so the assert reads them through test variables.
    first_cloudlet_id     = run.creates_the_chain.cloudlet_id
    first_cluster_inst_id = run.creates_the_chain.cluster_inst_id
    crm_version           = "2.0"
    num_nodes             = 4
    apps = {
      web = { version = "1.0", configs = "replicas: 2" }
      api = { version = "1.0" }
    }
  }

  assert {
    condition     = output.cloudlet_id == var.first_cloudlet_id && output.cluster_inst_id == var.first_cluster_inst_id
    error_message = "a version upgrade and a node count change must not replace the cloudlet or the cluster"
  }

  assert {
    condition     = lifecycle_cloudlet.this.state == "Ready" && lifecycle_cloudlet.this.version == "2.0"
    error_message = "the cloudlet should be Ready on version 2.0 after the upgrade"
  }
}
