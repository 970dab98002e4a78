variable "name" {
  description = "Name of the cloudlet; the cluster instance is named after it."
  type        = string
}

variable "location" {
  description = "Where the cloudlet is (free text). Changing it replaces the whole chain."
  type        = string
  default     = null
}

variable "crm_version" {
  description = "The cloudlet's CRM version; changing it upgrades the cloudlet in place."
  type        = string
  default     = "1.0"
}

variable "flavor" {
  description = "Node flavor of the cluster instance; changing it replaces the cluster and its apps."
  type        = string
  default     = "m4.small"
}

variable "num_nodes" {
  description = "Worker nodes of the cluster instance; changed in place."
  type        = number
  default     = 2
}

variable "apps" {
  description = "The application instances, by name: their version (replaced when changed) and configs (changed in place)."
  type = map(object({
    version = string
    configs = optional(string)
  }))
  default = {
    web = { version = "1.0" }
    api = { version = "1.0" }
  }
}
