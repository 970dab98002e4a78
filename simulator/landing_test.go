package simulator

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// An action or a PATCH on an object whose phase is over but not landed yet (the worker
// behind, as it was under load on PostgreSQL: busy answers for a third of the accepted
// actions) waits for the landing instead of answering busy; it answers busy when nobody lands
// it within the bound, and at once when the phase is not due yet.
func TestActionWaitsForOverdueLanding(t *testing.T) {
	type request struct {
		name, method, path string
		body               any
		accepted           int    // the status once the stop has landed
		state              string // the machine's state in that answer
	}
	start := request{name: "start", method: http.MethodPost, path: "/actions/start", body: client.ActionRequest{},
		accepted: http.StatusAccepted, state: "STARTING"}
	patch := request{name: "PATCH", method: http.MethodPatch, body: client.PatchRequest{Spec: map[string]any{"memory": 4096}},
		accepted: http.StatusOK, state: "HALTED"}
	tests := []struct {
		name        string
		req         request
		overdue     bool          // the manual clock is moved past the stop's landing
		land        bool          // the worker lands it while the request waits
		landingWait time.Duration // engine.Options.LandingWait
		accepted    bool          // the request is accepted, not answered busy
	}{
		{name: "landed while it waits", req: start, overdue: true, land: true, landingWait: time.Hour, accepted: true},
		{name: "nobody lands it", req: start, overdue: true, landingWait: 20 * time.Millisecond},
		{name: "not due yet", req: start, landingWait: time.Hour},
		{name: "PATCH landed while it waits", req: patch, overdue: true, land: true, landingWait: time.Hour, accepted: true},
		{name: "PATCH nobody lands it", req: patch, overdue: true, landingWait: 20 * time.Millisecond},
		{name: "PATCH not due yet", req: patch, landingWait: time.Hour},
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
				r, err := h.request(tt.req.method, objPath("machines", m.ID)+tt.req.path, tt.req.body)
				if err != nil {
					t.Error(err)
				}
				answer <- r
			}()
			var got *response
			if tt.land {
				simtest.Eventually(t, 10*time.Second, "the request waiting for the stop's landing", func() bool {
					select {
					case got = <-answer:
						return true
					default:
						return h.engine.LongPolls() > 0
					}
				})
				if got != nil {
					t.Fatalf("%s on a machine whose stop is due = %s before the stop landed, want it to wait", tt.req.name, got)
				}
				h.sim.Advance(t, 0) // the worker lands the stop
			}
			simtest.Eventually(t, 10*time.Second, "the answer", func() bool {
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
			if !tt.accepted {
				wantStatus(t, got, tt.req.name, http.StatusConflict)
				if !strings.Contains(string(got.Body), "is busy") {
					t.Errorf("%s = %s, want the busy answer", tt.req.name, got)
				}
			} else {
				wantStatus(t, got, tt.req.name, tt.req.accepted)
				if o := decodeAs[client.Object](t, got); o.State != tt.req.state {
					t.Errorf("%s answered %s, want %s", tt.req.name, o.State, tt.req.state)
				}
			}
			if n := h.engine.LongPolls(); n != 0 {
				t.Errorf("%d watchers left after the answer, want 0", n)
			}
		})
	}
}
