package provider

// The Savanna cluster as its resource describes it; its node_group blocks are named by its
// spec (item_name).
func savannaDocs() map[string]familyDoc {
	return map[string]familyDoc{
		"cluster": {description: "A Savanna (Sahara) Hadoop cluster: node groups of identical instances, created through eight phases " +
			"(Validating → InfraUpdating → Spawning → Waiting → Preparing → Configuring → Starting → Active). Changing a node " +
			"group's `count` scales the cluster in place (only from `Active`; a failed scale rolls back and keeps the old counts); " +
			"changing its `flavor` or `processes`, the plugin or its version replaces the cluster. A cluster in `Error` (a failed " +
			"create, a fatal scale failure) leaves it only by deletion: the refresh warns, and the next plan replaces it (with " +
			"a warning saying why); `terraform apply -replace` does the same. Delete works from any status, transitional ones " +
			"included."},
	}
}
