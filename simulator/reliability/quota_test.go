package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// TestQuotaUnderRaces sends racing creates of MCIs (each makes itself and its VMs) and
// scale-outs at a tenant near its object quota: the quota must count every object a request
// makes, exactly, whatever the interleaving. A violation is a tenant over its quota, an
// accepted request whose objects are not all there, or a refusal that does not name the quota,
// the count asked for and what is left.
func TestQuotaUnderRaces(t *testing.T) {
	const quota = 200
	rounds := scale(4, 40)
	var tried, violations, fivexx int
	for round := range rounds {
		sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))), simtest.WithoutWorker(),
			simtest.WithTimeScale(1), simtest.WithEngineOptions(func(o *engine.Options) { o.MaxObjects = quota; o.CheckInvariants = true }))
		var accepted, made atomic.Int64
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range 24 {
			wg.Go(func() {
				vms := 3 + (i*7+round)%15
				spec := map[string]any{"subgroups": []any{map[string]any{"name": "g", "count": vms, "csp": "aws", "region": "us-east-1"}}}
				st, body, err := call(http.MethodPost, sim.URL+"/v1/mcis", client.CreateRequest{Name: fmt.Sprint("m", i), Spec: spec})
				mu.Lock()
				defer mu.Unlock()
				tried++
				switch {
				case err != nil || st >= 500:
					fivexx++
				case st == http.StatusAccepted:
					accepted.Add(1)
					made.Add(int64(vms + 1))
				case st == http.StatusForbidden:
					var env client.ErrorBody
					_ = json.Unmarshal(body, &env)
					if m := env.Error.Message; !strings.Contains(m, fmt.Sprintf("max_objects %d", quota)) ||
						!strings.Contains(m, fmt.Sprintf("makes %d", vms+1)) || !strings.Contains(m, "left") {
						violations++
						t.Errorf("quota refusal %q does not name the quota, the %d asked for and what is left", m, vms+1)
					}
				default:
					violations++
					t.Errorf("create at the quota: %d %s", st, body)
				}
			})
		}
		wg.Wait()
		n, err := sim.Store.CountObjects(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if n > quota || int64(n) != made.Load() {
			violations++
			t.Errorf("round %d: the tenant holds %d objects; %d accepted MCIs made %d; quota %d", round, n, accepted.Load(), made.Load(), quota)
		}
	}
	checkRow(t, row{name: "quota under racing creates", tried: tried, violations: violations, fivexx: fivexx,
		note: "tenant over quota, or accepted objects missing, or refusal not naming quota/asked/left"})
}
