package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
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
		// Sahara's templates have one state: they exist until deleted.
		"node_group_template": {aim: "Active"},
		"cluster_template":    {aim: "Active"},
		"mci":                 {statuses: []string{"Holding", "Running", "Suspended"}}, // its VMs are members, not a list of children; Holding holds its create
		"reservation":         {aim: "pending", parent: "lease_id"},
		"event":               {waitFor: []string{"UNDONE", "DONE"}, parent: "lease_id"}, // before_end_lease runs at its time
		"vm":                  {aim: "Running", parent: "mci_id"},
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

// TestRenamedCopySchemaShape: a renamed copy of a built-in kind file, loaded as user kinds, gets
// its typed resource's schema shape (every attribute and block, names renamed alike): what
// shapes the schema comes from the spec (the subgroup block's name is its item_name), not from
// Go keyed by a kind's name.
func TestRenamedCopySchemaShape(t *testing.T) {
	tests := []struct {
		file, kind string
		renames    []string
	}{
		{file: "tumblebug.yaml", kind: "mci", renames: []string{"mcis", "fleets", "mci", "fleet", "vms", "units", "vm", "unit"}},
		{file: "blazar.yaml", kind: "lease", renames: []string{"leases", "bookings", "lease", "booking", "reservation_states", "slot_states", "reservations", "slots", "reservation", "slot", "events", "ticks", "event", "tick"}},
		{file: "savanna.yaml", kind: "cluster", renames: []string{"clusters", "farms", "cluster", "farm",
			"node_group_templates", "group_plans", "node_group_template", "group_plan", "cluster_templates", "farm_plans", "cluster_template", "farm_plan"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "lifecycle", "specs", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			rename := func(s string) string {
				for i := 0; i < len(tt.renames); i += 2 {
					s = regexp.MustCompile(`\b`+tt.renames[i]+`\b`).ReplaceAllString(s, tt.renames[i+1])
				}
				return s
			}
			copyFile := filepath.Join(t.TempDir(), "copy.yaml")
			if err := os.WriteFile(copyFile, []byte(rename(string(data))), 0o600); err != nil {
				t.Fatal(err)
			}
			u := loadUserKindFiles(userKindsEnv, copyFile)
			if u.err != nil {
				t.Fatalf("loading the renamed copy of %s: %v", tt.file, u.err)
			}
			want := schemaShape(t, typedConfig(t, typedKinds(), tt.kind))
			got := schemaShape(t, typedConfig(t, configsOf(u.reg, nil, false), rename(tt.kind)))
			want = renamedAll(want, rename)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("schema of the renamed copy of %s =\n%s\nwant\n%s", tt.kind, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func renamedAll(xs []string, rename func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = rename(x)
	}
	return out
}

func typedConfig(t *testing.T, cfgs []kindConfig, kind string) kindConfig {
	t.Helper()
	for _, c := range cfgs {
		if c.kind == kind {
			return c
		}
	}
	t.Fatalf("no typed resource for the %s kind", kind)
	return kindConfig{}
}

// schemaShape lists a typed resource's attributes and blocks, nested ones by path, with
// their Go types and whether they are required, optional or computed.
func schemaShape(t *testing.T, cfg kindConfig) []string {
	t.Helper()
	var resp resource.SchemaResponse
	newKindResource(cfg).Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("schema of %s: %v", cfg.kind, resp.Diagnostics)
	}
	var out []string
	var walk func(prefix string, attrs map[string]schema.Attribute, blocks map[string]schema.Block)
	walk = func(prefix string, attrs map[string]schema.Attribute, blocks map[string]schema.Block) {
		for name, a := range attrs {
			out = append(out, fmt.Sprintf("%s%s %T %v required=%v optional=%v computed=%v", prefix, name, a,
				a.GetType(), a.IsRequired(), a.IsOptional(), a.IsComputed()))
		}
		for name, b := range blocks {
			out = append(out, fmt.Sprintf("%s%s %T", prefix, name, b))
			if lb, ok := b.(schema.ListNestedBlock); ok {
				walk(prefix+name+".", lb.NestedObject.Attributes, lb.NestedObject.Blocks)
			}
		}
	}
	walk("", resp.Schema.Attributes, resp.Schema.Blocks)
	slices.Sort(out)
	return out
}
