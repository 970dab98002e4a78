# Import a cloudspace by its ID.
terraform import lifecycle_cloudspace.web cloudspace-0a1b2c3d4e5f6a7b
