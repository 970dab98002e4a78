resource "lifecycle_node" "rack1" {
  name = "rack1-node07"

  # ENABLED (the default), MAINTENANCE or DECOMMISSIONED. DECOMMISSIONED is final: asking
  # for ENABLED afterwards plans a replacement by a new node, with a warning saying why.
  # Destroying the node decommissions it.
  status = "MAINTENANCE"
}
