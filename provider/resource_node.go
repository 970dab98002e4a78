package provider

func nodeKind() kindConfig {
	return kindConfig{
		typeName: "node",
		kind:     "node",
		description: "An OpenvCloud physical node. `DECOMMISSIONED` is final: no route leads back, so a plan asking for " +
			"`ENABLED` afterwards fails. Destroying a node decommissions it.",
		statuses: []string{"ENABLED", "MAINTENANCE", "DECOMMISSIONED"},
	}
}
