# terraform test suite of the web_tier module, run by `make test` against a lifecyclesim
# (LIFECYCLE_ENDPOINT) with the provider from a local build (dev_overrides).

run "setup" {
  module {
    source = "./tests/setup"
  }
}

variables {
  name = "web"
}

run "creates_running_machines" {
  variables {
    account_id    = run.setup.account_id
    image_id      = run.setup.image_id
    machine_count = 2
  }

  assert {
    condition     = length(output.machine_ids) == 2
    error_message = "expected 2 machines"
  }

  assert {
    condition     = alltrue([for s in values(output.machine_states) : s == "RUNNING"])
    error_message = "every machine should be RUNNING after the create"
  }
}

run "halts_and_grows_in_place" {
  variables {
    account_id     = run.setup.account_id
    image_id       = run.setup.image_id
    machine_count  = 3
    machine_status = "HALTED"
    # The first machine's ID before this run, for the assert below: OpenTofu reads run.<name>
    # in variables but not in asserts, so the assert reads it through a test variable.
    first_machine_id = run.creates_running_machines.machine_ids[0]
  }

  assert {
    condition     = alltrue([for s in values(output.machine_states) : s == "HALTED"])
    error_message = "every machine should be HALTED"
  }

  assert {
    condition     = output.machine_ids[0] == var.first_machine_id
    error_message = "halting a machine must update it in place, not replace it"
  }
}

run "rejects_a_status_machines_cannot_be_asked_for" {
  command = plan

  variables {
    account_id     = run.setup.account_id
    image_id       = run.setup.image_id
    machine_status = "VIRTUAL"
  }

  expect_failures = [var.machine_status]
}
