package simulator

import (
	"net/http"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// TestAPIOverdueOperationIsVisible: a client can tell an operation is stuck, and since when,
// by the simulator's clock: the operation carries the start of its phase and every answer's
// Date header is the simulator's time (also after a clock advance).
func TestAPIOverdueOperationIsVisible(t *testing.T) {
	h := newTestServer(t, harnessOptions{healAfter: 10 * time.Minute})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.addFault(client.FaultRule{Kind: "machine", Action: "stop", Mode: wire.FaultHang, Count: 1})
	stopped := h.manual.Now()
	h.act("machines", m.ID, "stop", nil)
	h.advance(3 * time.Minute)

	r := h.do(http.MethodGet, "/v1/machines/"+m.ID, nil)
	wantStatus(t, r, "GET machine", http.StatusOK)
	o := decodeAs[client.Object](t, r)
	if o.State != "STOPPING" || o.Operation == nil {
		t.Fatalf("machine = %s op %+v, want STOPPING with an operation", o.State, o.Operation)
	}
	if !o.Operation.PhaseStartedAt.Equal(stopped) {
		t.Errorf("phase_started_at = %v, want %v", o.Operation.PhaseStartedAt, stopped)
	}
	date, err := http.ParseTime(r.Header.Get("Date"))
	if err != nil {
		t.Fatalf("Date header %q: %v", r.Header.Get("Date"), err)
	}
	if want := h.manual.Now().Truncate(time.Second); !date.Equal(want) {
		t.Errorf("Date = %v, want the simulator's clock %v", date, want)
	}
}
