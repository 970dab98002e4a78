# Terraform 1.14+, in a .tfquery.hcl file: terraform query lists the RUNNING machines of a
# cloudspace; terraform query -generate-config-out=machines.tf writes an import block and a
# resource block for each, which then plan with no changes.
list "lifecycle_machine" "running" {
  provider         = lifecycle
  include_resource = true

  config {
    cloudspace_id = "cloudspace-0a1b2c3d4e5f6a7b"
    state         = "RUNNING"
  }
}
