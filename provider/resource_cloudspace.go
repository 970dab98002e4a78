package provider

func cloudspaceKind() kindConfig {
	return kindConfig{
		typeName: "cloudspace",
		kind:     "cloudspace",
		description: "An OpenvCloud cloudspace (a private network behind a virtual firewall) in an account. " +
			"A cloudspace whose firewall stopped is `PAUSED` until self-healing resumes it; plans show that calmly as drift.",
		parentAttr: "account_id",
		parentKind: "account",
		statuses:   []string{"DEPLOYED", "DISABLED"},
	}
}
