package provider

func accountKind() kindConfig {
	return kindConfig{
		typeName:    "account",
		kind:        "account",
		description: "An OpenvCloud account: the top of the account → cloudspace → machine tree.",
		statuses:    []string{"CONFIRMED", "DISABLED"},
	}
}
