# Import a disk by its ID.
terraform import lifecycle_disk.data disk-0a1b2c3d4e5f6a7b
