package provider

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// TestAccDialectMCI reads, with the lifecycle_mci data source, an MCI made through the
// simulator's CB-Tumblebug API (POST /tumblebug/ns/default/mciDynamic) and suspended through
// its control route: the same object, with its subgroups from the specIds and its VMs, as /v1
// holds it.
func TestAccDialectMCI(t *testing.T) {
	sim := newTestSim(t)
	ctx := context.Background()
	tumblebug := func(method, path, body string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, sim.URL+"/tumblebug/ns/default"+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s = %v, %v; want 200", method, path, resp, err)
		}
		resp.Body.Close()
	}
	tumblebug("POST", "/mciDynamic", `{"name": "from-tumblebug", "description": "made by Tumblebug's API",
		"subGroups": [{"name": "web", "subGroupSize": 2, "specId": "aws+ap-northeast-2+t3.small", "imageId": "ubuntu22.04"}]}`)
	mcis, err := sim.Client.ListAll(ctx, "mcis", client.ListOptions{})
	if err != nil || len(mcis) != 1 {
		t.Fatalf("/v1 mcis = %v, %v; want the one", mcis, err)
	}
	id := mcis[0].ID
	if err := sim.waitFor("mcis", id, func(o *client.Object) bool { return o.State == "Running" && o.Operation == nil }); err != nil {
		t.Fatal(err)
	}
	tumblebug("GET", "/control/mci/from-tumblebug?action=suspend", "")
	if err := sim.waitFor("mcis", id, func(o *client.Object) bool { return o.State == "Suspended" && o.Operation == nil }); err != nil {
		t.Fatal(err)
	}
	vm := knownvalue.ObjectPartial(map[string]knownvalue.Check{"status": knownvalue.StringExact("Suspended"),
		"subgroup": knownvalue.StringExact("web"), "csp": knownvalue.StringExact("aws"), "region": knownvalue.StringExact("ap-northeast-2")})
	testDataSourceByName(t, sim, "lifecycle_mci", "from-tumblebug", map[string]knownvalue.Check{
		"id":          knownvalue.StringExact(id),
		"state":       knownvalue.StringExact("Suspended"),
		"status_text": knownvalue.StringExact("Suspended:2 (R:0/2)"),
		"description": knownvalue.StringExact("made by Tumblebug's API"),
		"subgroup": knownvalue.ListExact([]knownvalue.Check{
			knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("web"), "count": knownvalue.Int64Exact(2),
				"csp": knownvalue.StringExact("aws"), "region": knownvalue.StringExact("ap-northeast-2"),
				"spec": knownvalue.StringExact("t3.small"), "image": knownvalue.StringExact("ubuntu22.04")}),
		}),
		"vms": knownvalue.ListExact([]knownvalue.Check{vm, vm}),
	})
}

// TestAccDialectMCIHeld reads, with the lifecycle_mci data source, an MCI made through the
// CB-Tumblebug API with option=hold: Holding, with its subgroups and no VMs yet.
func TestAccDialectMCIHeld(t *testing.T) {
	sim := newTestSim(t)
	req, err := http.NewRequestWithContext(context.Background(), "POST", sim.URL+"/tumblebug/ns/default/mciDynamic?option=hold",
		strings.NewReader(`{"name": "held", "subGroups": [{"name": "web", "subGroupSize": 2, "specId": "aws+ap-northeast-2+t3.small", "imageId": "ubuntu22.04"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("held create = %v, %v; want 200", resp, err)
	}
	resp.Body.Close()
	testDataSourceByName(t, sim, "lifecycle_mci", "held", map[string]knownvalue.Check{
		"state":       knownvalue.StringExact("Holding"),
		"status_text": knownvalue.StringExact("Holding:0 (R:0/0)"),
		"subgroup": knownvalue.ListExact([]knownvalue.Check{knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"name": knownvalue.StringExact("web"), "count": knownvalue.Int64Exact(2)})}),
		"vms": knownvalue.ListExact([]knownvalue.Check{}),
	})
}
