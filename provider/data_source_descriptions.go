package provider

import (
	"regexp"
	"strings"
)

// dataSourceDescriptions are the data sources' own descriptions, by type name: what the data
// source reads and what its attributes tell, never what changing a resource's attributes does.
var dataSourceDescriptions = map[string]string{
	"object": "Reads an object of any kind the simulator serves, built-in or user-defined (`lifecyclesim --kinds`), " +
		"by ID or by name: its state, parent and spec as strings. A typed data source (`lifecycle_machine`, ...) " +
		"gives a kind's spec fields their own types.",
	"account": "Reads an OpenvCloud account by ID or by name: its `status` (`CONFIRMED` or `DISABLED`, or " +
		"`DELETED` in the recycle bin). Use its `id` as the `account_id` of cloudspaces and disks.",
	"cloudspace": "Reads an OpenvCloud cloudspace (a private network behind a virtual firewall) by ID or by name: " +
		"its account and its `status`. A cloudspace whose firewall stopped reads `PAUSED` until self-healing " +
		"resumes it (`DEPLOYED`).",
	"machine": "Reads an OpenvCloud virtual machine by ID or by name: its cloudspace, image and size, its " +
		"`state` (a transition state such as `REBOOTING` while an action runs) and the `status` it is in or will " +
		"settle in (`RUNNING`, `PAUSED`, `HALTED`, or `DELETED` in the recycle bin).",
	"disk": "Reads an OpenvCloud disk by ID or by name: its size, the machine it is attached to (`machine_id`, null " +
		"while it is detached) and its `state`: `ASSIGNED` while attached, `CREATED` while detached, `TOBEDELETED` " +
		"when its machine went to the recycle bin, `DELETED` in the recycle bin.",
	"image": "Reads an OpenvCloud machine image by ID or by name: its OS type and `status` (`CREATED`, or " +
		"`DISABLED`). Use its `id` as the `image_id` of machines.",
	"node": "Reads an OpenvCloud physical node by ID or by name: its `status` (`ENABLED`, `MAINTENANCE`, or " +
		"`DECOMMISSIONED`, which is final).",
	"lease": "Reads an OpenStack Blazar lease by ID or by name: its window (`start_date`, `end_date`), its " +
		"`state`, which time drives (`PENDING` until the start, `ACTIVE` until the end, then `TERMINATED`), and " +
		"its reservations and events as the simulator holds them. `reservation_states[*].id` are the IDs the " +
		"`lifecycle_reservation` data source reads.",
	"reservation": "Reads a reservation of a Blazar lease by ID or by name: what it reserves and its `state` " +
		"(`pending`, `active`, `deleted`, `error`), which follows its lease's. Reservations are made and removed " +
		"by their lease; find their IDs in the lease's `reservation_states`.",
	"cloudlet": "Reads a MobiledgeX cloudlet by ID or by name: its platform, location, CRM `version` and tracked " +
		"`state` (`Ready`; `UpdateRequested`, `Updating` and `InitOk` during an upgrade; `UpdateError` after a " +
		"failed one).",
	"cluster_inst": "Reads a MobiledgeX cluster instance by ID or by name: its cloudlet, flavor, node counts and " +
		"tracked `state` (`Ready`, a transition such as `UpdateRequested`, or `UpdateError` after a failed update).",
	"app_inst": "Reads a MobiledgeX application instance by ID or by name: its cluster instance, application, " +
		"configuration and tracked `state` (`Ready`, a transition such as `UpdateRequested`, or `UpdateError` " +
		"after a failed update).",
	"cluster": "Reads a Savanna (Sahara) Hadoop cluster by ID or by name: its plugin, its node groups and its " +
		"`state`, one of the create phases (`Validating` … `Starting`), `Active`, a scaling phase, or `Error`; " +
		"`last_error` holds the message of the last failed operation.",
	"node_group_template": "Reads a Sahara node group template by ID or by name: its plugin and version, the " +
		"flavor and the Hadoop processes of the node groups made from it. Templates made through the Sahara API " +
		"(`openstack dataprocessing node group template create`) are read the same way.",
	"cluster_template": "Reads a Sahara cluster template by ID or by name: its plugin and version and its node " +
		"groups, each with its count and the ID of the node group template it is made from.",
	"mci": "Reads a CB-Tumblebug multi-cloud infrastructure (MCI) by ID or by name: its subgroups, its `state` " +
		"(the dominant status of its VMs), the aggregated `status_text` (`Partial-Running:2 (R:2/3)`), the count " +
		"per status and every VM.",
	"vm": "Reads a CB-Tumblebug VM of an MCI by ID or by name (`<mci>-<subgroup>-<n>`): its MCI, subgroup, cloud, " +
		"region and `state` (`Running`, `Suspended`, a transition such as `Resuming`, `Failed`, ...). VMs are made " +
		"and removed by their MCI.",
}

// resourceOnly matches the clauses of a spec field's description that speak of configuring
// the field (what changing it does, what omitting it means): true of the resource's attribute,
// noise on a data source's.
var resourceOnly = regexp.MustCompile(`(?i)\bchang|\breplace|\bin place\b|\bcan move\b|\bneeds a new\b|^omitted\b`)

// dataFieldDescription is a spec field's description as a data source attribute's: its
// sentences and clauses about configuring the field left out.
func dataFieldDescription(desc string) string {
	var sentences []string
	for s := range strings.SplitSeq(strings.TrimSpace(desc), ". ") {
		s = strings.TrimSuffix(strings.TrimSpace(s), ".")
		var clauses []string
		for c := range strings.SplitSeq(s, "; ") {
			if c = strings.TrimSpace(c); c != "" && !resourceOnly.MatchString(c) {
				clauses = append(clauses, c)
			}
		}
		if len(clauses) > 0 {
			sentences = append(sentences, strings.Join(clauses, "; "))
		}
	}
	if len(sentences) == 0 {
		return ""
	}
	return strings.Join(sentences, ". ") + "."
}
