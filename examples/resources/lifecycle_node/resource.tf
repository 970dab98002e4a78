resource "lifecycle_node" "rack1" {
  name = "rack1-node07"

  # ENABLED (the default), MAINTENANCE or DECOMMISSIONED. DECOMMISSIONED is final:
  # asking for ENABLED afterwards fails at plan time. Destroying the node decommissions it.
  status = "MAINTENANCE"
}
