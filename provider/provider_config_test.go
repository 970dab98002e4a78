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
