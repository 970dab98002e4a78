package provider

func clusterInstKind() kindConfig {
	return kindConfig{
		typeName: "cluster_inst",
		kind:     "cluster_inst",
		description: "A MobiledgeX cluster instance on a cloudlet. The controller and the cloudlet's CRM move it through its tracked state " +
			"(`CreateRequested` → `Creating` → `Ready`). A create the CRM fails is undone by the controller (`CreateError` → `NotPresent`): " +
			"the apply fails with the CRM's message and nothing is left in the state. A failed update leaves it in `UpdateError`; the " +
			"apply fails and the next apply retries the update. No change runs while its cloudlet is upgrading or in `UpdateError`: " +
			"the plan warns, and the apply waits for the upgrade. Deleting a ClusterInst that still has AppInsts is refused, naming them.",
		parentAttr: "cloudlet_id",
		parentKind: "cloudlet",
		desired:    ready,
	}
}
