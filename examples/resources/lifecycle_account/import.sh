# Import an account by its ID.
terraform import lifecycle_account.acme account-0a1b2c3d4e5f6a7b
