package provider

func machineKind() kindConfig {
	return kindConfig{
		typeName:    "machine",
		kind:        "machine",
		description: "An OpenvCloud virtual machine in a cloudspace. Changing `status` walks the state machine (`HALTED` → `PAUSED` starts, then pauses).",
		parentAttr:  "cloudspace_id",
		parentKind:  "cloudspace",
		statuses:    []string{"RUNNING", "PAUSED", "HALTED"},
	}
}
