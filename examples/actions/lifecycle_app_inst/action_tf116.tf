# Terraform 1.16+ (before_destroy): the tests parse this file and check it against the
# provider's schema, but run it only with Terraform 1.16 or later. No AppInst changes while
# its cloudlet is in UpdateError (a failed upgrade), deleting included, so a destroy would be
# refused; this trigger runs the cloudlet's fix first, only when it is needed.
resource "lifecycle_app_inst" "api" {
  name            = "api"
  cluster_inst_id = lifecycle_cluster_inst.k8s.id
  app_name        = "api"
  app_version     = "2.0.1"

  lifecycle {
    action_trigger {
      events    = [before_destroy]
      actions   = [action.lifecycle_cloudlet.fix_before_destroy]
      condition = lifecycle_cloudlet.edge.state == "UpdateError"
    }
  }
}

action "lifecycle_cloudlet" "fix_before_destroy" {
  config {
    id     = lifecycle_cloudlet.edge.id
    action = "fix"
  }
}
