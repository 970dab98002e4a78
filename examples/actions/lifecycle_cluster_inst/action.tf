# Terraform 1.14+. Run the update of the cluster instance of the lifecycle_cluster_inst
# example again (Ready -> UpdateRequested -> Updating -> Ready); the simulator refuses it,
# with the cloudlet's state, while the cloudlet upgrades:
# terraform apply -invoke=action.lifecycle_cluster_inst.update
action "lifecycle_cluster_inst" "update" {
  config {
    id     = lifecycle_cluster_inst.k8s.id
    action = "update"
  }
}
