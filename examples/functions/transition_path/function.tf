# The shortest route from HALTED to PAUSED:
# { actions = ["start", "pause"], states = ["HALTED", "RUNNING", "PAUSED"] }
output "halted_to_paused" {
  value = provider::lifecycle::transition_path("machine", "HALTED", "PAUSED")
}

# A transition state starts from where it lands: STOPPING lands in HALTED.
output "stopping_to_running" {
  value = provider::lifecycle::transition_path("machine", "STOPPING", "RUNNING").actions
}
