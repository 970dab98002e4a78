package sahara_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// BenchmarkDialect sets what the Sahara dialect costs beside the equivalent /v1 work, in one
// run, over HTTP with keep-alive (in-memory store, no worker):
//
//   - get: a cluster made from a cluster template, with one node group. The dialect's
//     GET /sahara/v2/clusters/{uuid} against /v1's GET /v1/clusters/{id}: the same work, as a
//     cluster has no child objects (its node groups are its spec) and its spec names its
//     templates, which the dialect answers as UUIDs without reading them. get/paired sends the
//     two alternately in one loop and reports each one's mean (sahara-ns/req, v1-ns/req) and
//     their ratio (sahara/v1), so both see the same load: on a shared machine, the figure to
//     read.
//   - create: the dialect's POST /sahara/v2/clusters from a cluster template (the node groups
//     resolved from their templates, read from the store) against /v1's POST /v1/clusters
//     with the spec the dialect makes (the templates it names included, whose link the
//     engine checks either way).
//
// Compare the pairs' ns/op (benchstat, or -count 5 and the min/median by hand).
func BenchmarkDialect(b *testing.B) {
	b.Run("get", func(b *testing.B) {
		sim, hc := benchSim(b)
		_, ct := benchTemplates(b, sim)
		_, body := dialecttest.Call(b, "POST", sim.URL+httpapi.SaharaPrefix+"/v2/clusters", "", newCluster("c", ct))
		uuid := body["cluster"].(map[string]any)["id"].(string)
		id, _ := dialect.IDOf("cluster", uuid)
		// Whichever door ran first was slower (the connection's and the setup's garbage were
		// its to pay): each starts warm, after a collection.
		warm := func() {
			for range 200 {
				dialecttest.Send(b, hc, "GET", sim.URL+httpapi.SaharaPrefix+"/v2/clusters/"+uuid, nil, http.StatusOK)
				dialecttest.Send(b, hc, "GET", sim.URL+"/v1/clusters/"+id, nil, http.StatusOK)
			}
			runtime.GC()
		}
		b.Run("sahara", func(b *testing.B) {
			warm()
			for b.Loop() {
				dialecttest.Send(b, hc, "GET", sim.URL+httpapi.SaharaPrefix+"/v2/clusters/"+uuid, nil, http.StatusOK)
			}
		})
		b.Run("v1", func(b *testing.B) {
			warm()
			for b.Loop() {
				dialecttest.Send(b, hc, "GET", sim.URL+"/v1/clusters/"+id, nil, http.StatusOK)
			}
		})
		// In process (the server's handler called directly, no connection): what the server
		// does per request, without the network and the scheduler's wake-ups.
		handler := sim.HTTP.Config.Handler
		for _, door := range []struct{ name, path string }{{"inproc/sahara", httpapi.SaharaPrefix + "/v2/clusters/" + uuid}, {"inproc/v1", "/v1/clusters/" + id}} {
			b.Run(door.name, func(b *testing.B) {
				warm()
				for b.Loop() {
					rec := httptest.NewRecorder()
					handler.ServeHTTP(rec, httptest.NewRequest("GET", door.path, nil))
					if rec.Code != http.StatusOK {
						b.Fatalf("GET %s = %d %s", door.path, rec.Code, rec.Body)
					}
				}
			})
		}
		b.Run("interleaved", func(b *testing.B) {
			warm()
			dialecttest.Interleave(b, "sahara", func(int) {
				dialecttest.Send(b, hc, "GET", sim.URL+httpapi.SaharaPrefix+"/v2/clusters/"+uuid, nil, http.StatusOK)
			}, func(int) {
				dialecttest.Send(b, hc, "GET", sim.URL+"/v1/clusters/"+id, nil, http.StatusOK)
			})
		})
		b.Run("paired", func(b *testing.B) {
			warm()
			var sahara, v1 time.Duration
			for b.Loop() {
				start := time.Now()
				dialecttest.Send(b, hc, "GET", sim.URL+httpapi.SaharaPrefix+"/v2/clusters/"+uuid, nil, http.StatusOK)
				mid := time.Now()
				dialecttest.Send(b, hc, "GET", sim.URL+"/v1/clusters/"+id, nil, http.StatusOK)
				sahara, v1 = sahara+mid.Sub(start), v1+time.Since(mid)
			}
			b.ReportMetric(float64(sahara.Nanoseconds())/float64(b.N), "sahara-ns/req")
			b.ReportMetric(float64(v1.Nanoseconds())/float64(b.N), "v1-ns/req")
			b.ReportMetric(float64(sahara)/float64(v1), "sahara/v1")
		})
	})
	b.Run("create", func(b *testing.B) {
		for _, door := range []string{"sahara", "v1"} {
			b.Run(door, func(b *testing.B) {
				sim, hc := benchSim(b)
				ngt, ct := benchTemplates(b, sim)
				spec := v1ClusterSpec(ngt, ct)
				runtime.GC() // the other door's garbage is not this one's to collect
				i := 0
				for b.Loop() {
					i++
					name := fmt.Sprintf("c-%d", i)
					if door == "sahara" {
						dialecttest.Send(b, hc, "POST", sim.URL+httpapi.SaharaPrefix+"/v2/clusters", newCluster(name, ct), http.StatusAccepted)
					} else {
						dialecttest.Send(b, hc, "POST", sim.URL+"/v1/clusters", map[string]any{"name": name, "spec": spec}, http.StatusAccepted)
					}
				}
			})
		}
	})
	// The same creates, the two doors taking turns on one simulator (dialecttest.Interleave).
	b.Run("create/interleaved", func(b *testing.B) {
		sim, hc := benchSim(b)
		ngt, ct := benchTemplates(b, sim)
		spec := v1ClusterSpec(ngt, ct)
		dialecttest.Interleave(b, "sahara", func(i int) {
			dialecttest.Send(b, hc, "POST", sim.URL+httpapi.SaharaPrefix+"/v2/clusters", newCluster(fmt.Sprintf("s-%d", i), ct), http.StatusAccepted)
		}, func(i int) {
			dialecttest.Send(b, hc, "POST", sim.URL+"/v1/clusters", map[string]any{"name": fmt.Sprintf("v-%d", i), "spec": spec}, http.StatusAccepted)
		})
	})
}

// newCluster is the body `openstack dataprocessing cluster create --name NAME
// --cluster-template ct1 --image IMAGE` sends (API v2).
func newCluster(name, ct string) map[string]any {
	return map[string]any{"name": name, "plugin_name": "vanilla", "plugin_version": "2.7.1", "cluster_template_id": ct,
		"is_transient": false, "default_image_id": "0b3f4f5e-1111-4222-8333-944445555666", "is_public": false, "is_protected": false}
}

func benchSim(b *testing.B) (*simtest.Sim, *http.Client) {
	sim := dialecttest.BenchSim(b, time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC))
	return sim, sim.HTTP.Client()
}

// v1ClusterSpec is the spec the dialect makes of a cluster from cluster template ct (with
// node group template ngt): /v1's create of it checks the cluster template link as the
// dialect's does.
func v1ClusterSpec(ngt, ct string) map[string]any {
	ngtID, _ := dialect.IDOf("node_group_template", ngt)
	ctID, _ := dialect.IDOf("cluster_template", ct)
	return map[string]any{"plugin_name": "vanilla", "hadoop_version": "2.7.1", "cluster_template_id": ctID,
		"default_image_id": "0b3f4f5e-1111-4222-8333-944445555666", "node_groups": []any{map[string]any{"name": "ng1",
			"flavor": "m1.small", "count": 1, "processes": []any{"namenode", "datanode"}, "node_group_template_id": ngtID}}}
}

// benchTemplates makes node group template ng1 and cluster template ct1 and returns their
// UUIDs.
func benchTemplates(b *testing.B, sim *simtest.Sim) (ngt, ct string) {
	_, body := dialecttest.Call(b, "POST", sim.URL+httpapi.SaharaPrefix+"/v2/node-group-templates", "", map[string]any{"name": "ng1", "plugin_name": "vanilla",
		"plugin_version": "2.7.1", "flavor_id": "m1.small", "node_processes": []string{"namenode", "datanode"}})
	ngt = body["node_group_template"].(map[string]any)["id"].(string)
	_, body = dialecttest.Call(b, "POST", sim.URL+httpapi.SaharaPrefix+"/v2/cluster-templates", "", map[string]any{"name": "ct1", "plugin_name": "vanilla",
		"plugin_version": "2.7.1", "node_groups": []any{map[string]any{"name": "ng1", "count": 1, "node_group_template_id": ngt}}})
	return ngt, body["cluster_template"].(map[string]any)["id"].(string)
}
