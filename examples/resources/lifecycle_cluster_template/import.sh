# Import a cluster template by its ID.
terraform import lifecycle_cluster_template.hadoop cluster_template-0a1b2c3d4e5f6a7b
