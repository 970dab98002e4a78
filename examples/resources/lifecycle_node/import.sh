# Import a node by its ID.
terraform import lifecycle_node.rack1 node-0a1b2c3d4e5f6a7b
