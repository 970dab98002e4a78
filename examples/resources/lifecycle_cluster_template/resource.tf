resource "lifecycle_node_group_template" "master" {
  name           = "master"
  plugin_name    = "vanilla"
  hadoop_version = "2.7.1"
  flavor         = "m1.large"
  processes      = ["namenode", "resourcemanager"]
}

resource "lifecycle_node_group_template" "worker" {
  name           = "worker"
  plugin_name    = "vanilla"
  hadoop_version = "2.7.1"
  flavor         = "m1.medium"
  processes      = ["datanode", "nodemanager"]
}

# A Sahara cluster template: node groups made from node group templates, with their counts.
# `openstack dataprocessing cluster create --cluster-template hadoop` makes clusters from it;
# a cluster naming it in cluster_template_id keeps it from being deleted.
resource "lifecycle_cluster_template" "hadoop" {
  name           = "hadoop"
  plugin_name    = "vanilla"
  hadoop_version = "2.7.1"

  node_group {
    name                   = "master"
    count                  = 1
    node_group_template_id = lifecycle_node_group_template.master.id
  }

  node_group {
    name                   = "worker"
    count                  = 3
    node_group_template_id = lifecycle_node_group_template.worker.id
  }
}
