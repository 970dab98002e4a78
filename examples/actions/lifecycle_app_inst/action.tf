# Terraform 1.14+. Re-run the update of the app instance of the lifecycle_app_inst example on
# demand (Ready -> Updating -> Ready), for example to make the CRM apply its configs again:
# terraform apply -invoke=action.lifecycle_app_inst.redeploy
action "lifecycle_app_inst" "redeploy" {
  config {
    id      = lifecycle_app_inst.web.id
    action  = "update"
    timeout = "15m"
  }
}
