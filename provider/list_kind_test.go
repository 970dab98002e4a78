package provider

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// list runs the ListResource RPC (terraform query) with a filter of string attributes and
// returns its results.
func (p *protoProvider) list(t *testing.T, typeName string, filter map[string]string, include bool, limit int64) []tfprotov6.ListResourceResult {
	t.Helper()
	s, ok := p.schemas.ListResourceSchemas[typeName]
	if !ok {
		t.Fatalf("no list resource %s", typeName)
	}
	stream, err := p.srv.(tfprotov6.ListResourceServer).ListResource(context.Background(), &tfprotov6.ListResourceRequest{
		TypeName: typeName, Config: dynamic(t, objectOf(s.ValueType(), stringValues(filter))), IncludeResource: include, Limit: limit,
	})
	if err != nil {
		t.Fatalf("ListResource %s: %v", typeName, err)
	}
	var out []tfprotov6.ListResourceResult
	for r := range stream.Results {
		out = append(out, r)
	}
	return out
}

func displayNames(rs []tfprotov6.ListResourceResult) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.DisplayName)
	}
	return out
}

// TestListMachines lists machines made outside Terraform, as `terraform query` does with a
// `list "lifecycle_machine"` block: filtered by cloudspace, state and name, in name order, up
// to the limit, each with its identity; lifecycle_object lists them by kind.
func TestListMachines(t *testing.T) {
	sim := newTestSim(t)
	p := newProtoProvider(t, sim)
	ctx := context.Background()
	first := sim.makeObject(t, "machine", "web-b")
	other := sim.makeObject(t, "machine", "db")
	o, err := sim.Client.Create(ctx, "machines", clientCreate("web-a", first.ParentID))
	if err != nil {
		t.Fatal(err)
	}
	second := sim.waitStatic(t, "machines", o.ID)
	sim.act(t, "machines", second.ID, "stop")
	sim.waitStatic(t, "machines", second.ID)
	idType := p.identityType(t, "lifecycle_machine")

	tests := []struct {
		name   string
		filter map[string]string
		limit  int64
		want   []string
	}{
		{"all", nil, 0, []string{"db", "web-a", "web-b"}},
		{"in a cloudspace", map[string]string{"cloudspace_id": first.ParentID}, 0, []string{"web-a", "web-b"}},
		{"halted", map[string]string{"state": "HALTED"}, 0, []string{"web-a"}},
		{"running in a cloudspace", map[string]string{"cloudspace_id": first.ParentID, "state": "RUNNING"}, 0, []string{"web-b"}},
		{"by name", map[string]string{"name": "db"}, 0, []string{"db"}},
		{"none", map[string]string{"name": "nope"}, 0, nil},
		{"limit", nil, 2, []string{"db", "web-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.list(t, "lifecycle_machine", tt.filter, false, tt.limit)
			if names := displayNames(got); !slices.Equal(names, tt.want) {
				t.Errorf("list lifecycle_machine %v = %v, want %v", tt.filter, names, tt.want)
			}
			for _, r := range got {
				if len(r.Diagnostics) > 0 || r.Resource != nil {
					t.Errorf("%s: diagnostics %s, resource %v (not asked for)", r.DisplayName, diagText(r.Diagnostics), r.Resource)
				}
				id := attrsOf(t, r.Identity.IdentityData, idType)["id"]
				want := map[string]string{"db": other.ID, "web-a": second.ID, "web-b": first.ID}[r.DisplayName]
				if id != want {
					t.Errorf("%s: identity id %q, want %q", r.DisplayName, id, want)
				}
			}
		})
	}

	objs := p.list(t, "lifecycle_object", map[string]string{"kind": "machine", "parent_id": first.ParentID}, false, 0)
	if names := displayNames(objs); !slices.Equal(names, []string{"web-a", "web-b"}) {
		t.Errorf("list lifecycle_object machine = %v, want [web-a web-b]", names)
	}
	if id := attrsOf(t, objs[0].Identity.IdentityData, p.identityType(t, "lifecycle_object")); id["kind"] != "machine" || id["id"] != second.ID {
		t.Errorf("lifecycle_object identity = %v, want machine %s", id, second.ID)
	}
	// A misspelt state is refused with the valid ones, not answered with an empty list.
	for _, typ := range []struct{ name, kind string }{{"lifecycle_machine", ""}, {"lifecycle_object", "machine"}} {
		filter := map[string]string{"state": "RUNNIN"}
		if typ.kind != "" {
			filter["kind"] = typ.kind
		}
		misspelt := p.list(t, typ.name, filter, false, 0)
		if len(misspelt) != 1 || !hasError(misspelt[0].Diagnostics) ||
			!strings.Contains(diagText(misspelt[0].Diagnostics), `"RUNNIN" is not a state of machine objects, so the filter would find none. Did you mean "RUNNING"?`) ||
			!strings.Contains(diagText(misspelt[0].Diagnostics), "`HALTED`") {
			t.Errorf("list %s with state RUNNIN: %v, want an error naming RUNNING and the other states", typ.name, diagText(misspelt[0].Diagnostics))
		}
	}
	bad := p.list(t, "lifecycle_object", map[string]string{"kind": "nonesuch"}, false, 0)
	if len(bad) != 1 || !hasError(bad[0].Diagnostics) || !strings.Contains(diagText(bad[0].Diagnostics), "Unknown kind") {
		t.Errorf("list of an unknown kind: %v, want an Unknown kind error", bad)
	}
}

// TestListEveryResourceIncludesImportState lists an object of every resource type with its
// resource included (`terraform query -generate-config-out`): the resource is exactly the
// state an import of the object followed by a refresh stores, so the configuration written
// from it imports and plans no changes. lifecycle_object's is checked with a machine.
func TestListEveryResourceIncludesImportState(t *testing.T) {
	sim := newTestSim(t)
	p := newProtoProvider(t, sim)
	ctx := context.Background()
	types := append(typedKinds(), objectKind())
	for _, cfg := range types {
		typeName := "lifecycle_" + cfg.typeName
		if _, ok := p.schemas.ListResourceSchemas[typeName]; !ok {
			t.Errorf("%s has no list resource", typeName)
			continue
		}
		kind, filter := cfg.kind, map[string]string{}
		if kind == "" {
			kind, filter["kind"] = "machine", "machine"
		}
		o := sim.makeObject(t, kind, "listed-"+cfg.typeName)
		filter["name"] = o.Name
		got := p.list(t, typeName, filter, true, 0)
		if len(got) != 1 || hasError(got[0].Diagnostics) || got[0].Resource == nil {
			t.Errorf("list %s %v: %d results %v", typeName, filter, len(got), got)
			continue
		}
		typ := p.schemas.ResourceSchemas[typeName].ValueType()
		listed, err := got[0].Resource.Unmarshal(typ)
		if err != nil {
			t.Fatal(err)
		}
		imp, err := p.srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: typeName, Identity: got[0].Identity})
		if err != nil || hasError(imp.Diagnostics) {
			t.Fatalf("import %s by the listed identity: %v %s", typeName, err, diagText(imp.Diagnostics))
		}
		read, err := p.srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typeName,
			CurrentState: imp.ImportedResources[0].State, CurrentIdentity: imp.ImportedResources[0].Identity})
		if err != nil || hasError(read.Diagnostics) {
			t.Fatalf("read %s after import: %v %s", typeName, err, diagText(read.Diagnostics))
		}
		want, err := read.NewState.Unmarshal(typ)
		if err != nil {
			t.Fatal(err)
		}
		if !listed.Equal(want) {
			diffs, _ := listed.Diff(want)
			t.Errorf("%s: the listed resource differs from the imported state: %v", typeName, diffs)
		}
	}
}

// stringValues are string attributes as Terraform values.
func stringValues(attrs map[string]string) map[string]tftypes.Value {
	vals := make(map[string]tftypes.Value, len(attrs))
	for k, v := range attrs {
		vals[k] = tftypes.NewValue(tftypes.String, v)
	}
	return vals
}
