data "lifecycle_cloudlet" "edge" {
  name = "berlin-1"
}

output "cloudlet" {
  value = {
    id      = data.lifecycle_cloudlet.edge.id
    state   = data.lifecycle_cloudlet.edge.state # Ready, or UpdateRequested during an upgrade
    version = data.lifecycle_cloudlet.edge.version
  }
}
