terraform {
  required_providers {
    lifecycle = {
      source = "lifecyclesim/lifecycle"
    }
  }
}

# Point the provider at a running simulator (`lifecyclesim`, or `make sim`).
provider "lifecycle" {
  # Defaults to the LIFECYCLE_ENDPOINT environment variable, then http://127.0.0.1:7575.
  # endpoint = "http://127.0.0.1:7575"

  # Only needed when the simulator runs with --token TENANT=TOKEN.
  # Prefer the LIFECYCLE_TOKEN environment variable to a literal here.
  # token = "s3cr3t"
}
