# Terraform 1.14+. Run Sahara's scale step on the cluster of the lifecycle_cluster example
# (Active -> Validating -> ... -> Active), which rebalances its node groups without changing
# their counts: terraform apply -invoke=action.lifecycle_cluster.rebalance
action "lifecycle_cluster" "rebalance" {
  config {
    id      = lifecycle_cluster.hadoop.id
    action  = "scale"
    timeout = "30m"
  }
}
