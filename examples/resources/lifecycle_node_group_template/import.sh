# Import a node group template by its ID.
terraform import lifecycle_node_group_template.worker node_group_template-0a1b2c3d4e5f6a7b
