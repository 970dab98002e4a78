# Import a cluster instance by its ID.
terraform import lifecycle_cluster_inst.k8s cluster_inst-0a1b2c3d4e5f6a7b
