# A configuration that uses the module, for tests/mocked.tftest.hcl: it groups the module's VMs
# by cloud, the kind of logic a caller puts on the module's nested lists.
terraform {
  required_providers {
    lifecycle = {
      source = "lifecyclesim/lifecycle"
    }
  }
}

module "mci" {
  source = "../.."
  name   = "shop"
}

output "vms_by_csp" {
  description = "The VM names on each cloud."
  value       = { for csp in distinct([for vm in values(module.mci.vms) : vm.csp]) : csp => sort([for name, vm in module.mci.vms : name if vm.csp == csp]) }
}
