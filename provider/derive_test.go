package provider

import (
	"fmt"
	"testing"
)

// TestDeriveFromSpec: what the spec says of each built-in kind is what its typed resource does,
// with no Go per kind: the statuses users may ask for, what a kind without one aims at (its
// links, its timers, or where its create lands), what a create may wait for, the error states
// held for a repair, the children shown and the parent attribute.
func TestDeriveFromSpec(t *testing.T) {
	type want struct {
		statuses, waitFor, holds []string
		aim, parent, related     string
		links                    string
	}
	tests := map[string]want{
		"account":      {statuses: []string{"CONFIRMED", "DISABLED"}},
		"cloudspace":   {statuses: []string{"DEPLOYED", "DISABLED"}, parent: "account_id"}, // PAUSED: self-healing leaves it
		"machine":      {statuses: []string{"RUNNING", "PAUSED", "HALTED"}, parent: "cloudspace_id"},
		"disk":         {parent: "account_id", links: "[{machine_id ASSIGNED CREATED}]"},
		"image":        {statuses: []string{"CREATED", "DISABLED"}},
		"node":         {statuses: []string{"ENABLED", "MAINTENANCE", "DECOMMISSIONED"}},
		"lease":        {waitFor: []string{"PENDING", "ACTIVE"}, related: "[reservation_states:reservation:[resource_type] events:event:[event_type time]]"},
		"cloudlet":     {aim: "Ready", holds: []string{"UpdateError"}},
		"cluster_inst": {aim: "Ready", parent: "cloudlet_id"},
		"app_inst":     {aim: "Ready", parent: "cluster_inst_id"},
		"cluster":      {aim: "Active"},
		"mci":          {statuses: []string{"Running", "Suspended"}}, // its VMs are members, not a list of children
		"reservation":  {aim: "pending", parent: "lease_id"},
		"event":        {aim: "UNDONE", parent: "lease_id"},
		"vm":           {aim: "Running", parent: "mci_id"},
	}
	for _, cfg := range append(typedKinds(), dataOnlyKinds()...) {
		w, ok := tests[cfg.kind]
		if !ok {
			t.Errorf("no expectation for the %s kind", cfg.kind)
			continue
		}
		var related []string
		for _, r := range cfg.related {
			related = append(related, fmt.Sprintf("%s:%s:%v", r.attr, r.kind, r.fields))
		}
		got := want{statuses: cfg.statuses, waitFor: cfg.waitFor, holds: cfg.holds, aim: cfg.aim, parent: cfg.parentAttr}
		if len(related) > 0 {
			got.related = fmt.Sprint(related)
		}
		if len(cfg.links) > 0 {
			got.links = fmt.Sprint(cfg.links)
		}
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", w) {
			t.Errorf("deriveConfig(%s) = %+v, want %+v", cfg.kind, got, w)
		}
		delete(tests, cfg.kind)
	}
	for k := range tests {
		t.Errorf("no typed resource or data source for the %s kind", k)
	}
}
