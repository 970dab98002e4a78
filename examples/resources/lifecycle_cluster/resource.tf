resource "lifecycle_cluster" "hadoop" {
  name           = "analytics"
  plugin_name    = "vanilla"
  hadoop_version = "2.7.1"

  node_group {
    name      = "master"
    flavor    = "m1.large"
    count     = 1
    processes = ["namenode", "resourcemanager"]
  }

  # Changing count scales the cluster in place (from Active). Changing flavor or processes
  # replaces the cluster: Sahara cannot change them in place.
  node_group {
    name      = "worker"
    flavor    = "m1.medium"
    count     = 3
    processes = ["datanode", "nodemanager"]
  }

  timeouts {
    create = "30m"
  }
}
