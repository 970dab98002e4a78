package provider

func machineKind() kindConfig {
	return kindConfig{
		typeName:    "machine",
		kind:        "machine",
		description: "An OpenvCloud virtual machine in a cloudspace. Changing `status` walks the state machine (`HALTED` → `PAUSED` starts, then pauses).",
		parentAttr:  "cloudspace_id",
		parentKind:  "cloudspace",
		statuses:    []string{"RUNNING", "PAUSED", "HALTED"},
		fields: []specField{
			{attr: "image_id", typ: stringField, required: true, forceNew: true, description: "ID of the image the machine boots from. Changing it replaces the machine."},
			{attr: "vcpus", typ: int64Field, def: int64(1), min: 1, description: "Number of virtual CPUs."},
			{attr: "memory_mb", typ: int64Field, def: int64(1024), min: 128, description: "Memory in MiB."},
		},
	}
}
