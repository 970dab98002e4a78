package provider

func appInstKind() kindConfig {
	return kindConfig{
		typeName: "app_inst",
		kind:     "app_inst",
		description: "A MobiledgeX application instance in a cluster instance. Its tracked state moves like a ClusterInst's " +
			"(`CreateRequested` → `Creating` → `Ready`; a failed create is undone to `NotPresent`, a failed update stays in `UpdateError` " +
			"and the next apply retries it). It cannot be created or changed while its ClusterInst is not `Ready`, nor while its " +
			"cloudlet, two levels up, is upgrading or in `UpdateError`: the plan warns naming the cloudlet, and the apply waits " +
			"for an upgrade to end.",
		parentAttr: "cluster_inst_id",
		parentKind: "cluster_inst",
		desired:    ready,
	}
}
