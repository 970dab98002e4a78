# Import as KIND/ID ...
terraform import lifecycle_object.cluster cluster_inst/cluster_inst-0a1b2c3d4e5f6a7b

# ... or by an ID whose prefix names its kind.
terraform import lifecycle_object.cluster cluster_inst-0a1b2c3d4e5f6a7b
