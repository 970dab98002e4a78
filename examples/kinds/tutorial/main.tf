# The tutorial's greenhouse (step5.yaml), managed with lifecycle_object. Start the simulator
# with the tutorial's kinds first: lifecyclesim --kinds step5.yaml
resource "lifecycle_object" "greenhouse" {
  kind   = "greenhouse"
  name   = "north"
  status = "OPEN"

  # Spec values are HCL values: strings, numbers, booleans, lists and objects. area_m2 is left
  # to its default (50), which effective_spec shows.
  spec = {
    crop   = "tomatoes"
    heated = false
    beds = [
      { name = "east", plant = "cherry" },
      { name = "west", plant = "roma" },
    ]
  }
}

output "greenhouse_state" {
  value = lifecycle_object.greenhouse.state
}
