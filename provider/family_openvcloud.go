package provider

// The OpenvCloud kinds as their resources describe them; everything else comes from their
// specs (lifecycle/specs/openvcloud.yaml): the disk's machine_id is its spec's link.
func openvcloudDocs() map[string]familyDoc {
	return map[string]familyDoc{
		"account": {description: "An OpenvCloud account: the top of the account → cloudspace → machine tree."},
		"cloudspace": {description: "An OpenvCloud cloudspace (a private network behind a virtual firewall) in an account. " +
			"A cloudspace whose firewall stopped is `PAUSED` until self-healing resumes it; plans show that calmly as drift."},
		"machine": {description: "An OpenvCloud virtual machine in a cloudspace. Changing `status` walks the state machine (`HALTED` → `PAUSED` starts, then pauses)."},
		"disk": {description: "An OpenvCloud disk in an account. Setting `machine_id` attaches it (`ASSIGNED`), clearing it detaches it (`CREATED`), " +
			"in place. A disk attached to a machine deleted into the recycle bin becomes `TOBEDELETED`; restoring the machine brings it back."},
		"image": {description: "An OpenvCloud machine image."},
		"node": {description: "An OpenvCloud physical node. `DECOMMISSIONED` is final: no action leads back, so a plan asking for " +
			"`ENABLED` afterwards replaces the node (and warns why). Destroying a node decommissions it."},
	}
}
