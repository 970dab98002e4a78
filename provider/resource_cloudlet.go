package provider

// ready is the desired state of the MobiledgeX kinds: their tracked state is driven by the
// controller and the CRM, so users do not choose it; the provider brings the object to Ready.
func ready(*objectModel) string { return "Ready" }

func cloudletKind() kindConfig {
	return kindConfig{
		typeName: "cloudlet",
		kind:     "cloudlet",
		description: "A MobiledgeX cloudlet and its CRM. Create runs the cloudlet creation table (`Offline` → `Init` → `InitOk` → `Ready`); " +
			"changing `version` runs the upgrade table in place (`UpdateRequested` → `Updating` → `InitOk` → `Ready`), during which " +
			"no ClusterInst or AppInst on it may change. A failed upgrade leaves the cloudlet in `UpdateError`: the apply fails, and " +
			"the provider leaves it there for you to repair with its `fix` action from Terraform (a `lifecycle_action` with " +
			"`action = \"fix\"`, applied before further changes). " +
			"Deleting a cloudlet that still has ClusterInsts is refused, naming them.",
		desired: ready,
		holds:   []string{"UpdateError"},
	}
}
