# Terraform 1.5 and later: import in the configuration, reviewed in the plan.
import {
  to = lifecycle_node_group_template.worker
  id = "node_group_template-0a1b2c3d4e5f6a7b"
}
