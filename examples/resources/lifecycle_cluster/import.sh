# Import a cluster by its ID.
terraform import lifecycle_cluster.hadoop cluster-0a1b2c3d4e5f6a7b
