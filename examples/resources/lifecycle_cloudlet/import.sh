# Import a cloudlet by its ID.
terraform import lifecycle_cloudlet.edge cloudlet-0a1b2c3d4e5f6a7b
