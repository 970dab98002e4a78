# Import a machine by its ID.
terraform import lifecycle_machine.app machine-0a1b2c3d4e5f6a7b
