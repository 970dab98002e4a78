package provider

// The MobiledgeX kinds as their resources describe them; their aim (Ready), the cloudlet's
// repair (fix from UpdateError) and the guards come from their specs
// (lifecycle/specs/mobiledgex.yaml).
func mobiledgexDocs() map[string]familyDoc {
	return map[string]familyDoc{
		"cloudlet": {description: "A MobiledgeX cloudlet and its CRM. Create runs the cloudlet creation table (`Offline` → `Init` → `InitOk` → `Ready`); " +
			"changing `version` runs the upgrade table in place (`UpdateRequested` → `Updating` → `InitOk` → `Ready`), during which " +
			"no ClusterInst or AppInst on it may change. A failed upgrade leaves the cloudlet in `UpdateError`: the apply fails, and " +
			"the provider leaves it there for you to repair with its `fix` action from Terraform (a `lifecycle_action` with " +
			"`action = \"fix\"`, applied before further changes). " +
			"Deleting a cloudlet that still has ClusterInsts is refused, naming them."},
		"cluster_inst": {description: "A MobiledgeX cluster instance on a cloudlet. The controller and the cloudlet's CRM move it through its tracked state " +
			"(`CreateRequested` → `Creating` → `Ready`). A create the CRM fails is undone by the controller (`CreateError` → `NotPresent`): " +
			"the apply fails with the CRM's message and nothing is left in the state. A failed update leaves it in `UpdateError`; the " +
			"apply fails and the next apply retries the update. No change runs while its cloudlet is upgrading or in `UpdateError`: " +
			"the plan warns, and the apply waits for the upgrade. Deleting a ClusterInst that still has AppInsts is refused, naming them."},
		"app_inst": {description: "A MobiledgeX application instance in a cluster instance. Its tracked state moves like a ClusterInst's " +
			"(`CreateRequested` → `Creating` → `Ready`; a failed create is undone to `NotPresent`, a failed update stays in `UpdateError` " +
			"and the next apply retries it). It cannot be created or changed while its ClusterInst is not `Ready`, nor while its " +
			"cloudlet, two levels up, is upgrading or in `UpdateError`: the plan warns naming the cloudlet, and the apply waits " +
			"for an upgrade to end."},
	}
}
