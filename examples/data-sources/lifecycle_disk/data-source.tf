data "lifecycle_disk" "data" {
  name = "db-data"
}

output "data_disk_attached_to" {
  value = data.lifecycle_disk.data.machine_id # null while the disk is detached (CREATED)
}
