# Import a lease by its ID.
terraform import lifecycle_lease.capacity lease-0a1b2c3d4e5f6a7b
