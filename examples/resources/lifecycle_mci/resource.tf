# An MCI of two subgroups on two clouds, running as a whole.
resource "lifecycle_mci" "shop" {
  name   = "shop"
  status = "Running" # or "Suspended": every VM follows

  subgroup {
    name   = "web"
    count  = 2 # change it to scale the subgroup in place
    csp    = "aws"
    region = "us-east-1"
    spec   = "t3.small"
    image  = "ubuntu22.04"
  }

  subgroup {
    name   = "db"
    count  = 1
    csp    = "gcp"
    region = "asia-northeast3"
    spec   = "e2-standard-4"
    image  = "ubuntu22.04"
  }
}

output "shop_status" {
  value = lifecycle_mci.shop.status_text # Running:3 (R:3/3)
}
