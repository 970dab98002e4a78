package provider

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccProviderUnreachableEndpoint: with nothing listening at the endpoint, configuring the
// provider fails (after its retries) with an error that says how to fix it.
func TestAccProviderUnreachableEndpoint(t *testing.T) {
	// A port that was just in use and is now closed: connections are refused at once.
	srv := httptest.NewServer(nil)
	url := srv.URL
	srv.Close()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`
provider "lifecycle" {
  endpoint       = %q
  retry_wait_max = "20ms"
}
%s`, url, kindDataConfig),
				PlanOnly:    true,
				ExpectError: errorLike(`Cannot reach the lifecycle simulator.*Start the simulator.*set endpoint / LIFECYCLE_ENDPOINT to where it runs`),
			},
		},
	})
}

// TestAccProviderToken: a simulator started with tokens rejects a wrong one with an error
// naming the setting to fix, and serves the right one.
func TestAccProviderToken(t *testing.T) {
	sim := newTestSim(t, withTokens(map[string]string{"s3cret": "acme"}))
	withToken := func(token string) string {
		return fmt.Sprintf("provider \"lifecycle\" {\n  endpoint = %q\n  token    = %q\n}\n%s", sim.URL, token, kindDataConfig)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config:      withToken("wrong"),
				PlanOnly:    true,
				ExpectError: errorLike(`The lifecycle simulator rejected the token.*Set token \(or LIFECYCLE_TOKEN\)`),
			},
			{
				Config:      sim.config(kindDataConfig),
				PlanOnly:    true,
				ExpectError: errorLike(`The lifecycle simulator rejected the token.*missing bearer token`),
			},
			{
				Config: withToken("s3cret"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.lifecycle_kind.machine", tfjsonpath.New("name"), knownvalue.StringExact("machine")),
				},
			},
		},
	})
}

// TestAccProviderSettingsValidated: bad durations and a negative max_retries fail
// terraform validate, before anything is configured or contacted.
func TestAccProviderSettingsValidated(t *testing.T) {
	tests := []struct{ name, setting, want string }{
		{"not a duration", `poll_timeout = "soon"`, `poll_timeout.*(Invalid Time Duration String Value|not a valid)`},
		{"negative duration", `retry_wait_max = "-5s"`, `Invalid duration.*"-5s" is not a positive duration`},
		{"negative retries", `max_retries = -1`, `max_retries.*must be at least 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProviders,
				Steps: []resource.TestStep{{
					// Nothing listens here: the error must come from validation, not Configure.
					Config:      "provider \"lifecycle\" {\n  endpoint = \"http://127.0.0.1:1\"\n  " + tt.setting + "\n}\n" + kindDataConfig,
					PlanOnly:    true,
					ExpectError: errorLike(tt.want),
				}},
			})
		})
	}
}
