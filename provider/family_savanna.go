package provider

// The Savanna cluster and Sahara's templates as their resources describe them; their
// node_group blocks are named by their specs (item_name).
func savannaDocs() map[string]familyDoc {
	return map[string]familyDoc{
		"cluster": {description: "A Savanna (Sahara) Hadoop cluster: node groups of identical instances, created through eight phases " +
			"(Validating → InfraUpdating → Spawning → Waiting → Preparing → Configuring → Starting → Active). Changing a node " +
			"group's `count` scales the cluster in place (only from `Active`; a failed scale rolls back and keeps the old counts); " +
			"changing its `flavor` or `processes`, the plugin or its version replaces the cluster. A cluster in `Error` (a failed " +
			"create, a fatal scale failure) leaves it only by deletion: the refresh warns, and the next plan replaces it (with " +
			"a warning saying why); `terraform apply -replace` does the same. Delete works from any status, transitional ones " +
			"included. A cluster made from a cluster template names it in `cluster_template_id`, which keeps the template from " +
			"being deleted while the cluster exists."},
		"node_group_template": {description: "A Sahara node group template: the flavor and Hadoop processes of a node group, " +
			"for a plugin and version. It has no status of its own: it is `Active` from its create until it is deleted. " +
			"The Sahara API serves it under a UUID (`openstack dataprocessing node group template show`)."},
		"cluster_template": {description: "A Sahara cluster template: node groups, each made from a node group template " +
			"with a count, that `openstack dataprocessing cluster create --cluster-template` makes clusters from. It is " +
			"`Active` from its create until it is deleted; deleting it is refused while a cluster names it in " +
			"`cluster_template_id`."},
	}
}
