package provider

func imageKind() kindConfig {
	return kindConfig{
		typeName:    "image",
		kind:        "image",
		description: "An OpenvCloud machine image.",
		statuses:    []string{"CREATED", "DISABLED"},
		fields: []specField{
			{attr: "os_type", typ: stringField, def: "linux", description: "Operating system family of the image."},
		},
	}
}
