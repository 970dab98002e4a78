data "lifecycle_vm" "web1" {
  name = "shop-web-1"
}

output "web1" {
  value = {
    mci    = data.lifecycle_vm.web1.mci_id
    state  = data.lifecycle_vm.web1.state # Running, or a transition such as Resuming
    csp    = data.lifecycle_vm.web1.csp
    region = data.lifecycle_vm.web1.region
  }
}
