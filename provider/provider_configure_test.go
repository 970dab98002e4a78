package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestConfigureReportsUnavailableAtFirstUse: Configure does not fail when the simulator is
// down or LIFECYCLE_ENDPOINT is no URL (Terraform would put its generic "Add a provider block"
// error first when there is none); every resource and data source reports it from its own
// Configure instead. An endpoint set in the provider block that is no URL stays an error on
// that attribute.
func TestConfigureReportsUnavailableAtFirstUse(t *testing.T) {
	down := downEndpoint(t)

	tests := []struct {
		name         string
		endpoint     string // in the provider block; "" for none
		env          string // LIFECYCLE_ENDPOINT
		wantConfig   string // error summary of Configure itself
		wantFirstUse string // error summary of a resource's Configure
	}{
		{name: "simulator down", env: down, wantFirstUse: "Cannot reach the lifecycle simulator"},
		{name: "env endpoint no URL", env: "127.0.0.1:7575", wantFirstUse: "Invalid lifecycle endpoint"},
		{name: "block endpoint no URL", endpoint: "127.0.0.1:7575", wantConfig: "Invalid lifecycle endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LIFECYCLE_ENDPOINT", tt.env)
			t.Setenv("LIFECYCLE_TOKEN", "")
			ctx := context.Background()
			p := New("test")()
			var sresp provider.SchemaResponse
			p.Schema(ctx, provider.SchemaRequest{}, &sresp)
			ty := sresp.Schema.Type().TerraformType(ctx).(tftypes.Object)
			vals := map[string]tftypes.Value{}
			for name, at := range ty.AttributeTypes {
				vals[name] = tftypes.NewValue(at, nil)
			}
			if tt.endpoint != "" {
				vals["endpoint"] = tftypes.NewValue(tftypes.String, tt.endpoint)
			}
			req := provider.ConfigureRequest{Config: tfsdk.Config{Schema: sresp.Schema, Raw: tftypes.NewValue(ty, vals)}}
			var resp provider.ConfigureResponse
			p.Configure(ctx, req, &resp)

			if got := firstError(resp.Diagnostics); got != tt.wantConfig {
				t.Fatalf("Configure error = %q, want %q", got, tt.wantConfig)
			}
			if tt.wantConfig != "" {
				return
			}
			var diags diag.Diagnostics
			if d := dataFrom(resp.ResourceData, &diags); d != nil {
				t.Errorf("dataFrom handed a resource provider data despite %q", tt.wantFirstUse)
			}
			if got := firstError(diags); got != tt.wantFirstUse {
				t.Errorf("a resource's Configure error = %q, want %q", got, tt.wantFirstUse)
			}
			diags = nil
			dataFrom(resp.DataSourceData, &diags)
			if got := firstError(diags); got != tt.wantFirstUse {
				t.Errorf("a data source's Configure error = %q, want %q", got, tt.wantFirstUse)
			}
		})
	}
}

func firstError(diags diag.Diagnostics) string {
	for _, d := range diags {
		if d.Severity() == diag.SeverityError {
			return strings.TrimSpace(d.Summary())
		}
	}
	return ""
}
