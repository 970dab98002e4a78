package simulator
import ("testing";"sync";"context"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client")
func TestProbe(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	k, _ := h.engine.Registry().Kind("machine")
	bad := 0
	for round := range 50 {
		m := h.runningMachine(cs.ID, "x")
		f, _ := h.engine.Faults().Add(client.FaultRule{Kind: "machine", Action: "stop", Mode: FaultHang, Count: 1})
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 30 { wg.Add(1); go func() { defer wg.Done(); <-start; h.engine.Act(context.Background(), "", k, m.ID, "stop", client.ActionRequest{}, "") }() }
		close(start); wg.Wait()
		o := h.get("machines", m.ID)
		if !o.Operation.DueAt.IsZero() { bad++ }
		_ = round
		h.engine.Faults().Delete(f.ID)
	}
	t.Logf("bad rounds: %d/50", bad)
}
