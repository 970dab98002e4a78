package tumblebug_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// BenchmarkDialect sets what the Tumblebug dialect costs beside the equivalent /v1 work, in
// one run, over HTTP with keep-alive (in-memory store, no worker), in a namespace that holds
// `held` MCIs besides:
//
//   - get: an MCI of three VMs. The dialect answers it in one request (GET
//     /tumblebug/ns/default/mci/{name}, found by its name); /v1 needs two (GET the MCI, list
//     its VMs).
//   - create: an MCI of three VMs, the dialect's POST /tumblebug/ns/default/mciDynamic against
//     /v1's POST /v1/mcis: the dialect checks the name is free (an MCI's name is its ID in
//     the namespace), /v1 does not.
//
// Compare the pairs' ns/op (benchstat, or -count 5 and the min/median by hand).
func BenchmarkDialect(b *testing.B) {
	for _, held := range []int{10, 1000} {
		b.Run(fmt.Sprintf("get/held=%d", held), func(b *testing.B) {
			sim, hc, tb := benchSim(b, held)
			x := do(b, "POST", tb+"/mciDynamic", "", newMCI("m"))
			id, _ := dialect.IDOf("mci", x.out["uid"].(string))
			b.Run("tumblebug", func(b *testing.B) {
				for b.Loop() {
					dialecttest.Send(b, hc, "GET", tb+"/mci/m", nil, http.StatusOK)
				}
			})
			b.Run("v1", func(b *testing.B) {
				for b.Loop() {
					dialecttest.Send(b, hc, "GET", sim.URL+"/v1/mcis/"+id, nil, http.StatusOK)
					dialecttest.Send(b, hc, "GET", sim.URL+"/v1/vms?parent_id="+id, nil, http.StatusOK)
				}
			})
		})
		b.Run(fmt.Sprintf("create/held=%d", held), func(b *testing.B) {
			spec := map[string]any{"subgroups": []any{
				map[string]any{"name": "web", "count": 2, "csp": "aws", "region": "ap-northeast-2", "spec": "t3.small", "image": "ubuntu22.04"},
				map[string]any{"name": "db", "count": 1, "csp": "gcp", "region": "asia-northeast3", "spec": "e2-medium", "image": "ubuntu22.04"},
			}}
			for _, door := range []string{"tumblebug", "v1"} {
				b.Run(door, func(b *testing.B) {
					sim, hc, tb := benchSim(b, held)
					i := 0
					for b.Loop() {
						i++
						name := fmt.Sprintf("new-%d", i)
						if door == "tumblebug" {
							dialecttest.Send(b, hc, "POST", tb+"/mciDynamic", newMCI(name), http.StatusOK)
						} else {
							dialecttest.Send(b, hc, "POST", sim.URL+"/v1/mcis", map[string]any{"name": name, "spec": spec}, http.StatusAccepted)
						}
					}
				})
			}
		})
	}
	// The same work, the two doors taking turns on one simulator (dialecttest.Interleave).
	spec := map[string]any{"subgroups": []any{
		map[string]any{"name": "web", "count": 2, "csp": "aws", "region": "ap-northeast-2", "spec": "t3.small", "image": "ubuntu22.04"},
		map[string]any{"name": "db", "count": 1, "csp": "gcp", "region": "asia-northeast3", "spec": "e2-medium", "image": "ubuntu22.04"},
	}}
	b.Run("get/interleaved", func(b *testing.B) {
		sim, hc, tb := benchSim(b, 10)
		x := do(b, "POST", tb+"/mciDynamic", "", newMCI("m"))
		id, _ := dialect.IDOf("mci", x.out["uid"].(string))
		dialecttest.Interleave(b, "tumblebug", func(int) {
			dialecttest.Send(b, hc, "GET", tb+"/mci/m", nil, http.StatusOK)
		}, func(int) {
			dialecttest.Send(b, hc, "GET", sim.URL+"/v1/mcis/"+id, nil, http.StatusOK)
			dialecttest.Send(b, hc, "GET", sim.URL+"/v1/vms?parent_id="+id, nil, http.StatusOK)
		})
	})
	b.Run("create/interleaved", func(b *testing.B) {
		sim, hc, tb := benchSim(b, 10)
		dialecttest.Interleave(b, "tumblebug", func(i int) {
			dialecttest.Send(b, hc, "POST", tb+"/mciDynamic", newMCI(fmt.Sprintf("tb-%d", i)), http.StatusOK)
		}, func(i int) {
			dialecttest.Send(b, hc, "POST", sim.URL+"/v1/mcis", map[string]any{"name": fmt.Sprintf("v1-%d", i), "spec": spec}, http.StatusAccepted)
		})
	})
}

// benchSim starts a simulator whose namespace holds held MCIs, with an HTTP client and the
// namespace's base URL.
func benchSim(b *testing.B, held int) (*simtest.Sim, *http.Client, string) {
	sim := dialecttest.BenchSim(b, t0)
	tb := sim.URL + httpapi.TumblebugPrefix + "/ns/default"
	for i := range held {
		do(b, "POST", tb+"/mciDynamic", "", newMCI(fmt.Sprintf("held-%d", i)))
	}
	return sim, sim.HTTP.Client(), tb
}
