# Terraform 1.12 and later: import by the identity terraform query and other tools report,
# reviewed in the plan.
import {
  to       = lifecycle_cluster_template.hadoop
  identity = { id = "cluster_template-0a1b2c3d4e5f6a7b" }
}
