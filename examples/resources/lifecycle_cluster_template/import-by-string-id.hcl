# Terraform 1.5 and later: import in the configuration, reviewed in the plan.
import {
  to = lifecycle_cluster_template.hadoop
  id = "cluster_template-0a1b2c3d4e5f6a7b"
}
