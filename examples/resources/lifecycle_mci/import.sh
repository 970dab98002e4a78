# Import an MCI by its ID.
terraform import lifecycle_mci.shop mci-0a1b2c3d4e5f6a7b
