data "lifecycle_cloudspace" "web" {
  name = "web"
}

# PAUSED while self-healing restarts the cloudspace's firewall, DEPLOYED again afterwards.
output "web_status" {
  value = data.lifecycle_cloudspace.web.status
}

output "web_account_id" {
  value = data.lifecycle_cloudspace.web.account_id
}
