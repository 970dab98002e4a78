resource "lifecycle_cloudlet" "edge" {
  name          = "berlin-1"
  platform_type = "openstack" # replaces the cloudlet when changed
  location      = "Berlin, DE"

  # Changing the version runs the upgrade in place: UpdateRequested -> Updating -> InitOk
  # -> Ready. No ClusterInst or AppInst on the cloudlet changes meanwhile; their applies
  # wait for the upgrade to end.
  version = "2.0"
}
