package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// statusRecorder keeps the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// onRefused calls f (once) after the simulator refuses an action whose path ends in suffix.
func onRefused(suffix string, f func()) func(http.Handler) http.Handler {
	var once sync.Once
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(rec, r)
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, suffix) && rec.status == http.StatusUnprocessableEntity {
				once.Do(func() { go f() })
			}
		})
	}
}

// TestAccMachineWaitsForPausedParent: the machine's cloudspace is PAUSED (its firewall
// stopped; self-healing resumes it 30 s later) when the machine is asked to stop. The plan
// passes; the apply's stop is refused while the cloudspace is PAUSED, so the apply waits for
// the system to resume the cloudspace, then stops the machine.
func TestAccMachineWaitsForPausedParent(t *testing.T) {
	var sim *testSim
	var refused atomic.Bool
	// When the stop is refused (the apply is waiting), move the clock past the self-healing.
	sim = newTestSim(t, withMiddleware(onRefused("/actions/stop", func() {
		refused.Store(true)
		_, _ = sim.Client.AdvanceClock(context.Background(), 31*time.Second)
	})))
	var csID, id string
	const csAddr = "lifecycle_cloudspace.cs"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(machineConfig("RUNNING")),
				Check:  resource.ComposeTestCheckFunc(captureID(csAddr, &csID), captureID(machineAddr, &id)),
			},
			{
				PreConfig: func() {
					// At full time scale the cloudspace stays PAUSED until the clock moves.
					if _, err := sim.Client.SetConfig(context.Background(), client.SimConfig{TimeScale: 1}); err != nil {
						t.Fatal(err)
					}
					if _, err := sim.Client.Act(context.Background(), "cloudspaces", csID, "pause", client.ActionRequest{}); err != nil {
						t.Fatal(err)
					}
					if _, err := sim.Client.AdvanceClock(context.Background(), 3*time.Second); err != nil {
						t.Fatal(err)
					}
					if o := sim.waitStatic(t, "cloudspaces", csID); o.State != "PAUSED" {
						t.Fatalf("cloudspace = %s, want PAUSED", o.State)
					}
					if _, err := sim.Client.SetConfig(context.Background(), client.SimConfig{TimeScale: 0.002}); err != nil {
						t.Fatal(err)
					}
				},
				Config: sim.config(machineConfig("HALTED")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectPriorState(csAddr, "state", "PAUSED"),
					plancheck.ExpectResourceAction(machineAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(machineAddr, tfjsonpath.New("state"), knownvalue.StringExact("HALTED")),
				},
				Check: func(*terraform.State) error {
					if !refused.Load() {
						return errors.New("the stop was never refused: the apply did not meet the PAUSED cloudspace")
					}
					if err := expectSimState(sim, "cloudspaces", csID, "DEPLOYED"); err != nil {
						return err
					}
					return expectActions(sim, "machines", id, "deploy", "stop")
				},
			},
		},
	})
}

// TestAccImportWrongKind: importing an image's ID as a machine names what the ID is and where
// to import it, instead of "non-existent remote object".
func TestAccImportWrongKind(t *testing.T) {
	sim := newTestSim(t)
	cfg := sim.config(machineConfig("RUNNING"))
	var imageID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check:  captureID("lifecycle_image.img", &imageID),
			},
			{
				Config:            cfg,
				ResourceName:      machineAddr,
				ImportState:       true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return imageID, nil },
				ExpectError:       errorLike(`Cannot import lifecycle_machine by the ID "image-[0-9a-f]+".*"image-[0-9a-f]+" is an image, not a machine. Import it into a lifecycle_image resource`),
			},
			{
				Config:        cfg,
				ResourceName:  machineAddr,
				ImportState:   true,
				ImportStateId: "machine-0000000000000000",
				ExpectError:   errorLike(`Cannot import lifecycle_machine by the ID "machine-0000000000000000".*No machine has the ID "machine-0000000000000000"`),
			},
		},
	})
}
