package sahara_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore/sqlitetest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// sahara is a Sahara API root of sim: v2's, or v1.1's for the open tenant's project.
func saharaURL(sim *simtest.Sim, api string) string {
	if api == "1.1" {
		return sim.URL + httpapi.SaharaPrefix + "/v1.1/default"
	}
	return sim.URL + httpapi.SaharaPrefix + "/v2"
}

// makeTemplates makes node group template ng1 and cluster template ct1 (one ng1 instance)
// through api and returns their IDs.
func makeTemplates(t *testing.T, root, versionField string) (ngt, ct string) {
	t.Helper()
	st, body := dialecttest.Call(t, "POST", root+"/node-group-templates", "", map[string]any{"name": "ng1", "plugin_name": "vanilla",
		versionField: "2.7.1", "flavor_id": "m1.small", "node_processes": []string{"namenode", "datanode"}})
	if st != http.StatusAccepted {
		t.Fatalf("node group template create = %d %v, want 202", st, body)
	}
	ngt = body["node_group_template"].(map[string]any)["id"].(string)
	st, body = dialecttest.Call(t, "POST", root+"/cluster-templates", "", map[string]any{"name": "ct1", "plugin_name": "vanilla",
		versionField: "2.7.1", "node_groups": []any{map[string]any{"name": "ng1", "count": 1, "node_group_template_id": ngt}}})
	if st != http.StatusAccepted {
		t.Fatalf("cluster template create = %d %v, want 202", st, body)
	}
	return ngt, body["cluster_template"].(map[string]any)["id"].(string)
}

// A cluster made through the dialect is the engine's cluster: /v1 shows it (by the ID its
// UUID maps to) with the node groups its templates give, v1.1 and v2 show the same cluster
// with their own version and owner fields, and a scale through the dialect is /v1's scale.
func TestClusterIsTheV1Object(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTimeScale(0.0005))
	v2, v11 := saharaURL(sim, "2"), saharaURL(sim, "1.1")
	ngt, ct := makeTemplates(t, v2, "plugin_version")
	st, body := dialecttest.Call(t, "POST", v2+"/clusters", "", map[string]any{"name": "c1", "plugin_name": "vanilla", "plugin_version": "2.7.1",
		"cluster_template_id": ct, "default_image_id": "img-1"})
	if st != http.StatusAccepted {
		t.Fatalf("cluster create = %d %v, want 202", st, body)
	}
	uuid := body["cluster"].(map[string]any)["id"].(string)
	id, ok := dialect.IDOf("cluster", uuid)
	if !ok {
		t.Fatalf("cluster id %q is not a cluster's UUID", uuid)
	}
	ctx := context.Background()
	simtest.Eventually(t, time.Minute, "the cluster Active through /v1", func() bool {
		o, err := sim.Client.Get(ctx, "clusters", id)
		return err == nil && o.State == "Active" && o.Operation == nil
	})
	o, err := sim.Client.Get(ctx, "clusters", id)
	if err != nil {
		t.Fatal(err)
	}
	// The spec records the templates by their engine IDs, which /v1 serves them under.
	ngtID, _ := dialect.IDOf("node_group_template", ngt)
	ctID, _ := dialect.IDOf("cluster_template", ct)
	want := `{"cluster_template_id":"` + ctID + `","default_image_id":"img-1","hadoop_version":"2.7.1","node_groups":[{"count":1,"flavor":"m1.small","name":"ng1","node_group_template_id":"` + ngtID + `","processes":["namenode","datanode"]}],"plugin_name":"vanilla"}`
	for _, path := range []string{"node_group_templates/" + ngtID, "cluster_templates/" + ctID} {
		if st, body := dialecttest.Call(t, "GET", sim.URL+"/v1/"+path, "", nil); st != http.StatusOK || body["state"] != "Active" {
			t.Errorf("GET /v1/%s = %d %v, want the template Active", path, st, body)
		}
	}
	if got := dialecttest.MustJSON(t, o.Spec); got != want {
		t.Errorf("/v1 spec = %s, want %s", got, want)
	}
	for _, tt := range []struct{ root, version, owner string }{{v2, "plugin_version", "project_id"}, {v11, "hadoop_version", "tenant_id"}} {
		st, body := dialecttest.Call(t, "GET", tt.root+"/clusters/"+uuid, "", nil)
		c, _ := body["cluster"].(map[string]any)
		groups, _ := c["node_groups"].([]any)
		if st != http.StatusOK || c["status"] != "Active" || c[tt.version] != "2.7.1" || c[tt.owner] != "default" || len(groups) != 1 ||
			groups[0].(map[string]any)["node_group_template_id"] != ngt || c["cluster_template_id"] != ct || c["default_image_id"] != "img-1" {
			t.Errorf("GET %s/clusters/%s = %d %v, want the Active cluster with %s and %s, its templates and image", tt.root, uuid, st, c, tt.version, tt.owner)
		}
	}

	// A scale through the dialect is the kind's scale: /v1 sees the new count.
	st, body = dialecttest.Call(t, "PUT", v11+"/clusters/"+uuid, "", map[string]any{"resize_node_groups": []any{map[string]any{"name": "ng1", "count": 3}}})
	if st != http.StatusAccepted {
		t.Fatalf("scale = %d %v, want 202", st, body)
	}
	simtest.Eventually(t, time.Minute, "the cluster scaled to 3 through /v1", func() bool {
		o, err := sim.Client.Get(ctx, "clusters", id)
		return err == nil && o.State == "Active" && o.Operation == nil && strings.Contains(dialecttest.MustJSON(t, o.Spec), `"count":3`)
	})
	// A group added from a template is scaled in, and shown with its template.
	st, body = dialecttest.Call(t, "PUT", v2+"/clusters/"+uuid, "", map[string]any{"add_node_groups": []any{map[string]any{"name": "extra", "count": 2, "node_group_template_id": ngt}}})
	if st != http.StatusAccepted {
		t.Fatalf("scale adding a group = %d %v, want 202", st, body)
	}
	simtest.Eventually(t, time.Minute, "the cluster with the added group through /v1", func() bool {
		o, err := sim.Client.Get(ctx, "clusters", id)
		return err == nil && o.State == "Active" && o.Operation == nil && strings.Contains(dialecttest.MustJSON(t, o.Spec), `"name":"extra"`)
	})
	if _, body := dialecttest.Call(t, "GET", v2+"/clusters/"+uuid, "", nil); strings.Count(dialecttest.MustJSON(t, body), `"node_group_template_id":"`+ngt+`"`) != 2 {
		t.Errorf("GET after adding a group = %v, want both groups with ng1's template", body)
	}
	evs, err := sim.Client.Events(ctx, "clusters", id)
	if err != nil || !strings.Contains(dialecttest.MustJSON(t, evs), `"scale"`) {
		t.Errorf("/v1 history = %v, %v; want the scale in it", evs, err)
	}

	// A cluster made through /v1 is listed by the dialect, with no template.
	if _, err := sim.Client.Create(ctx, "clusters", client.CreateRequest{Name: "c2", Spec: map[string]any{"plugin_name": "vanilla", "hadoop_version": "2.7.1",
		"node_groups": []any{map[string]any{"name": "ng1", "flavor": "m1.small", "count": 2}}}}); err != nil {
		t.Fatal(err)
	}
	_, body = dialecttest.Call(t, "GET", v2+"/clusters", "", nil)
	if list := dialecttest.MustJSON(t, body["clusters"]); !strings.Contains(list, `"name":"c2"`) || strings.Count(list, ngt) != 2 {
		t.Errorf("GET /clusters = %s, want c1 (two groups, with ng1's template) and c2 (none)", list)
	}
}

// Refusals are answered in Sahara's shape ({"error_code", "error_message", "error_name"})
// with a 4xx that says what to do.
func TestErrors(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "a", "tok-b": "b"}), simtest.WithAdminToken("admin"),
		simtest.WithTimeScale(0.0005))
	root := sim.URL + httpapi.SaharaPrefix
	token := "tok-a"
	st, body := dialecttest.Call(t, "POST", root+"/v2/node-group-templates", token, map[string]any{"name": "ng1", "plugin_name": "vanilla",
		"plugin_version": "2.7.1", "flavor_id": "m1.small", "node_processes": []string{"namenode"}})
	if st != http.StatusAccepted {
		t.Fatalf("node group template create = %d %v", st, body)
	}
	ngt := body["node_group_template"].(map[string]any)["id"].(string)
	st, body = dialecttest.Call(t, "POST", root+"/v2/clusters", token, map[string]any{"name": "c1", "plugin_name": "vanilla", "plugin_version": "2.7.1",
		"node_groups": []any{map[string]any{"name": "ng1", "count": 1, "node_group_template_id": ngt}}})
	if st != http.StatusAccepted {
		t.Fatalf("cluster create = %d %v", st, body)
	}
	uuid := body["cluster"].(map[string]any)["id"].(string)

	tests := []struct {
		name, method, path, token string
		body                      any
		status                    int
		errName, msg              string
	}{
		{"no token", "GET", "/v2/clusters", "", nil, 401, "UNAUTHORIZED", "X-Auth-Token"},
		{"admin token", "GET", "/v2/clusters", "admin", nil, 403, "FORBIDDEN", "tenant's token"},
		{"another project in the v1.1 path", "GET", "/v1.1/b/clusters", token, nil, 403, "FORBIDDEN", "use /v1.1/a"},
		{"unknown route", "GET", "/v2/job-binaries", token, nil, 404, "NOT_FOUND", "not part of the Sahara API"},
		{"unknown cluster", "GET", "/v2/clusters/00000000-0000-4000-8000-000000000000", token, nil, 404, "NOT_FOUND", "not found"},
		{"another tenant's cluster", "GET", "/v2/clusters/" + uuid, "tok-b", nil, 404, "NOT_FOUND", "not found"},
		{"malformed JSON", "POST", "/v2/clusters", token, "{", 400, "MALFORMED_REQUEST_BODY", "invalid JSON"},
		{"no plugin", "POST", "/v2/node-group-templates", token, map[string]any{"name": "x"}, 400, "VALIDATION_ERROR", "'plugin_name' is a required property"},
		{"v1.1 names the version hadoop_version", "POST", "/v1.1/a/node-group-templates", token,
			map[string]any{"name": "x", "plugin_name": "vanilla", "plugin_version": "2.7.1"}, 400, "VALIDATION_ERROR", "'hadoop_version'"},
		{"unknown plugin", "POST", "/v2/node-group-templates", token,
			map[string]any{"name": "x", "plugin_name": "ambari", "plugin_version": "1", "flavor_id": "f", "node_processes": []string{"p"}}, 400, "INVALID_REFERENCE", "vanilla"},
		{"template name taken", "POST", "/v2/node-group-templates", token,
			map[string]any{"name": "ng1", "plugin_name": "vanilla", "plugin_version": "2.7.1", "flavor_id": "f", "node_processes": []string{"p"}}, 409, "NAME_ALREADY_EXISTS", "already exists"},
		{"unknown node group template", "POST", "/v2/clusters", token, map[string]any{"name": "c", "plugin_name": "vanilla", "plugin_version": "2.7.1",
			"node_groups": []any{map[string]any{"name": "g", "count": 1, "node_group_template_id": "nope"}}}, 400, "INVALID_REFERENCE", "node group template with id 'nope' not found"},
		{"several clusters at once", "POST", "/v2/clusters", token, map[string]any{"name": "c", "count": 2}, 400, "INVALID_DATA", "one by one"},
		{"scale of an unknown group", "PUT", "/v2/clusters/" + uuid, token,
			map[string]any{"resize_node_groups": []any{map[string]any{"name": "nope", "count": 2}}}, 400, "INVALID_REFERENCE", "'nope'"},
		{"scale of nothing", "PUT", "/v2/clusters/" + uuid, token, map[string]any{}, 400, "INVALID_DATA", "--instances"},
		{"a node group template in use", "DELETE", "/v2/node-group-templates/" + ngt, token, nil, 400, "INVALID_REFERENCE",
			"Node group template " + ngt + " is in use by cluster templates: N/A; and clusters: c1 (delete them first)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, body := dialecttest.Call(t, tt.method, root+tt.path, tt.token, tt.body)
			msg, _ := body["error_message"].(string)
			if st != tt.status || body["error_name"] != orNil(tt.errName) || !strings.Contains(msg, tt.msg) ||
				(tt.status >= 400 && body["error_code"] != float64(tt.status)) {
				t.Errorf("%s %s = %d %v, want %d %s saying %q", tt.method, tt.path, st, body, tt.status, tt.errName, tt.msg)
			}
		})
	}

	// Once its cluster is gone, the node group template is no longer in use.
	st, _ = dialecttest.Call(t, "DELETE", root+"/v2/clusters/"+uuid, token, nil)
	if st != http.StatusNoContent {
		t.Fatalf("delete = %d, want 204", st)
	}
	simtest.Eventually(t, time.Minute, "the cluster gone", func() bool {
		st, _ := dialecttest.Call(t, "GET", root+"/v2/clusters/"+uuid, token, nil)
		return st == http.StatusNotFound
	})
	if st, body := dialecttest.Call(t, "DELETE", root+"/v2/node-group-templates/"+ngt, token, nil); st != http.StatusNoContent {
		t.Errorf("DELETE of the node group template no cluster uses = %d %v, want 204", st, body)
	}

	// An http_error fault answers its status.
	if _, err := sim.Engine.Faults().Add(context.Background(), "a", wire.FaultRule{Kind: "cluster", Mode: wire.FaultHTTPError, HTTPStatus: 503, Code: "unavailable", Message: "try later"}); err != nil {
		t.Fatal(err)
	}
	if st, body := dialecttest.Call(t, "GET", root+"/v2/clusters", token, nil); st != 503 || body["error_message"] != "try later" {
		t.Errorf("with an http_error fault GET /clusters = %d %v, want 503 try later", st, body)
	}
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// The catalog a Keystone login answers lists Sahara's v1.1 endpoint with the caller's
// project in it (as Keystone fills %(tenant_id)s), and a network endpoint that answers
// Neutron's version discovery (the Sahara client's cluster create needs one).
func TestCatalog(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-ci": "ci"}))
	st, body := dialecttest.Call(t, "POST", sim.URL+httpapi.KeystonePrefix+"/v3/auth/tokens", "", map[string]any{"auth": map[string]any{"identity": map[string]any{
		"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{"name": "ci", "password": "tok-ci"}}}}})
	cat := dialecttest.MustJSON(t, body)
	for _, want := range []string{`"type":"data-processing"`, `"url":"` + sim.URL + httpapi.SaharaPrefix + `/v1.1/ci"`,
		`"type":"network"`, `"url":"` + sim.URL + httpapi.NetworkPrefix + `"`} {
		if st != http.StatusCreated || !strings.Contains(cat, want) {
			t.Errorf("token = %d %s, want %s in the catalog", st, cat, want)
		}
	}
	for _, tt := range []struct {
		path   string
		status int
		want   string
	}{
		{httpapi.NetworkPrefix, 200, `"id":"v2.0"`},
		{httpapi.NetworkPrefix + "/v2.0/networks", 404, "models no networks"},
		{httpapi.SaharaPrefix, 200, `"href":"` + sim.URL + httpapi.SaharaPrefix + `/v2/"`},
	} {
		st, body := dialecttest.Call(t, "GET", sim.URL+tt.path, "", nil)
		if st != tt.status || !strings.Contains(dialecttest.MustJSON(t, body), tt.want) {
			t.Errorf("GET %s = %d %v, want %d with %s", tt.path, st, body, tt.status, tt.want)
		}
	}
}

// A create retried with its Idempotency-Key answers the cluster the first attempt made, as at
// /v1; the key with another body is refused.
func TestIdempotency(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTimeScale(0.0005))
	v2 := saharaURL(sim, "2")
	_, ct := makeTemplates(t, v2, "plugin_version")
	body := map[string]any{"name": "c1", "plugin_name": "vanilla", "plugin_version": "2.7.1", "cluster_template_id": ct}
	var ids []any
	for range 2 {
		st, out := dialecttest.Call(t, "POST", v2+"/clusters", "", body, "Idempotency-Key", "key-1")
		if st != http.StatusAccepted {
			t.Fatalf("create with Idempotency-Key = %d %v, want 202", st, out)
		}
		ids = append(ids, out["cluster"].(map[string]any)["id"])
	}
	if ids[0] != ids[1] {
		t.Errorf("the retried create answered %v, the first %v: want the same cluster", ids[1], ids[0])
	}
	if _, out := dialecttest.Call(t, "GET", v2+"/clusters", "", nil); len(out["clusters"].([]any)) != 1 {
		t.Errorf("clusters after a retried create = %v, want one", out["clusters"])
	}
	body["name"] = "c2"
	if st, out := dialecttest.Call(t, "POST", v2+"/clusters", "", body, "Idempotency-Key", "key-1"); st < 400 || st >= 500 || out["error_code"] != float64(st) {
		t.Errorf("the key reused with another body = %d %v, want a 4xx in Sahara's shape", st, out)
	}
}

// A template in use is not deleted, as Sahara refuses it: a cluster template while a cluster
// made from it exists (through /v1 too: the cluster kind's link refuses it), a node group
// template while a cluster template or a cluster has a group made from it. Once the cluster is
// gone, both go, and are gone through /v1.
func TestTemplatesInUse(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTimeScale(0.0005))
	v2 := saharaURL(sim, "2")
	ngt, ct := makeTemplates(t, v2, "plugin_version")
	st, body := dialecttest.Call(t, "POST", v2+"/clusters", "", newCluster("c1", ct))
	if st != http.StatusAccepted {
		t.Fatalf("cluster create = %d %v, want 202", st, body)
	}
	uuid := body["cluster"].(map[string]any)["id"].(string)
	ngtID, _ := dialect.IDOf("node_group_template", ngt)
	ctID, _ := dialect.IDOf("cluster_template", ct)
	clusterID, _ := dialect.IDOf("cluster", uuid)

	tests := []struct {
		name, method, url string
		status            int
		want              string
	}{
		{"the cluster template", "DELETE", v2 + "/cluster-templates/" + ct, 400, "Cluster template " + ct + " in use by c1"},
		{"the cluster template through /v1", "DELETE", sim.URL + "/v1/cluster_templates/" + ctID, 422, "in use by 1 objects that name it: delete them first: cluster " + clusterID},
		{"the node group template", "DELETE", v2 + "/node-group-templates/" + ngt, 400, "is in use by cluster templates: ct1; and clusters: c1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, body := dialecttest.Call(t, tt.method, tt.url, "", nil)
			if got := dialecttest.MustJSON(t, body); st != tt.status || !strings.Contains(got, tt.want) {
				t.Errorf("%s %s = %d %s, want %d saying %q", tt.method, tt.url, st, got, tt.status, tt.want)
			}
		})
	}

	if st, body := dialecttest.Call(t, "DELETE", v2+"/clusters/"+uuid, "", nil); st != http.StatusNoContent {
		t.Fatalf("cluster delete = %d %v, want 204", st, body)
	}
	simtest.Eventually(t, time.Minute, "the cluster gone", func() bool {
		st, _ := dialecttest.Call(t, "GET", v2+"/clusters/"+uuid, "", nil)
		return st == http.StatusNotFound
	})
	for _, path := range []string{"/cluster-templates/" + ct, "/node-group-templates/" + ngt} {
		if st, body := dialecttest.Call(t, "DELETE", v2+path, "", nil); st != http.StatusNoContent {
			t.Errorf("DELETE %s once unused = %d %v, want 204", path, st, body)
		}
	}
	for _, path := range []string{"/v1/cluster_templates/" + ctID, "/v1/node_group_templates/" + ngtID} {
		if st, body := dialecttest.Call(t, "GET", sim.URL+path, "", nil); st != http.StatusNotFound {
			t.Errorf("GET %s after the delete = %d %v, want 404", path, st, body)
		}
	}
	for _, list := range []string{"node_group_templates", "cluster_templates"} {
		_, body := dialecttest.Call(t, "GET", v2+"/"+strings.ReplaceAll(list, "_", "-"), "", nil)
		if items, _ := body[list].([]any); len(items) != 0 {
			t.Errorf("GET %s after the deletes = %v, want none", list, body)
		}
	}
}

// Templates are stored objects: after a restart on the same SQLite file they are served under
// the same UUIDs, a cluster still names them, and the cluster template is still in use.
func TestTemplatesAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	st := sqlitetest.Open(t, path)
	sim := simtest.Start(t, simtest.WithStore(st), simtest.WithoutWorker())
	v2 := saharaURL(sim, "2")
	ngt, ct := makeTemplates(t, v2, "plugin_version")
	code, body := dialecttest.Call(t, "POST", v2+"/clusters", "", newCluster("c1", ct))
	if code != http.StatusAccepted {
		t.Fatalf("cluster create = %d %v, want 202", code, body)
	}
	uuid := body["cluster"].(map[string]any)["id"].(string)
	sim.HTTP.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	again := simtest.Start(t, simtest.WithStore(sqlitetest.Open(t, path)), simtest.WithoutWorker())
	for _, api := range []string{"2", "1.1"} {
		root := saharaURL(again, api)
		if code, body := dialecttest.Call(t, "GET", root+"/node-group-templates/"+ngt, "", nil); code != http.StatusOK ||
			body["node_group_template"].(map[string]any)["name"] != "ng1" || body["node_group_template"].(map[string]any)["flavor_id"] != "m1.small" {
			t.Errorf("GET %s/node-group-templates/%s after the restart = %d %v, want ng1", root, ngt, code, body)
		}
		if code, body := dialecttest.Call(t, "GET", root+"/cluster-templates", "", nil); code != http.StatusOK ||
			!strings.Contains(dialecttest.MustJSON(t, body), `"id":"`+ct+`","is_default"`) || !strings.Contains(dialecttest.MustJSON(t, body), `"node_group_template_id":"`+ngt+`"`) {
			t.Errorf("GET %s/cluster-templates after the restart = %d %v, want ct1 with ng1", root, code, body)
		}
		code, body := dialecttest.Call(t, "GET", root+"/clusters/"+uuid, "", nil)
		c, _ := body["cluster"].(map[string]any)
		if code != http.StatusOK || c["cluster_template_id"] != ct || !strings.Contains(dialecttest.MustJSON(t, c), `"node_group_template_id":"`+ngt+`"`) {
			t.Errorf("GET %s/clusters/%s after the restart = %d %v, want c1 made from ct1 and ng1", root, uuid, code, body)
		}
	}
	if code, body := dialecttest.Call(t, "DELETE", saharaURL(again, "2")+"/cluster-templates/"+ct, "", nil); code != http.StatusBadRequest {
		t.Errorf("DELETE of the cluster template in use after the restart = %d %v, want 400", code, body)
	}
}
