variable "name" {
  description = "Name of the cloudspace; the machines are named after it."
  type        = string
}

variable "account_id" {
  description = "ID of the account the cloudspace lives in."
  type        = string
}

variable "image_id" {
  description = "ID of the image the machines boot."
  type        = string
}

variable "machine_count" {
  description = "How many machines to run."
  type        = number
  default     = 2

  validation {
    condition     = var.machine_count >= 0 && floor(var.machine_count) == var.machine_count
    error_message = "machine_count must be a whole number, 0 or more."
  }
}

variable "machine_status" {
  description = "Status of every machine: RUNNING, PAUSED or HALTED."
  type        = string
  default     = "RUNNING"

  validation {
    condition     = contains(["RUNNING", "PAUSED", "HALTED"], var.machine_status)
    error_message = "machine_status must be RUNNING, PAUSED or HALTED."
  }
}

variable "vcpus" {
  description = "Virtual CPUs of each machine."
  type        = number
  default     = 1
}
