package blazar_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// BenchmarkDialect sets what the Blazar dialect costs beside the equivalent /v1 work, in one
// run, over HTTP with keep-alive (in-memory store, no worker):
//
//   - get: a lease with its reservation and three events. The dialect answers it in one request
//     (GET /blazar/v1/leases/{uuid}); /v1 needs three (GET the lease, list its reservations,
//     list its events).
//   - create: a lease with one reservation (the lease, a reservation and three events made), the
//     dialect's POST /blazar/v1/leases against /v1's POST /v1/leases, each in a tenant that
//     already holds `held` leases: the dialect checks the name is free among them (Blazar's
//     names are unique per project), /v1 does not.
//   - create/interleaved: the create of both doors in one loop, taking turns; it reports each
//     door's median request time and the ratios of the medians and of the fastest requests,
//     which a loaded machine moves less than two runs side by side.
//
// Compare the pairs' ns/op (benchstat, or -count 5 and the min/median by hand).
func BenchmarkDialect(b *testing.B) {
	b.Run("get", func(b *testing.B) {
		sim, hc := benchSim(b)
		_, body := dialecttest.Call(b, "POST", sim.URL+httpapi.BlazarPrefix+"/leases", "", newLease("l"))
		uuid := leaseOf(b, body)["id"].(string)
		id, _ := dialect.IDOf("lease", uuid)
		b.Run("blazar", func(b *testing.B) {
			for b.Loop() {
				dialecttest.Send(b, hc, "GET", sim.URL+httpapi.BlazarPrefix+"/leases/"+uuid, nil, http.StatusOK)
			}
		})
		b.Run("v1", func(b *testing.B) {
			for b.Loop() {
				dialecttest.Send(b, hc, "GET", sim.URL+"/v1/leases/"+id, nil, http.StatusOK)
				dialecttest.Send(b, hc, "GET", sim.URL+"/v1/reservations?parent_id="+id, nil, http.StatusOK)
				dialecttest.Send(b, hc, "GET", sim.URL+"/v1/events?parent_id="+id, nil, http.StatusOK)
			}
		})
	})
	for _, held := range []int{10, 1000} {
		b.Run(fmt.Sprintf("create/held=%d", held), func(b *testing.B) {
			spec := map[string]any{"end_date": t0.Add(2 * time.Hour).Format(time.RFC3339),
				"reservations": []any{map[string]any{"resource_type": "physical:host", "min": 1, "max": 2}}}
			for _, door := range []string{"blazar", "v1"} {
				b.Run(door, func(b *testing.B) {
					sim, hc := benchSim(b)
					for i := range held {
						dialecttest.Call(b, "POST", sim.URL+httpapi.BlazarPrefix+"/leases", "", newLease(fmt.Sprintf("held-%d", i)))
					}
					i := 0
					for b.Loop() {
						i++
						name := fmt.Sprintf("new-%d", i)
						if door == "blazar" {
							dialecttest.Send(b, hc, "POST", sim.URL+httpapi.BlazarPrefix+"/leases", newLease(name), http.StatusCreated)
						} else {
							dialecttest.Send(b, hc, "POST", sim.URL+"/v1/leases", map[string]any{"name": name, "spec": spec}, http.StatusAccepted)
						}
					}
				})
			}
		})
	}
	// The same creates, the two doors taking turns on one simulator (dialecttest.Interleave).
	b.Run("create/interleaved", func(b *testing.B) {
		sim, hc := benchSim(b)
		for i := range 10 {
			dialecttest.Call(b, "POST", sim.URL+httpapi.BlazarPrefix+"/leases", "", newLease(fmt.Sprintf("held-%d", i)))
		}
		spec := map[string]any{"end_date": t0.Add(2 * time.Hour).Format(time.RFC3339),
			"reservations": []any{map[string]any{"resource_type": "physical:host", "min": 1, "max": 2}}}
		dialecttest.Interleave(b, "blazar", func(i int) {
			dialecttest.Send(b, hc, "POST", sim.URL+httpapi.BlazarPrefix+"/leases", newLease(fmt.Sprintf("bl-%d", i)), http.StatusCreated)
		}, func(i int) {
			dialecttest.Send(b, hc, "POST", sim.URL+"/v1/leases", map[string]any{"name": fmt.Sprintf("v1-%d", i), "spec": spec}, http.StatusAccepted)
		})
	})
}

func benchSim(b *testing.B) (*simtest.Sim, *http.Client) {
	sim := dialecttest.BenchSim(b, t0)
	return sim, sim.HTTP.Client()
}
