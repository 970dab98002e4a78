# Import an application instance by its ID.
terraform import lifecycle_app_inst.web app_inst-0a1b2c3d4e5f6a7b
