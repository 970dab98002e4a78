# Import an image by its ID.
terraform import lifecycle_image.ubuntu image-0a1b2c3d4e5f6a7b
