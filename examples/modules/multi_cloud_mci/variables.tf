variable "name" {
  description = "Name of the MCI; its VMs are named <name>-<subgroup>-<n>."
  type        = string
}

variable "status" {
  description = "Running or Suspended, for every VM of the MCI."
  type        = string
  default     = "Running"
}

variable "web" {
  description = "The web subgroup: how many VMs, on which cloud and region, of which spec and image."
  type = object({
    count  = number
    csp    = string
    region = string
    spec   = optional(string, "t3.small")
    image  = optional(string, "ubuntu22.04")
  })
  default = { count = 2, csp = "aws", region = "us-east-1" }
}

variable "db" {
  description = "The database subgroup, usually on another cloud than web."
  type = object({
    count  = number
    csp    = string
    region = string
    spec   = optional(string, "e2-standard-4")
    image  = optional(string, "ubuntu22.04")
  })
  default = { count = 1, csp = "gcp", region = "asia-northeast3" }
}
