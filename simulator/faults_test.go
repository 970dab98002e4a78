package simulator

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// addFault adds a rule through the API.
func (h *harness) addFault(r client.FaultRule) client.FaultRule {
	h.t.Helper()
	resp := h.do(http.MethodPost, "/v1/sim/faults", r)
	wantStatus(h.t, resp, "POST /v1/sim/faults", http.StatusCreated)
	return decodeAs[client.FaultRule](h.t, resp)
}

func (h *harness) fault(id string) client.FaultRule {
	h.t.Helper()
	for _, f := range decodeAs[client.FaultList](h.t, h.do(http.MethodGet, "/v1/sim/faults", nil)).Items {
		if f.ID == id {
			return f
		}
	}
	h.t.Fatalf("no fault %s", id)
	return client.FaultRule{}
}

func lastError(t *testing.T, o client.Object) map[string]any {
	t.Helper()
	le, ok := o.Status["last_error"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no status.last_error: %v", o.ID, o.Status)
	}
	return le
}

func TestFaultFailRollsBack(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()

	// A failed create rolls back to the initial state.
	f := h.addFault(client.FaultRule{Kind: "machine", Action: "deploy", Mode: wire.FaultFail, Message: "no capacity left", Count: 1})
	m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID})
	o := h.mustSettle("machines", m.ID, "VIRTUAL")
	le := lastError(t, o)
	if le["message"] != "no capacity left" || le["action"] != "deploy" || le["state"] != "DEPLOYING" || le["operation_id"] != m.Operation.ID {
		t.Errorf("last_error = %v", le)
	}
	evs := h.events("machines", m.ID)
	checkEventLog(t, evs)
	last := evs[len(evs)-1]
	if last.From != "DEPLOYING" || last.To != "VIRTUAL" || last.Error != "no capacity left" || last.Action != "deploy" {
		t.Errorf("rollback event = %+v", last)
	}
	if got := h.fault(f.ID).Fired; got != 1 {
		t.Errorf("fault fired %d times, want 1", got)
	}
	// The rolled-back create can run again; success clears the error.
	h.act("machines", m.ID, "deploy", nil)
	if o = h.mustSettle("machines", m.ID, "RUNNING"); o.Status["last_error"] != nil {
		t.Errorf("last_error survived a successful action: %v", o.Status)
	}

	// An action's failure rolls back to the state it started from; the phase filter matches.
	h.addFault(client.FaultRule{Kind: "machine", Phase: "STOPPING", Mode: wire.FaultFail})
	h.act("machines", m.ID, "stop", nil)
	o = h.mustSettle("machines", m.ID, "RUNNING")
	if msg, _ := lastError(t, o)["message"].(string); !strings.Contains(msg, "STOPPING") {
		t.Errorf("default fault message %q should name the phase", msg)
	}
	// Other phases are untouched by it.
	h.act("machines", m.ID, "pause", nil)
	h.mustSettle("machines", m.ID, "PAUSED")

	// A kind whose failure path has phases walks them: a MobiledgeX create goes through
	// CreateError back to NotPresent, the operation carrying the error meanwhile.
	cl := h.create("cloudlets", client.CreateRequest{Name: "edge"})
	h.mustSettle("cloudlets", cl.ID, "Ready")
	h.addFault(client.FaultRule{Kind: "cluster_inst", Action: "create", Mode: wire.FaultFail, Message: "quota"})
	ci := h.create("cluster_insts", client.CreateRequest{Name: "k8s", ParentID: cl.ID})
	h.advance(2 * time.Second)
	if o = h.get("cluster_insts", ci.ID); o.State != "CreateError" || o.Operation == nil || o.Operation.Error != "quota" {
		t.Errorf("failing cluster_inst = %s op %+v, want CreateError carrying the error", o.State, o.Operation)
	}
	// NotPresent is a gone state: the undone create removes the object, its history stays.
	if _, exists := h.settle("cluster_insts", ci.ID); exists {
		t.Error("an undone cluster_inst create left the object")
	}
	evs = h.events("cluster_insts", ci.ID)
	checkEventLog(t, evs)
	if got, want := eventStates(evs), []string{"NotPresent", "CreateRequested", "CreateError", "NotPresent"}; !slices.Equal(got, want) {
		t.Errorf("failed create went %v, want %v", got, want)
	}
	if evs[2].Actor != "controller" || evs[2].Error != "quota" {
		t.Errorf("the controller's undo = %+v", evs[2])
	}
}

func TestFaultFailFatal(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	start := harnessT0.Add(240 * time.Hour).Format(time.RFC3339)
	end1, end2 := harnessT0.Add(250*time.Hour).Format(time.RFC3339), harnessT0.Add(260*time.Hour).Format(time.RFC3339)
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: map[string]any{"start_date": start, "end_date": end1}})
	lease = h.mustSettle("leases", lease.ID, "PENDING")

	// An ordinary update failure rolls back, spec included.
	h.addFault(client.FaultRule{Kind: "lease", Action: "update", Mode: wire.FaultFail, Count: 1, Message: "placement failed"})
	r := h.do(http.MethodPatch, objPath("leases", lease.ID), client.PatchRequest{Spec: map[string]any{"end_date": end2}})
	wantStatus(t, r, "PATCH lease", http.StatusAccepted)
	if o := decodeAs[client.Object](t, r); o.State != "UPDATING" {
		t.Fatalf("patched lease is %s, want UPDATING", o.State)
	}
	o := h.mustSettle("leases", lease.ID, "PENDING")
	if o.Spec["end_date"] != end1 {
		t.Errorf("spec after a rolled-back update = %v, want end_date %s again", o.Spec, end1)
	}
	if lastError(t, o)["message"] != "placement failed" {
		t.Errorf("last_error = %v", o.Status["last_error"])
	}

	// A fatal one lands in the action's fatal state.
	h.addFault(client.FaultRule{Kind: "lease", Action: "update", Mode: wire.FaultFail, Fatal: true, Message: "db lost"})
	h.do(http.MethodPatch, objPath("leases", lease.ID), client.PatchRequest{Spec: map[string]any{"end_date": end2}})
	o = h.mustSettle("leases", lease.ID, "ERROR")
	if lastError(t, o)["message"] != "db lost" {
		t.Errorf("last_error = %v", o.Status["last_error"])
	}
	evs := h.events("leases", lease.ID)
	checkEventLog(t, evs)
	if last := evs[len(evs)-1]; last.From != "UPDATING" || last.To != "ERROR" || last.Error != "db lost" {
		t.Errorf("fatal event = %+v", last)
	}

	// fatal on an action without a fatal state is an ordinary failure.
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.addFault(client.FaultRule{Kind: "machine", Action: "stop", Mode: wire.FaultFail, Fatal: true})
	h.act("machines", m.ID, "stop", nil)
	h.mustSettle("machines", m.ID, "RUNNING")
}

func TestFaultHangSelfHeals(t *testing.T) {
	h := newTestServer(t, harnessOptions{healAfter: 10 * time.Minute, metrics: true})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.addFault(client.FaultRule{Kind: "machine", Action: "stop", Mode: wire.FaultHang, Count: 1})

	o := h.act("machines", m.ID, "stop", nil)
	if o.State != "STOPPING" || o.Operation == nil || !o.Operation.DueAt.IsZero() {
		t.Fatalf("hanging stop = %s op %+v, want STOPPING with no due time", o.State, o.Operation)
	}
	for range 9 {
		h.advance(time.Minute)
	}
	h.advance(59 * time.Second)
	if o = h.get("machines", m.ID); o.State != "STOPPING" {
		t.Fatalf("after 9m59s the hanging stop is %s, want still STOPPING", o.State)
	}
	h.advance(time.Second)
	o = h.get("machines", m.ID)
	if !o.Static || o.State != "RUNNING" {
		t.Fatalf("after the heal limit the machine is %s (static %v), want rolled back to RUNNING", o.State, o.Static)
	}
	if msg, _ := lastError(t, o)["message"].(string); !strings.Contains(msg, "self-healed") || !strings.Contains(msg, "STOPPING") {
		t.Errorf("last_error message = %q, want it to say it self-healed from STOPPING", msg)
	}
	evs := h.events("machines", m.ID)
	checkEventLog(t, evs)
	last := evs[len(evs)-1]
	if last.From != "STOPPING" || last.To != "RUNNING" || last.Actor != "system" || !strings.Contains(last.Message, "self-healing") || last.Error == "" {
		t.Errorf("healing event = %+v, want a system event mentioning self-healing", last)
	}
	// The fault is spent: the next stop completes.
	h.act("machines", m.ID, "stop", nil)
	h.mustSettle("machines", m.ID, "HALTED")

	body := string(h.do(http.MethodGet, "/metrics", nil).Body)
	if !strings.Contains(body, `lifecyclesim_transitions_total{action="stop",kind="machine",outcome="healed"} 1`) {
		t.Errorf("/metrics does not count the healed stop:\n%s", grepLines(body, "transitions_total"))
	}
	if strings.Contains(body, `lifecyclesim_transitions_total{action="stop",kind="machine",outcome="failed"}`) {
		t.Errorf("/metrics counts the healed stop as failed too:\n%s", grepLines(body, "transitions_total"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestFaultSlow(t *testing.T) {
	h := newTestServer(t, harnessOptions{timeScale: 0.5})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.addFault(client.FaultRule{Kind: "machine", Action: "stop", Mode: wire.FaultSlow, Factor: 10})
	now := h.manual.Now()
	o := h.act("machines", m.ID, "stop", nil)
	if want := now.Add(10 * time.Second); !o.Operation.DueAt.Equal(want) {
		t.Errorf("slow stop due at %v, want %v (2s × 0.5 × 10)", o.Operation.DueAt, want)
	}
	h.advance(9 * time.Second)
	if o = h.get("machines", m.ID); o.State != "STOPPING" {
		t.Errorf("slow stop after 9s = %s, want STOPPING", o.State)
	}
	h.advance(time.Second)
	if o = h.get("machines", m.ID); o.State != "HALTED" {
		t.Errorf("slow stop after 10s = %s, want HALTED", o.State)
	}
	// Other actions keep their pace.
	now = h.manual.Now()
	if o = h.act("machines", m.ID, "start", nil); !o.Operation.DueAt.Equal(now.Add(time.Second)) {
		t.Errorf("start due at %v, want %v", o.Operation.DueAt, now.Add(time.Second))
	}
}

func TestFaultHTTPError(t *testing.T) {
	h := newTestServer(t, harnessOptions{metrics: true})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")

	f := h.addFault(client.FaultRule{Kind: "machine", Mode: wire.FaultHTTPError, HTTPStatus: 503, Message: "maintenance"})
	d := wantAPIError(t, h.do(http.MethodGet, objPath("machines", m.ID), nil), http.StatusServiceUnavailable, client.CodeUnavailable)
	if d.Message != "maintenance" {
		t.Errorf("message = %q", d.Message)
	}
	wantAPIError(t, h.do(http.MethodGet, "/v1/machines", nil), http.StatusServiceUnavailable, client.CodeUnavailable)
	wantAPIError(t, h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", nil), http.StatusServiceUnavailable, client.CodeUnavailable)
	// Other kinds and the rest of the API are unaffected.
	h.get("cloudspaces", cs.ID)
	wantStatus(t, h.do(http.MethodGet, "/v1/kinds", nil), "GET /v1/kinds", http.StatusOK)
	wantStatus(t, h.do(http.MethodGet, "/v1/sim/faults", nil), "GET /v1/sim/faults", http.StatusOK)
	// The refused action did not run.
	h.do(http.MethodDelete, "/v1/sim/faults/"+f.ID, nil)
	if o := h.get("machines", m.ID); o.State != "RUNNING" {
		t.Errorf("machine is %s after a refused stop", o.State)
	}

	// An action-specific rule with its own code and a count.
	h.addFault(client.FaultRule{Kind: "machine", Action: "reboot", Mode: wire.FaultHTTPError, HTTPStatus: 429, Count: 2})
	h.act("machines", m.ID, "pause", nil)
	h.mustSettle("machines", m.ID, "PAUSED")
	for range 2 {
		r := h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/reboot", nil)
		wantAPIError(t, r, http.StatusTooManyRequests, client.CodeRateLimited)
		if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("429 Retry-After = %q", r.Header.Get("Retry-After"))
		}
	}
	h.act("machines", m.ID, "reboot", nil)
	h.mustSettle("machines", m.ID, "RUNNING")

	// A status with a code of the rule's choosing.
	h.addFault(client.FaultRule{Kind: "cloudspace", Mode: wire.FaultHTTPError, HTTPStatus: 500, Code: "internal"})
	wantAPIError(t, h.do(http.MethodGet, objPath("cloudspaces", cs.ID), nil), http.StatusInternalServerError, client.CodeInternal)

	// The request metrics record the status answered, not the code's.
	body := string(h.do(http.MethodGet, "/metrics", nil).Body)
	for _, want := range []string{
		`lifecyclesim_http_request_duration_seconds_count{code="503",method="GET",route="/v1/:collection/:id"} 1`,
		`lifecyclesim_http_request_duration_seconds_count{code="429",method="POST",route="/v1/:collection/:id/actions/:action"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(body, "_count"))
		}
	}
}

func TestFaultDropSkipsPhase(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	cl := h.create("cloudlets", client.CreateRequest{Name: "edge"})
	h.mustSettle("cloudlets", cl.ID, "Ready")

	h.addFault(client.FaultRule{Kind: "cluster_inst", Action: "create", Mode: wire.FaultDrop, Count: 1})
	ci := h.create("cluster_insts", client.CreateRequest{Name: "k8s", ParentID: cl.ID})
	h.mustSettle("cluster_insts", ci.ID, "Ready")
	if got, want := eventStates(h.events("cluster_insts", ci.ID)), []string{"NotPresent", "CreateRequested", "Ready"}; !slices.Equal(got, want) {
		t.Errorf("create with a lost CRM message went %v, want %v", got, want)
	}
	// Without the (spent) fault every phase runs.
	ci2 := h.create("cluster_insts", client.CreateRequest{Name: "k8s-2", ParentID: cl.ID})
	h.mustSettle("cluster_insts", ci2.ID, "Ready")
	if got, want := eventStates(h.events("cluster_insts", ci2.ID)), []string{"NotPresent", "CreateRequested", "Creating", "Ready"}; !slices.Equal(got, want) {
		t.Errorf("create went %v, want %v", got, want)
	}
	// A drop never skips a phase that is not skippable.
	h.addFault(client.FaultRule{Kind: "cluster_inst", Action: "delete", Mode: wire.FaultDrop})
	h.do(http.MethodDelete, objPath("cluster_insts", ci2.ID), nil)
	if _, exists := h.settle("cluster_insts", ci2.ID); exists {
		t.Fatal("deleted cluster_inst still exists")
	}
	if got, want := eventStates(h.events("cluster_insts", ci2.ID))[3:], []string{"Ready", "DeletePrepare", "DeleteRequested", "NotPresent"}; !slices.Equal(got, want) {
		t.Errorf("delete with lost messages went %v, want %v", got, want)
	}
}

func TestFaultProbabilityAndCount(t *testing.T) {
	draw := func(seed uint64) []bool {
		f := engine.NewFaults(seed)
		if _, err := f.Add(t.Context(), "", client.FaultRule{Mode: wire.FaultFail, Probability: 0.5}); err != nil {
			t.Fatal(err)
		}
		out := make([]bool, 200)
		for i := range out {
			out[i] = f.Match(t.Context(), wire.FaultFail, "", "machine", "stop", "STOPPING") != nil
		}
		return out
	}
	a, b := draw(42), draw(42)
	if !slices.Equal(a, b) {
		t.Error("the same seed drew different fault sequences")
	}
	if slices.Equal(a, draw(43)) {
		t.Error("different seeds drew the same 200 draws")
	}
	fired := 0
	for _, x := range a {
		if x {
			fired++
		}
	}
	if fired < 70 || fired > 130 {
		t.Errorf("probability 0.5 fired %d times in 200", fired)
	}

	f := engine.NewFaults(1)
	r, err := f.Add(t.Context(), "", client.FaultRule{Mode: wire.FaultFail, Kind: "machine", Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range 10 {
		if f.Match(t.Context(), wire.FaultFail, "", "machine", "stop", "STOPPING") != nil {
			n++
		}
		if f.Match(t.Context(), wire.FaultFail, "", "disk", "attach", "ATTACHING") != nil {
			t.Error("a machine rule matched a disk")
		}
		if f.Match(t.Context(), wire.FaultHang, "", "machine", "stop", "STOPPING") != nil {
			t.Error("a fail rule matched as a hang")
		}
	}
	if rules, err := f.List(t.Context(), ""); err != nil || n != 3 || rules[0].Fired != 3 || rules[0].ID != r.ID {
		t.Errorf("a count-3 rule fired %d times (listed %+v, %v), want 3", n, rules, err)
	}
	// probability 1 always fires; 0 means always too (unset).
	f = engine.NewFaults(1)
	f.Add(t.Context(), "", client.FaultRule{Mode: wire.FaultDrop, Probability: 1})
	for range 20 {
		if f.Match(t.Context(), wire.FaultDrop, "", "k", "a", "p") == nil {
			t.Fatal("probability 1 did not fire")
		}
	}

	// Through the engine: a seeded probability picks the same failures on every run.
	run := func() []string {
		h := newTestServer(t, harnessOptions{seed: 7})
		_, cs := h.openvcloud()
		m := h.runningMachine(cs.ID, "web")
		h.addFault(client.FaultRule{Kind: "machine", Action: "reboot", Mode: wire.FaultFail, Probability: 0.5})
		var out []string
		for range 12 {
			h.act("machines", m.ID, "reboot", nil)
			o := h.mustSettle("machines", m.ID, "RUNNING")
			if o.Status["last_error"] != nil {
				out = append(out, "failed")
			} else {
				out = append(out, "ok")
			}
		}
		return out
	}
	first := run()
	if again := run(); !slices.Equal(first, again) {
		t.Errorf("seeded runs differ: %v vs %v", first, again)
	}
	if !slices.Contains(first, "failed") || !slices.Contains(first, "ok") {
		t.Errorf("12 reboots at probability 0.5 went %v", first)
	}

	// A counted fail fires exactly count times.
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	fr := h.addFault(client.FaultRule{Kind: "machine", Action: "reboot", Mode: wire.FaultFail, Count: 2})
	var got []bool
	for range 4 {
		h.act("machines", m.ID, "reboot", nil)
		got = append(got, h.mustSettle("machines", m.ID, "RUNNING").Status["last_error"] != nil)
	}
	if !slices.Equal(got, []bool{true, true, false, false}) {
		t.Errorf("reboots failed %v, want the first two", got)
	}
	if f := h.fault(fr.ID); f.Fired != 2 {
		t.Errorf("fired = %d, want 2", f.Fired)
	}
}

// TestFaultCountUnderConcurrency fires many conflicting actions at an object with a one-shot
// fault: the fault must go to the action that was accepted, not to one that lost the race.
func TestFaultCountUnderConcurrency(t *testing.T) {
	for _, sqlite := range []bool{false, true} {
		t.Run("sqlite="+strconv.FormatBool(sqlite), func(t *testing.T) {
			var store store.Store = memstore.New()
			if sqlite {
				store, _ = openTestSQLite(t)
			}
			// Slow reads widen the window between reading an object and writing it back, so
			// requests that will lose the compare-and-set get far.
			opt := harnessOptions{store: slowReadStore{store, new(atomic.Int64)}}
			h := newTestServer(t, opt)
			_, cs := h.openvcloud()
			kind, _ := h.engine.Registry().Kind("machine")
			for round := range 8 {
				m := h.runningMachine(cs.ID, "web-"+strconv.Itoa(round))
				f := h.addFault(client.FaultRule{Kind: "machine", Action: "stop", Mode: wire.FaultHang, Count: 1})
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range 30 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						if i%5 != 0 { // mostly straight at the engine, where the window is widest
							_, _ = h.engine.Act(context.Background(), "", kind, m.ID, "stop", client.ActionRequest{}, "")
							return
						}
						if _, err := h.request(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", nil); err != nil {
							t.Error(err)
						}
					}()
				}
				close(start)
				wg.Wait()
				if got := h.fault(f.ID).Fired; got != 1 {
					t.Errorf("round %d: one-shot fault fired %d times", round, got)
				}
				o := h.get("machines", m.ID)
				if o.State != "STOPPING" || o.Operation == nil || !o.Operation.DueAt.IsZero() {
					t.Errorf("round %d: the accepted stop is %s due %v, want it hanging (the fault went to a request that lost the race)", round, o.State, o.Operation)
				}
				h.do(http.MethodDelete, "/v1/sim/faults/"+f.ID, nil)
			}
		})
	}
}

// slowReadStore pauses after every read of an object, and for a varying while before every
// write, so the request that reads first is not always the one that writes first.
type slowReadStore struct {
	store.Store
	writes *atomic.Int64
}

func (s slowReadStore) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	o, err := s.Store.Get(ctx, tenant, id)
	time.Sleep(200 * time.Microsecond)
	return o, err
}

func (s slowReadStore) Commit(ctx context.Context, b store.Batch) error {
	time.Sleep(time.Duration(s.writes.Add(7)%5) * 100 * time.Microsecond)
	return s.Store.Commit(ctx, b)
}
