package provider

import (
	"cmp"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// lifecycle_mci: a CB-Tumblebug MCI managed as one, with its VMs as members. What makes it one
// comes from its spec (specMembers: its subgroups make its VMs, its actions reach them, refine
// removes the failed ones); this file adds the descriptions and what the family's status
// function (tumblebug.mci_status, named by the spec's derive) writes: the aggregated status
// text, the counts per status and the running action.

// tumblebugDocs are the CB-Tumblebug kinds as their resources describe them (the VM's is its
// spec's; the subgroup block's name is the spec's item_name).
func tumblebugDocs() map[string]familyDoc {
	return map[string]familyDoc{
		"mci": {description: "A CB-Tumblebug multi-cloud infrastructure (MCI): `subgroup` blocks of identical VMs across clouds, " +
			"managed as one. `status` is `Running` or `Suspended` for the whole MCI; its state is the dominant status of " +
			"its VMs, and `status_text`, `status_count` and `vms` show each VM. Changing a subgroup's `count` scales it " +
			"in place. VMs that fail leave the apply successful with a warning; the next plan refines them and " +
			"provisions replacements."},
	}
}

// tumblebugStatusFunction is the family's derive function: the MCI's status fields.
const tumblebugStatusFunction = "tumblebug.mci_status"

// statusCountKeys are the keys of status_count (the function writes them prefixed count_).
var statusCountKeys = []string{
	"total", "creating", "running", "failed", "suspended", "rebooting", "terminated",
	"suspending", "resuming", "terminating", "undefined",
}

// tumblebugStatus shows what tumblebug.mci_status writes into the object's status.
func tumblebugStatus() *familyStatus {
	return &familyStatus{
		describe: "status_text",
		computed: []computedAttr{
			{name: "status_text", typ: types.StringType, description: "The MCI's status as CB-Tumblebug shows it: " +
				"`(Partial-)Dominant:count (R:running/total)`, such as `Partial-Running:2 (R:2/3)`. The dominant status is the " +
				"most frequent among the VMs (ties go to the earlier of Failed, Suspended, Running, Terminated, Creating, " +
				"Suspending, Resuming, Rebooting, Terminating, Undefined); `Partial-` means not every VM has it."},
			{name: "status_count", typ: types.MapType{ElemType: types.Int64Type}, description: "How many VMs have each status: " +
				"keys " + quoted(statusCountKeys) + "."},
			{name: "target_action", typ: types.StringType, description: "The action running on the MCI (`create`, `suspend`, `scale`...), `None` when none runs."},
			{name: "target_status", typ: types.StringType, description: "The status the running action leads to, `None` when none runs."},
		},
		observe: func(o *client.Object) map[string]attr.Value {
			counts := map[string]attr.Value{}
			raw, _ := o.Status["status_count"].(map[string]any)
			for _, key := range statusCountKeys {
				n, _ := raw["count_"+key].(float64)
				counts[key] = types.Int64Value(int64(n))
			}
			return map[string]attr.Value{
				"status_text":   types.StringValue(str(o.Status["text"])),
				"target_action": types.StringValue(cmp.Or(str(o.Status["target_action"]), "None")),
				"target_status": types.StringValue(cmp.Or(str(o.Status["target_status"]), "None")),
				"status_count":  types.MapValueMust(types.Int64Type, counts),
			}
		},
	}
}
