package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
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
	testDataSourceByName(t, sim, "lifecycle_lease", "from-blazar", map[string]knownvalue.Check{
		"id":       knownvalue.StringExact(leases[0].ID),
		"state":    knownvalue.StringExact("ACTIVE"),
		"end_date": knownvalue.StringExact(end.Format(time.RFC3339)),
		"reservation": knownvalue.ListExact([]knownvalue.Check{
			knownvalue.ObjectPartial(map[string]knownvalue.Check{"resource_type": knownvalue.StringExact("physical:host"),
				"min": knownvalue.Int64Exact(1), "max": knownvalue.Int64Exact(3)}),
		}),
		"reservation_states": knownvalue.ListExact([]knownvalue.Check{
			knownvalue.ObjectPartial(map[string]knownvalue.Check{"state": knownvalue.StringExact("active")}),
		}),
		"events": knownvalue.ListExact([]knownvalue.Check{ // by name
			knownvalue.ObjectPartial(map[string]knownvalue.Check{"event_type": knownvalue.StringExact("before_end_lease"), "state": knownvalue.StringExact("UNDONE"),
				"time": knownvalue.StringExact(end.Add(-time.Hour).Format(time.RFC3339))}),
			knownvalue.ObjectPartial(map[string]knownvalue.Check{"event_type": knownvalue.StringExact("end_lease"), "state": knownvalue.StringExact("UNDONE")}),
			knownvalue.ObjectPartial(map[string]knownvalue.Check{"event_type": knownvalue.StringExact("start_lease"), "state": knownvalue.StringExact("DONE")}),
		}),
	})
}

// TestAccDialectCluster reads, with the lifecycle_cluster data source, a cluster made and
// scaled through the simulator's Sahara API (as `openstack dataprocessing cluster create` and
// `cluster scale` make it, from a node group template and a cluster template): the same
// object, with the node groups its templates gave, the templates it names and the count its
// scale set, as /v1 holds it; and the templates through their own data sources.
func TestAccDialectCluster(t *testing.T) {
	sim := newTestSim(t)
	sahara := sim.URL + "/sahara/v2"
	post := func(method, path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), method, sahara+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s %s = %d %v (%v); want 202", method, path, resp.StatusCode, out, err)
		}
		return out
	}
	ngt := post("POST", "/node-group-templates", `{"name": "ng1", "plugin_name": "vanilla", "plugin_version": "2.7.1",
		"flavor_id": "m1.small", "node_processes": ["namenode", "datanode"]}`)["node_group_template"].(map[string]any)["id"].(string)
	ct := post("POST", "/cluster-templates", `{"name": "ct1", "plugin_name": "vanilla", "plugin_version": "2.7.1",
		"node_groups": [{"name": "ng1", "count": 1, "node_group_template_id": "`+ngt+`"}]}`)["cluster_template"].(map[string]any)["id"].(string)
	uuid := post("POST", "/clusters", `{"name": "from-sahara", "plugin_name": "vanilla", "plugin_version": "2.7.1",
		"cluster_template_id": "`+ct+`", "default_image_id": "img"}`)["cluster"].(map[string]any)["id"].(string)
	clusters, err := sim.Client.ListAll(context.Background(), "clusters", client.ListOptions{})
	if err != nil || len(clusters) != 1 {
		t.Fatalf("/v1 clusters = %v, %v; want the one", clusters, err)
	}
	id := clusters[0].ID
	if err := sim.waitFor("clusters", id, func(o *client.Object) bool { return o.State == "Active" && o.Operation == nil }); err != nil {
		t.Fatal(err)
	}
	post("PUT", "/clusters/"+uuid, `{"resize_node_groups": [{"name": "ng1", "count": 3}]}`)
	if err := sim.waitFor("clusters", id, func(o *client.Object) bool {
		return o.State == "Active" && o.Operation == nil && strings.Contains(fmt.Sprint(o.Spec["node_groups"]), "count:3")
	}); err != nil {
		t.Fatal(err)
	}
	// The templates are objects too: /v1 lists them under their own IDs, which the cluster names.
	idOf := func(collection string) string {
		t.Helper()
		objs, err := sim.Client.ListAll(context.Background(), collection, client.ListOptions{})
		if err != nil || len(objs) != 1 {
			t.Fatalf("/v1 %s = %v, %v; want the one the Sahara API made", collection, objs, err)
		}
		return objs[0].ID
	}
	ngtID, ctID := idOf("node_group_templates"), idOf("cluster_templates")
	checks := map[string]map[string]knownvalue.Check{}
	checks["lifecycle_cluster from-sahara"] = map[string]knownvalue.Check{
		"id":                  knownvalue.StringExact(id),
		"state":               knownvalue.StringExact("Active"),
		"plugin_name":         knownvalue.StringExact("vanilla"),
		"hadoop_version":      knownvalue.StringExact("2.7.1"),
		"cluster_template_id": knownvalue.StringExact(ctID),
		"default_image_id":    knownvalue.StringExact("img"),
		"node_group": knownvalue.ListExact([]knownvalue.Check{
			knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("ng1"), "flavor": knownvalue.StringExact("m1.small"),
				"count": knownvalue.Int64Exact(3), "node_group_template_id": knownvalue.StringExact(ngtID),
				"processes": knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("namenode"), knownvalue.StringExact("datanode")})}),
		}),
	}
	checks["lifecycle_node_group_template ng1"] = map[string]knownvalue.Check{
		"id":     knownvalue.StringExact(ngtID),
		"state":  knownvalue.StringExact("Active"),
		"flavor": knownvalue.StringExact("m1.small"),
	}
	checks["lifecycle_cluster_template ct1"] = map[string]knownvalue.Check{
		"id":    knownvalue.StringExact(ctID),
		"state": knownvalue.StringExact("Active"),
		"node_group": knownvalue.ListExact([]knownvalue.Check{
			knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("ng1"), "count": knownvalue.Int64Exact(1),
				"node_group_template_id": knownvalue.StringExact(ngtID)}),
		}),
	}
	for ds, want := range checks {
		t.Run(ds, func(t *testing.T) {
			typ, name, _ := strings.Cut(ds, " ")
			testDataSourceByName(t, sim, typ, name, want)
		})
	}
}

// testDataSourceByName reads the object called name through the data source typ and checks
// its attributes: want maps each attribute to its check.
func testDataSourceByName(t *testing.T, sim *testSim, typ, name string, want map[string]knownvalue.Check) {
	t.Helper()
	addr := "data." + typ + ".x"
	var checks []statecheck.StateCheck
	for _, attr := range slices.Sorted(maps.Keys(want)) {
		checks = append(checks, statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), want[attr]))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{{
			Config:            sim.config(fmt.Sprintf("data %q \"x\" {\n  name = %q\n}\n", typ, name)),
			ConfigStateChecks: checks,
		}},
	})
}
