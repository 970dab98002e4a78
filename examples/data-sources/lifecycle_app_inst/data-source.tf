data "lifecycle_app_inst" "web" {
  name = "web"
}

output "web_state" {
  value = data.lifecycle_app_inst.web.state # Ready, UpdateError after a failed update, ...
}
