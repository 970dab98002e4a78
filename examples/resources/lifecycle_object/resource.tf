# Any kind the simulator serves, here a MobiledgeX cluster instance on a cloudlet.
resource "lifecycle_object" "cloudlet" {
  kind = "cloudlet"
  name = "paris-edge"
}

resource "lifecycle_object" "cluster" {
  kind      = "cluster_inst"
  name      = "k8s-small"
  parent_id = lifecycle_object.cloudlet.id

  # Checked against the kind's state machine at plan time, as for the typed resources.
  status = "Ready"

  # Spec fields as HCL values (strings, numbers, booleans, lists, objects).
  spec = {
    flavor = "m4.small"
  }
}
