# A Sahara node group template: the flavor and Hadoop processes of a node group. The Sahara
# API (openstack dataprocessing node group template ...) serves it too, under a UUID.
resource "lifecycle_node_group_template" "worker" {
  name           = "worker"
  plugin_name    = "vanilla"
  hadoop_version = "2.7.1"
  flavor         = "m1.medium"
  processes      = ["datanode", "nodemanager"]
  description    = "Hadoop workers"
}
