package sahara_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// image is the image ID the clusters are made with (Sahara's image registry is not
// modelled: the ID is kept as given).
const image = "0b3f4f5e-1111-4222-8333-944445555666"

// TestOpenstackCLI drives a cluster's whole life with the real `openstack dataprocessing`
// commands, through the ordinary Keystone login (which maps the caller to its tenant), for
// Sahara's API v2 and v1.1 at once: a node group template and a cluster template created, a
// cluster made from them and waited for to Active, scaled to three instances, a scale made to
// fail by a fault rule (the cluster's status and status_description show it), its cluster
// template's deletion refused while it exists, and deleted, then its cluster template.
// The commands are the guide's (simulator/dialects/sahara.md).
func TestOpenstackCLI(t *testing.T) {
	dialecttest.RequireOpenstack(t, "Sahara", "saharaclient")
	t.Parallel()
	for _, tt := range []struct{ api, versionField string }{{"2", "plugin_version"}, {"1.1", "hadoop_version"}} {
		t.Run("v"+tt.api, func(t *testing.T) {
			t.Parallel()
			// Transitions in milliseconds: --wait polls at once, then every 5 s, so a cluster that
			// has landed by the first poll costs no sleep.
			sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-ci": "ci"}), simtest.WithAdminToken("admin"),
				simtest.WithTimeScale(0.0005))
			home := t.TempDir()
			env := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + home,
				"OS_AUTH_URL=" + sim.URL + httpapi.KeystonePrefix, "OS_IDENTITY_API_VERSION=3",
				"OS_USERNAME=ci", "OS_PASSWORD=tok-ci", "OS_PROJECT_NAME=ci", "OS_USER_DOMAIN_NAME=Default", "OS_PROJECT_DOMAIN_NAME=Default"}
			oc := dialecttest.CLI{T: t, Env: env, Args: []string{"--os-data-processing-api-version", tt.api}}
			ngt := filepath.Join(home, "ng1.json")
			writeJSON(t, ngt, map[string]any{"name": "ng1", "plugin_name": "vanilla", tt.versionField: "2.7.1",
				"flavor_id": "m1.small", "node_processes": []string{"namenode", "datanode"}})
			clusterLife(t, sim, oc, "ci", ngt)
		})
	}
}

// clusterLife runs the cluster script through oc and checks each step through the engine.
func clusterLife(t *testing.T, sim *simtest.Sim, oc dialecttest.CLI, tenant, ngtFile string) {
	ctx := context.Background()
	if got := oc.JSON("dataprocessing", "node", "group", "template", "create", "--json", ngtFile, "-f", "json"); got["Name"] != "ng1" {
		t.Fatalf("node group template create = %v, want ng1", got)
	}
	if got := oc.JSON("dataprocessing", "cluster", "template", "create", "--name", "ct1", "--node-groups", "ng1:1", "-f", "json"); got["Node groups"] != "ng1:1" {
		t.Fatalf("cluster template create = %v, want node groups ng1:1", got)
	}
	created := oc.JSON("dataprocessing", "cluster", "create", "--name", "c1", "--cluster-template", "ct1", "--image", image, "--wait", "-f", "json")
	uuid, _ := created["Id"].(string)
	id, ok := dialect.IDOf("cluster", uuid)
	if !ok || created["Status"] != "Active" {
		t.Fatalf("cluster create --wait = %v, want an Active cluster with a cluster's UUID", created)
	}
	o, err := sim.Engine.Lookup(ctx, tenant, id)
	if err != nil || o.State != "Active" || o.Op != nil || count(o.Spec) != 1 {
		t.Fatalf("after create --wait the engine's cluster = %v, %v; want Active, one ng1 instance", o, err)
	}

	// Debian's saharaclient 4.0.2 waits, then fails to print the cluster ('Cluster' object has
	// no attribute 'cluster'): the scale is checked through the engine and cluster show.
	out, errOut, _ := oc.Run("dataprocessing", "cluster", "scale", "c1", "--instances", "ng1:3", "--wait")
	if !strings.Contains(out, `Cluster "c1" scaling has been started.`) || strings.Contains(errOut, "Error occurred") {
		t.Fatalf("cluster scale --wait:\nstdout: %s\nstderr: %s\nwant the scale started and no error", out, errOut)
	}
	simtest.Eventually(t, time.Minute, "the cluster scaled to 3", func() bool {
		o, err := sim.Engine.Lookup(ctx, tenant, id)
		return err == nil && o.State == "Active" && o.Op == nil && count(o.Spec) == 3
	})

	// A fault rule makes the next scale fail fatally: the cluster lands in Error, and says why.
	if _, err := sim.Engine.Faults().Add(ctx, tenant, wire.FaultRule{Kind: "cluster", Action: "scale", Mode: wire.FaultFail,
		Fatal: true, Message: "no capacity for ng1", Count: 1}); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ = oc.Run("dataprocessing", "cluster", "scale", "c1", "--instances", "ng1:4", "--wait")
	if !strings.Contains(errOut, "Error occurred during cluster scaling") {
		t.Errorf("a failing cluster scale --wait:\nstdout: %s\nstderr: %s\nwant the client's error", out, errOut)
	}
	if got := oc.JSON("dataprocessing", "cluster", "show", uuid, "-f", "json"); got["Status"] != "Error" {
		t.Errorf("cluster show after the failed scale = %v, want Error", got)
	}
	if c := getCluster(t, sim, oc.Args[1], uuid); !strings.Contains(c["status_description"].(string), "no capacity for ng1") {
		t.Errorf("status_description after the failed scale = %q, want the fault's message", c["status_description"])
	}

	// The cluster template is a stored object the cluster names: deleting it is refused while
	// the cluster exists, as Sahara refuses it.
	ctID, _ := o.Spec["cluster_template_id"].(string)
	if out, errOut, ok := oc.Run("dataprocessing", "cluster", "template", "delete", "ct1"); ok || !strings.Contains(out+errOut, "in use by c1") {
		t.Errorf("cluster template delete while c1 exists = %v\nstdout: %s\nstderr: %s\nwant Sahara's refusal: in use by c1", ok, out, errOut)
	}

	if out, errOut, ok := oc.Run("dataprocessing", "cluster", "delete", "c1", "--wait"); !ok || !strings.Contains(out+errOut, `Cluster "c1" has been removed successfully.`) {
		t.Fatalf("cluster delete --wait = %v\nstdout: %s\nstderr: %s\nwant the cluster removed", ok, out, errOut)
	}
	// --wait returned on Sahara's 404 (error_code 404): the engine holds the cluster no more.
	if o, err := sim.Engine.Lookup(ctx, tenant, id); err == nil {
		t.Errorf("after delete --wait the engine still holds the cluster: %v", o)
	}
	if out, errOut, ok := oc.Run("dataprocessing", "cluster", "template", "delete", "ct1"); !ok {
		t.Errorf("cluster template delete once c1 is gone failed\nstdout: %s\nstderr: %s", out, errOut)
	}
	if o, err := sim.Engine.Lookup(ctx, tenant, ctID); ctID == "" || err == nil {
		t.Errorf("after cluster template delete the engine's cluster template %q = %v, want it gone", ctID, o)
	}
}

// count is the instances a cluster spec's first node group has.
func count(spec map[string]any) int64 {
	groups, _ := spec["node_groups"].([]any)
	if len(groups) == 0 {
		return -1
	}
	g, _ := groups[0].(map[string]any)
	switch n := g["count"].(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return -1
}

// getCluster reads a cluster through the dialect with the CI tenant's token.
func getCluster(t *testing.T, sim *simtest.Sim, api, uuid string) map[string]any {
	t.Helper()
	path := "/v2/clusters/"
	if api == "1.1" {
		path = "/v1.1/ci/clusters/"
	}
	st, body := dialecttest.Call(t, "GET", sim.URL+httpapi.SaharaPrefix+path+uuid, "tok-ci", nil)
	c, ok := body["cluster"].(map[string]any)
	if st != 200 || !ok {
		t.Fatalf("GET %s = %d %v, want the cluster", path+uuid, st, body)
	}
	return c
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
