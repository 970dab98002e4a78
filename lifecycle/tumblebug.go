package lifecycle

import "fmt"

// CB-Tumblebug VM statuses, in the order that breaks ties when aggregating an MCI's status.
var mciTieOrder = []string{
	"Failed", "Suspended", "Running", "Terminated", "Creating",
	"Suspending", "Resuming", "Rebooting", "Terminating", "Undefined",
}

// StatusCount counts an MCI's VMs per status, as CB-Tumblebug's StatusCountInfo does.
type StatusCount struct {
	Total       int `json:"count_total"`
	Creating    int `json:"count_creating"`
	Running     int `json:"count_running"`
	Failed      int `json:"count_failed"`
	Suspended   int `json:"count_suspended"`
	Rebooting   int `json:"count_rebooting"`
	Terminated  int `json:"count_terminated"`
	Suspending  int `json:"count_suspending"`
	Resuming    int `json:"count_resuming"`
	Terminating int `json:"count_terminating"`
	Undefined   int `json:"count_undefined"`
}

func (c *StatusCount) field(status string) *int {
	switch status {
	case "Creating":
		return &c.Creating
	case "Running":
		return &c.Running
	case "Failed":
		return &c.Failed
	case "Suspended":
		return &c.Suspended
	case "Rebooting":
		return &c.Rebooting
	case "Terminated":
		return &c.Terminated
	case "Suspending":
		return &c.Suspending
	case "Resuming":
		return &c.Resuming
	case "Terminating":
		return &c.Terminating
	default:
		return &c.Undefined
	}
}

// MCIStatus is an MCI's status aggregated from its VMs.
type MCIStatus struct {
	// Dominant is the most frequent VM status (ties broken in CB-Tumblebug's order); it is the
	// MCI's state.
	Dominant string `json:"dominant"`
	// Partial is set when not every VM has the dominant status.
	Partial bool `json:"partial"`
	// Text is the display form "(Partial-)Dominant:count (R:running/total)".
	Text  string      `json:"text"`
	Count StatusCount `json:"count"`
}

// AggregateMCIStatus computes an MCI's status from its VMs' statuses. Statuses it does not
// know count as Undefined; an MCI without VMs is Undefined.
func AggregateMCIStatus(vmStatuses []string) MCIStatus {
	counts := map[string]int{}
	for _, s := range vmStatuses {
		counts[s]++
	}
	return AggregateMCICounts(counts)
}

// AggregateMCICounts is AggregateMCIStatus of the VMs' counts per status.
func AggregateMCICounts(vms map[string]int) MCIStatus {
	var c StatusCount
	for s, n := range vms {
		*c.field(s) += n
		c.Total += n
	}
	dominant, most := "Undefined", 0
	for _, s := range mciTieOrder {
		if n := *c.field(s); n > most {
			dominant, most = s, n
		}
	}
	partial := most != c.Total
	prefix := ""
	if partial {
		prefix = "Partial-"
	}
	return MCIStatus{
		Dominant: dominant,
		Partial:  partial,
		Text:     fmt.Sprintf("%s%s:%d (R:%d/%d)", prefix, dominant, most, c.Running, c.Total),
		Count:    c,
	}
}

// RefineKeeps reports whether CB-Tumblebug's refine action keeps a VM of this status: refine
// removes Failed and Undefined VMs (and VMs whose status is unknown, which count as Undefined).
func RefineKeeps(status string) bool {
	var c StatusCount
	f := c.field(status)
	return f != &c.Failed && f != &c.Undefined
}

// deriveMCIStatus aggregates an MCI's status fields from its VMs, with the target action and
// status of the operation running on it ("None" when none runs), as CB-Tumblebug's API shows
// them. The MCI's state, the dominant VM status, is the generic dominant_state derivation of
// its spec (in the tie order of mciTieOrder); the status text and counts are family-only.
func deriveMCIStatus(mci View, vms map[string]int) Derived {
	agg := aggregateMCI(mci, vms)
	target, status := "None", "None"
	switch {
	case mci.Action != "":
		target, status = mci.Action, mci.Target
		if status == "" {
			status = "None"
		}
		if a, ok := mci.Decl.actionOf(mci.Action); ok && a.ContinuesCreate {
			target = mci.Decl.Create.Name // a continued create is the create, as upstream shows it
		}
	case mci.Decl != nil && mci.Decl.IsHeld(mci.State):
		// As upstream shows a held MCI: its create is the pending action, Running its aim.
		target, status = mci.Decl.Create.Name, mci.Decl.Create.To
	}
	return Derived{Status: map[string]any{
		"text":          agg.Text,
		"partial":       agg.Partial,
		"status_count":  agg.Count.Map(),
		"target_action": target,
		"target_status": status,
	}}
}

// aggregateMCI is the MCI's status aggregated from its VMs' counts; a held MCI (no VMs yet)
// shows its hold state instead of Undefined ("Holding:0 (R:0/0)").
func aggregateMCI(mci View, vms map[string]int) MCIStatus {
	agg := AggregateMCICounts(vms)
	if mci.Decl != nil && mci.Decl.IsHeld(mci.State) && agg.Count.Total == 0 {
		agg.Dominant = mci.State
		agg.Text = fmt.Sprintf("%s:0 (R:0/0)", mci.State)
	}
	return agg
}

// Map returns the counts keyed as on the wire.
func (c StatusCount) Map() map[string]any {
	return map[string]any{
		"count_total": c.Total, "count_creating": c.Creating, "count_running": c.Running,
		"count_failed": c.Failed, "count_suspended": c.Suspended, "count_rebooting": c.Rebooting,
		"count_terminated": c.Terminated, "count_suspending": c.Suspending, "count_resuming": c.Resuming,
		"count_terminating": c.Terminating, "count_undefined": c.Undefined,
	}
}

// checkMCIAggregate checks that an MCI's stored status is the aggregate of its VMs (the
// children its kind makes from its subgroup list, found through the relation, whatever the
// kinds are called).
func checkMCIAggregate(mci View, children []View) error {
	counts := map[string]int{}
	for _, s := range StatesOfViews(mci.ItemChildren(children)) {
		counts[s]++
	}
	agg := aggregateMCI(mci, counts)
	if got, _ := mci.Status["text"].(string); got != agg.Text {
		return fmt.Errorf("tumblebug: mci %s: status text %q, want %q", mci.ID, got, agg.Text)
	}
	return nil
}

// actionOf is the kind's action named name; a nil kind has none.
func (k *Kind) actionOf(name string) (*Action, bool) {
	if k == nil {
		return nil, false
	}
	return k.Action(name)
}
