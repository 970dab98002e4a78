data "lifecycle_mci" "shop" {
  name = "shop"
}

output "shop" {
  value = {
    status_text = data.lifecycle_mci.shop.status_text # Partial-Running:2 (R:2/3)
    failed      = data.lifecycle_mci.shop.status_count["failed"]
    vm_ids      = data.lifecycle_mci.shop.vms[*].id
  }
}
