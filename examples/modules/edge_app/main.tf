# A cloudlet, one cluster instance on it and two application instances in that cluster: the
# MobiledgeX chain. Terraform creates it top down and destroys it bottom up (the controller
# refuses to delete a cloudlet with ClusterInsts or a ClusterInst with AppInsts).
terraform {
  required_version = ">= 1.6"
  required_providers {
    lifecycle = {
      source = "lifecyclesim/lifecycle"
    }
  }
}

resource "lifecycle_cloudlet" "this" {
  name     = var.name
  location = var.location
  version  = var.crm_version
}

resource "lifecycle_cluster_inst" "this" {
  name        = "${var.name}-k8s"
  cloudlet_id = lifecycle_cloudlet.this.id
  flavor      = var.flavor
  num_nodes   = var.num_nodes
}

resource "lifecycle_app_inst" "this" {
  for_each = var.apps

  name            = each.key
  cluster_inst_id = lifecycle_cluster_inst.this.id
  app_name        = each.key
  app_version     = each.value.version
  configs         = each.value.configs
}
