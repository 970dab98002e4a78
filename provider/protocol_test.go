package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// protoProvider is the provider served in-process over protocol 6 and configured against a
// test simulator: the RPCs Terraform 1.12+ and 1.14+ send (identity, list, actions) are called
// directly, since CI's Terraform 1.11 sends none of them.
type protoProvider struct {
	srv     tfprotov6.ProviderServer
	schemas *tfprotov6.GetProviderSchemaResponse
	ids     *tfprotov6.GetResourceIdentitySchemasResponse
}

func newProtoProvider(t *testing.T, sim *testSim) *protoProvider {
	t.Helper()
	return newProtoProviderOf(t, sim, New("test")())
}

// newProtoProviderOf serves a given provider (one with user kinds).
func newProtoProviderOf(t *testing.T, sim *testSim, prov provider.Provider) *protoProvider {
	t.Helper()
	ctx := context.Background()
	fw, err := providerserver.NewProtocol6WithError(prov)()
	if err != nil {
		t.Fatal(err)
	}
	srv := newStopServer(fw) // as NewServer, which main serves
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, diagText(schemas.Diagnostics))
	}
	ids, err := srv.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || len(ids.Diagnostics) > 0 {
		t.Fatalf("GetResourceIdentitySchemas: %v %v", err, diagText(ids.Diagnostics))
	}
	cfg := objectOf(schemas.Provider.ValueType(), map[string]tftypes.Value{"endpoint": tftypes.NewValue(tftypes.String, sim.URL)})
	resp, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: dynamic(t, cfg)})
	if err != nil || hasError(resp.Diagnostics) {
		t.Fatalf("ConfigureProvider: %v %v", err, diagText(resp.Diagnostics))
	}
	return &protoProvider{srv: srv, schemas: schemas, ids: ids}
}

// identityType is the identity's type of a resource type.
func (p *protoProvider) identityType(t *testing.T, typeName string) tftypes.Type {
	t.Helper()
	s, ok := p.ids.IdentitySchemas[typeName]
	if !ok {
		t.Fatalf("%s has no identity schema", typeName)
	}
	return s.ValueType()
}

// identity is an identity of a resource type with the given string attributes.
func (p *protoProvider) identity(t *testing.T, typeName string, attrs map[string]string) *tfprotov6.ResourceIdentityData {
	t.Helper()
	vals := map[string]tftypes.Value{}
	for k, v := range attrs {
		vals[k] = tftypes.NewValue(tftypes.String, v)
	}
	dv := dynamic(t, objectOf(p.identityType(t, typeName), vals))
	return &tfprotov6.ResourceIdentityData{IdentityData: dv}
}

// objectOf is an object of type typ: the given attributes, the others null.
func objectOf(typ tftypes.Type, vals map[string]tftypes.Value) tftypes.Value {
	ot := typ.(tftypes.Object)
	out := map[string]tftypes.Value{}
	for name, at := range ot.AttributeTypes {
		if v, ok := vals[name]; ok {
			out[name] = v
			continue
		}
		out[name] = tftypes.NewValue(at, nil)
	}
	return tftypes.NewValue(ot, out)
}

func dynamic(t *testing.T, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(v.Type(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// attrsOf decodes a dynamic value of type typ into its string attributes (others skipped).
func attrsOf(t *testing.T, dv *tfprotov6.DynamicValue, typ tftypes.Type) map[string]string {
	t.Helper()
	if dv == nil {
		t.Fatal("no value")
	}
	v, err := dv.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	var vals map[string]tftypes.Value
	if err := v.As(&vals); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, av := range vals {
		var s string
		if av.Type().Is(tftypes.String) && av.IsKnown() && !av.IsNull() && av.As(&s) == nil {
			out[name] = s
		}
	}
	return out
}

func hasError(diags []*tfprotov6.Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

func diagText(diags []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(d.Summary + ": " + d.Detail + "\n")
	}
	return b.String()
}

// makeObject creates an object of a kind (and its ancestors) through the simulator's API, as a
// script would, and waits until it is static.
func (s *testSim) makeObject(t *testing.T, kind, name string) *client.Object {
	t.Helper()
	reg := lifecycle.Builtin()
	k, err := reg.Kind(kind)
	if err != nil {
		t.Fatal(err)
	}
	parentID := ""
	if k.Parent != nil {
		parentID = s.makeObject(t, k.Parent.Kind, name+"-parent").ID
	}
	o, err := s.Client.Create(context.Background(), k.Collection, client.CreateRequest{Name: name, ParentID: parentID, Spec: k.SampleSpec(time.Now())})
	if err != nil {
		t.Fatalf("creating a %s: %v", kind, err)
	}
	return s.waitStatic(t, k.Collection, o.ID)
}

// clientCreate is a create request of a machine with a sample spec.
func clientCreate(name, parentID string) client.CreateRequest {
	k, _ := lifecycle.Builtin().Kind("machine")
	return client.CreateRequest{Name: name, ParentID: parentID, Spec: k.SampleSpec(time.Now())}
}
