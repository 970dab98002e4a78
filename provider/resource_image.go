package provider

func imageKind() kindConfig {
	return kindConfig{
		typeName:    "image",
		kind:        "image",
		description: "An OpenvCloud machine image.",
		statuses:    []string{"CREATED", "DISABLED"},
	}
}
