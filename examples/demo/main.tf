# The demo: an OpenvCloud account with a cloudspace, an image, two machines, a disk attached
# to one of them and a node, all managed through their lifecycles. `make demo` applies it
# against a local lifecyclesim through dev_overrides (no registry, no terraform init).
terraform {
  required_providers {
    lifecycle = {
      source = "lifecyclesim/lifecycle"
    }
  }
}

provider "lifecycle" {
  # Defaults to LIFECYCLE_ENDPOINT, then http://127.0.0.1:7575.
}

variable "web_status" {
  description = "Desired status of the web machine: RUNNING, PAUSED or HALTED."
  type        = string
  default     = "HALTED"
}

variable "node_status" {
  description = "Desired status of the node: ENABLED, MAINTENANCE or DECOMMISSIONED."
  type        = string
  default     = "MAINTENANCE"
}

resource "lifecycle_account" "acme" {
  name = "acme"
}

resource "lifecycle_cloudspace" "prod" {
  name       = "prod"
  account_id = lifecycle_account.acme.id
}

resource "lifecycle_image" "ubuntu" {
  name = "ubuntu-24.04"
}

resource "lifecycle_machine" "web" {
  name          = "web"
  cloudspace_id = lifecycle_cloudspace.prod.id
  image_id      = lifecycle_image.ubuntu.id
  vcpus         = 2
  memory_mb     = 4096
  status        = var.web_status
}

resource "lifecycle_machine" "db" {
  name          = "db"
  cloudspace_id = lifecycle_cloudspace.prod.id
  image_id      = lifecycle_image.ubuntu.id
  memory_mb     = 8192
}

resource "lifecycle_disk" "data" {
  name       = "db-data"
  account_id = lifecycle_account.acme.id
  size_gb    = 100
  machine_id = lifecycle_machine.db.id
}

resource "lifecycle_node" "cpu01" {
  name   = "cpu-01"
  status = var.node_status
}

output "machines" {
  value = {
    web = { id = lifecycle_machine.web.id, state = lifecycle_machine.web.state }
    db  = { id = lifecycle_machine.db.id, state = lifecycle_machine.db.state }
  }
}

output "disk_state" {
  value = lifecycle_disk.data.state
}
