package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"
)

// TestSchemaReadsAsTerraformWritesIt: the file is what terraform-json (tfplugindocs' reader)
// takes from `terraform providers schema -json`: types, nested blocks, actions, list resources,
// identities and functions all decode.
func TestSchemaReadsAsTerraformWritesIt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "schema.json")
	if err := run(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var all tfjson.ProviderSchemas
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatalf("terraform-json cannot read it: %v", err)
	}
	p := all.Schemas["lifecycle"]
	if p == nil {
		t.Fatalf("no lifecycle provider in %v", all.Schemas)
	}
	machine := p.ResourceSchemas["lifecycle_machine"]
	if machine == nil || !machine.Block.Attributes["status"].AttributeType.Equals(cty.String) ||
		!machine.Block.Attributes["vcpus"].AttributeType.Equals(cty.Number) {
		t.Errorf("lifecycle_machine = %+v, want a string status and a number vcpus", machine)
	}
	lease := p.ResourceSchemas["lifecycle_lease"]
	if lease == nil || lease.Block.NestedBlocks["reservation"] == nil || lease.Block.NestedBlocks["reservation"].NestingMode != tfjson.SchemaNestingModeList {
		t.Errorf("lifecycle_lease's reservation block = %+v, want a list block", lease)
	}
	if ty := lease.Block.Attributes["reservation_states"].AttributeNestedType; ty == nil || ty.NestingMode != tfjson.SchemaNestingModeList {
		t.Errorf("lifecycle_lease's reservation_states = %+v, want a list of nested objects", lease.Block.Attributes["reservation_states"])
	}
	if p.ActionSchemas["lifecycle_machine"] == nil || p.ListResourceSchemas["lifecycle_machine"] == nil {
		t.Errorf("no action or list resource for machines: %d actions, %d list resources", len(p.ActionSchemas), len(p.ListResourceSchemas))
	}
	if id := p.ResourceIdentitySchemas["lifecycle_machine"]; id == nil || !id.Attributes["id"].RequiredForImport {
		t.Errorf("lifecycle_machine's identity = %+v, want an id required for import", id)
	}
	if f := p.Functions["transition_path"]; f == nil || len(f.Parameters) != 3 || !f.ReturnType.IsObjectType() {
		t.Errorf("transition_path = %+v, want 3 parameters and an object", f)
	}
}
