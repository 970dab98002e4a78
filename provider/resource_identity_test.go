package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// TestIdentitySchemas: every resource managing an object has an identity (Terraform 1.12+),
// its ID, plus the kind for lifecycle_object; lifecycle_action, which manages no object, has
// none.
func TestIdentitySchemas(t *testing.T) {
	p := newProtoProvider(t, newTestSim(t))
	for name := range p.schemas.ResourceSchemas {
		s, ok := p.ids.IdentitySchemas[name]
		if name == "lifecycle_action" {
			if ok {
				t.Errorf("lifecycle_action has an identity schema")
			}
			continue
		}
		if !ok {
			t.Errorf("%s has no identity schema", name)
			continue
		}
		want := map[string]bool{"id": true}
		if name == "lifecycle_object" {
			want["kind"] = true
		}
		got := map[string]bool{}
		for _, a := range s.IdentityAttributes {
			got[a.Name] = a.RequiredForImport
		}
		if len(got) != len(want) || !got["id"] || (want["kind"] && !got["kind"]) {
			t.Errorf("%s identity attributes (required for import) = %v, want %v", name, got, want)
		}
	}
}

// TestImportByIdentity imports a machine made outside Terraform by its identity, as
// `import { identity = { id = "..." } }` does: the import and the read after it carry the
// identity, and the read fills the state. A wrong ID, and an identity of another kind, fail the
// import with what they are; lifecycle_object takes the kind from its identity.
func TestImportByIdentity(t *testing.T) {
	sim := newTestSim(t)
	p := newProtoProvider(t, sim)
	ctx := context.Background()
	m := sim.makeObject(t, "machine", "by-identity")
	typ := p.schemas.ResourceSchemas["lifecycle_machine"].ValueType()
	idType := p.identityType(t, "lifecycle_machine")

	imp, err := p.srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{
		TypeName: "lifecycle_machine", Identity: p.identity(t, "lifecycle_machine", map[string]string{"id": m.ID}),
	})
	if err != nil || hasError(imp.Diagnostics) || len(imp.ImportedResources) != 1 {
		t.Fatalf("ImportResourceState: %v %s", err, diagText(imp.Diagnostics))
	}
	got := imp.ImportedResources[0]
	if st := attrsOf(t, got.State, typ); st["id"] != m.ID {
		t.Errorf("imported state's id = %q, want %q", st["id"], m.ID)
	}
	if id := attrsOf(t, got.Identity.IdentityData, idType); id["id"] != m.ID {
		t.Errorf("imported identity's id = %q, want %q", id["id"], m.ID)
	}
	read, err := p.srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{
		TypeName: "lifecycle_machine", CurrentState: got.State, CurrentIdentity: got.Identity,
	})
	if err != nil || hasError(read.Diagnostics) {
		t.Fatalf("ReadResource: %v %s", err, diagText(read.Diagnostics))
	}
	st := attrsOf(t, read.NewState, typ)
	if st["name"] != "by-identity" || st["state"] != m.State || st["cloudspace_id"] != m.ParentID {
		t.Errorf("read after import: name %q state %q cloudspace_id %q, want by-identity %s %s", st["name"], st["state"], st["cloudspace_id"], m.State, m.ParentID)
	}
	if read.NewIdentity == nil {
		t.Fatal("read returned no identity")
	}
	if id := attrsOf(t, read.NewIdentity.IdentityData, idType); id["id"] != m.ID {
		t.Errorf("read identity's id = %q, want %q", id["id"], m.ID)
	}

	// A read that finds the object gone removes it, with the identity it had (the framework
	// wants one) and no error.
	gone := sim.makeObject(t, "machine", "gone")
	gimp, err := p.srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{
		TypeName: "lifecycle_machine", Identity: p.identity(t, "lifecycle_machine", map[string]string{"id": gone.ID}),
	})
	if err != nil || hasError(gimp.Diagnostics) {
		t.Fatalf("ImportResourceState: %v %s", err, diagText(gimp.Diagnostics))
	}
	if _, err := sim.Client.Delete(ctx, "machines", gone.ID, "destroy"); err != nil {
		t.Fatal(err)
	}
	sim.waitGone(t, "machines", gone.ID)
	gread, err := p.srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{
		TypeName: "lifecycle_machine", CurrentState: gimp.ImportedResources[0].State,
	})
	if err != nil || len(gread.Diagnostics) > 0 {
		t.Fatalf("ReadResource of a gone machine: %v %s", err, diagText(gread.Diagnostics))
	}
	if v, err := gread.NewState.Unmarshal(typ); err != nil || !v.IsNull() {
		t.Errorf("read of a gone machine: state %v (%v), want null", v, err)
	}

	// The same object through lifecycle_object: the kind comes from the identity.
	obj, err := p.srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{
		TypeName: "lifecycle_object", Identity: p.identity(t, "lifecycle_object", map[string]string{"id": m.ID, "kind": "machine"}),
	})
	if err != nil || hasError(obj.Diagnostics) {
		t.Fatalf("ImportResourceState lifecycle_object: %v %s", err, diagText(obj.Diagnostics))
	}
	ost := attrsOf(t, obj.ImportedResources[0].State, p.schemas.ResourceSchemas["lifecycle_object"].ValueType())
	if ost["id"] != m.ID || ost["kind"] != "machine" {
		t.Errorf("lifecycle_object import state: id %q kind %q, want %s machine", ost["id"], ost["kind"], m.ID)
	}

	tests := []struct {
		name, typeName string
		give           map[string]string
		want           string
	}{
		{"missing", "lifecycle_machine", map[string]string{"id": "machine-0000000000000000"},
			`Cannot import lifecycle_machine by the identity { id = "machine-0000000000000000" }: No machine has the ID`},
		{"other kind", "lifecycle_cloudspace", map[string]string{"id": m.ID},
			`Import it into a lifecycle_machine resource: ` + "`" + `import { to = lifecycle_machine.NAME, identity = { id = "` + m.ID + `" } }` + "`" +
				` (or into lifecycle_object with ` + "`" + `identity = { kind = "machine", id = "` + m.ID + `" }` + "`"},
		{"other kind, generic", "lifecycle_object", map[string]string{"id": m.ID, "kind": "cloudspace"},
			`Cannot import lifecycle_object by the identity { kind = "cloudspace", id = "` + m.ID + `" }`},
		{"no kind", "lifecycle_object", map[string]string{"id": m.ID}, "set it to the object's kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := p.srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: tt.typeName, Identity: p.identity(t, tt.typeName, tt.give)})
			if err != nil {
				t.Fatal(err)
			}
			if !hasError(resp.Diagnostics) || !strings.Contains(diagText(resp.Diagnostics), tt.want) {
				t.Errorf("import %s by %v: %s, want an error with %q", tt.typeName, tt.give, diagText(resp.Diagnostics), tt.want)
			}
			// An identity import is not told to use the KIND/ID string form.
			if text := diagText(resp.Diagnostics); strings.Contains(text, "lifecycle_object as ") {
				t.Errorf("import %s by identity %v hints the KIND/ID form: %s", tt.typeName, tt.give, text)
			}
		})
	}
}
