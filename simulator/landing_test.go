package simulator

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// An action on an object whose phase is over but not landed yet (the worker behind, as it was
// under load on PostgreSQL: busy answers for a third of the accepted actions) waits for the
// landing instead of answering busy; it answers busy when nobody lands it within the bound,
// and at once when the phase is not due yet.
func TestActionWaitsForOverdueLanding(t *testing.T) {
	tests := []struct {
		name        string
		overdue     bool          // the manual clock is moved past the stop's landing
		land        bool          // the worker lands it while the action waits
		landingWait time.Duration // engine.Options.LandingWait
		want        int
	}{
		{name: "landed while it waits", overdue: true, land: true, landingWait: time.Hour, want: http.StatusAccepted},
		{name: "nobody lands it", overdue: true, landingWait: 20 * time.Millisecond, want: http.StatusConflict},
		{name: "not due yet", landingWait: time.Hour, want: http.StatusConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestServer(t, harnessOptions{landingWait: tt.landingWait})
			_, cs := h.openvcloud()
			m := h.runningMachine(cs.ID, "web")
			h.act("machines", m.ID, "stop", nil)
			if tt.overdue {
				h.manual.Advance(time.Hour) // the stop is due; nothing lands it yet
			}
			answer := make(chan *response, 1)
			go func() {
				r, err := h.request(http.MethodPost, objPath("machines", m.ID)+"/actions/start", client.ActionRequest{})
				if err != nil {
					t.Error(err)
				}
				answer <- r
			}()
			var got *response
			if tt.land {
				simtest.Eventually(t, 10*time.Second, "the start waiting for the stop's landing", func() bool {
					select {
					case got = <-answer:
						return true
					default:
						return h.engine.LongPolls() > 0
					}
				})
				if got != nil {
					t.Fatalf("start on a machine whose stop is due = %s before the stop landed, want it to wait", got)
				}
				h.sim.Advance(t, 0) // the worker lands the stop
			}
			simtest.Eventually(t, 10*time.Second, "the start's answer", func() bool {
				if got == nil {
					select {
					case got = <-answer:
					default:
					}
				}
				return got != nil
			})
			if got == nil {
				return // the request failed (reported)
			}
			wantStatus(t, got, "start", tt.want)
			if tt.want == http.StatusConflict && !strings.Contains(string(got.Body), "is busy") {
				t.Errorf("start = %s, want the busy answer", got)
			}
			if tt.want == http.StatusAccepted {
				if o := decodeAs[client.Object](t, got); o.State != "STARTING" {
					t.Errorf("start answered %s, want STARTING", o.State)
				}
			}
			if n := h.engine.LongPolls(); n != 0 {
				t.Errorf("%d watchers left after the answer, want 0", n)
			}
		})
	}
}
