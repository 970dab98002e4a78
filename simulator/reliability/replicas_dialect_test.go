package reliability

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// Sahara's templates are stored objects, so replicas share them: a node group template and a
// cluster template made through replica A's Sahara API are served by replica B (under the same
// UUIDs), B refuses their names again, makes a cluster from them, and A then refuses to delete
// the cluster template B's cluster uses.
func TestReplicasShareSaharaTemplates(t *testing.T) {
	stores, _ := openReplicaStores(t, 2)
	a := simtest.Start(t, simtest.WithStore(stores[0]), simtest.WithoutWorker())
	b := simtest.Start(t, simtest.WithStore(stores[1]), simtest.WithoutWorker())
	v2 := func(sim *simtest.Sim) string { return sim.URL + httpapi.SaharaPrefix + "/v2" }
	ngtBody := map[string]any{"name": "ng1", "plugin_name": "vanilla", "plugin_version": "2.7.1", "flavor_id": "m1.small",
		"node_processes": []string{"namenode", "datanode"}}
	st, body := dialecttest.Call(t, "POST", v2(a)+"/node-group-templates", "", ngtBody)
	if st != http.StatusAccepted {
		t.Fatalf("node group template create on A = %d %v, want 202", st, body)
	}
	ngt := body["node_group_template"].(map[string]any)["id"].(string)
	ctBody := map[string]any{"name": "ct1", "plugin_name": "vanilla", "plugin_version": "2.7.1",
		"node_groups": []any{map[string]any{"name": "ng1", "count": 2, "node_group_template_id": ngt}}}
	st, body = dialecttest.Call(t, "POST", v2(a)+"/cluster-templates", "", ctBody)
	if st != http.StatusAccepted {
		t.Fatalf("cluster template create on A = %d %v, want 202", st, body)
	}
	ct := body["cluster_template"].(map[string]any)["id"].(string)

	if st, body := dialecttest.Call(t, "GET", v2(b)+"/cluster-templates/"+ct, "", nil); st != http.StatusOK ||
		!strings.Contains(dialecttest.MustJSON(t, body), `"node_group_template_id":"`+ngt+`"`) {
		t.Errorf("GET B's cluster template %s = %d %v, want A's ct1 with ng1", ct, st, body)
	}
	for _, tt := range []struct{ path, name string }{{"/node-group-templates", "ng1"}, {"/cluster-templates", "ct1"}} {
		in := map[string]any{"/node-group-templates": ngtBody, "/cluster-templates": ctBody}[tt.path]
		if st, body := dialecttest.Call(t, "POST", v2(b)+tt.path, "", in); st != http.StatusConflict || body["error_name"] != "NAME_ALREADY_EXISTS" {
			t.Errorf("POST B's %s named %s = %d %v, want 409 NAME_ALREADY_EXISTS", tt.path, tt.name, st, body)
		}
	}
	st, body = dialecttest.Call(t, "POST", v2(b)+"/clusters", "", map[string]any{"name": "c1", "plugin_name": "vanilla",
		"plugin_version": "2.7.1", "cluster_template_id": ct})
	if st != http.StatusAccepted {
		t.Fatalf("cluster create on B from A's template = %d %v, want 202", st, body)
	}
	if groups := dialecttest.MustJSON(t, body["cluster"].(map[string]any)["node_groups"]); !strings.Contains(groups, `"count":2,"flavor_id":"m1.small"`) {
		t.Errorf("B's cluster's node groups = %s, want ng1's flavor with ct1's count", groups)
	}
	if st, body := dialecttest.Call(t, "DELETE", v2(a)+"/cluster-templates/"+ct, "", nil); st != http.StatusBadRequest ||
		!strings.Contains(dialecttest.MustJSON(t, body), "in use by c1") {
		t.Errorf("DELETE on A of the cluster template B's cluster uses = %d %v, want 400 in use by c1", st, body)
	}
}
