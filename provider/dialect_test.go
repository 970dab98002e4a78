package provider

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// TestAccDialectLease reads, with the lifecycle_lease data source, a lease made through the
// simulator's Blazar API (as `openstack reservation lease create` makes it): the same object,
// with its reservation and events, as /v1 holds it.
func TestAccDialectLease(t *testing.T) {
	sim := newTestSim(t)
	end := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Minute)
	body := `{"name": "from-blazar", "start_date": "now", "end_date": "` + end.Format("2006-01-02 15:04") + `",
		"reservations": [{"resource_type": "physical:host", "min": "1", "max": "3", "before_end": null}], "events": [], "before_end_date": null}`
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, sim.URL+"/blazar/v1/leases", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /blazar/v1/leases = %v, %v; want 201", resp, err)
	}
	resp.Body.Close()
	leases, err := sim.Client.ListAll(context.Background(), "leases", client.ListOptions{})
	if err != nil || len(leases) != 1 {
		t.Fatalf("/v1 leases = %v, %v; want the one", leases, err)
	}
	if err := sim.waitFor("leases", leases[0].ID, func(o *client.Object) bool { return o.State == "ACTIVE" }); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{{
			Config: sim.config(`
data "lifecycle_lease" "l" {
  name = "from-blazar"
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.lifecycle_lease.l", tfjsonpath.New("id"), knownvalue.StringExact(leases[0].ID)),
				statecheck.ExpectKnownValue("data.lifecycle_lease.l", tfjsonpath.New("state"), knownvalue.StringExact("ACTIVE")),
				statecheck.ExpectKnownValue("data.lifecycle_lease.l", tfjsonpath.New("end_date"), knownvalue.StringExact(end.Format(time.RFC3339))),
				statecheck.ExpectKnownValue("data.lifecycle_lease.l", tfjsonpath.New("reservation"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"resource_type": knownvalue.StringExact("physical:host"),
						"min": knownvalue.Int64Exact(1), "max": knownvalue.Int64Exact(3)}),
				})),
				statecheck.ExpectKnownValue("data.lifecycle_lease.l", tfjsonpath.New("reservation_states"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"state": knownvalue.StringExact("active")}),
				})),
				statecheck.ExpectKnownValue("data.lifecycle_lease.l", tfjsonpath.New("events"), knownvalue.ListExact([]knownvalue.Check{ // by name
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"event_type": knownvalue.StringExact("end_lease"), "state": knownvalue.StringExact("UNDONE")}),
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"event_type": knownvalue.StringExact("start_lease"), "state": knownvalue.StringExact("DONE")}),
				})),
			},
		}},
	})
}
