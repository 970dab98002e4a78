package simulator

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
)

// linesOf keeps the log lines with message msg.
func linesOf(lines []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// scrape reads /metrics.
func scrape(t *testing.T, sim *simtest.Sim) string {
	t.Helper()
	resp, err := http.Get(sim.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestObservability runs a cloudspace through a landing, an injected failure, a held
// long-poll and an overdue phase, and checks what the logs and /metrics say of each: one
// "transition landed" line per operation, the user agent and idempotency key in request lines,
// build info, held requests per tenant against their limit, fault firings, overdue objects.
func TestObservability(t *testing.T) {
	ctx := context.Background()
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	clock := engine.NewManualClock(harnessT0)
	sim := simtest.Start(t, simtest.WithClock(clock), simtest.WithoutWorker(), simtest.WithTimeScale(1), simtest.WithMetrics(),
		simtest.WithTokens(map[string]string{"tok-a": "acme", "tok-b": "beta"}),
		simtest.WithEngineOptions(func(o *engine.Options) { o.Logger = log }),
		simtest.WithServerOptions(func(o *httpapi.ServerOptions) { o.Logger = log }))
	cl, err := client.New(client.Config{Endpoint: sim.URL, Token: "tok-a", UserAgent: "observe-test/1.0"})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := cl.Create(ctx, "accounts", client.CreateRequest{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := cl.Create(ctx, "cloudspaces", client.CreateRequest{Name: "net", ParentID: acct.ID})
	if err != nil {
		t.Fatal(err)
	}

	// A long-poll on the deploying cloudspace is held until it lands: the gauge counts it for
	// its tenant, and the other tenant's series reads 0.
	polled := make(chan error, 1)
	go func() {
		_, err := cl.WaitStatic(ctx, "cloudspaces", cs.ID, client.WaitOptions{PollTimeout: 50 * time.Second})
		polled <- err
	}()
	simtest.Eventually(t, 30*time.Second, "the long-poll held in lifecyclesim_held_requests", func() bool {
		return strings.Contains(scrape(t, sim), `lifecyclesim_held_requests{tenant="acme",type="wait"} 1`)
	})
	m := scrape(t, sim)
	for _, want := range []string{
		`lifecyclesim_held_requests{tenant="beta",type="wait"} 0`,
		`lifecyclesim_held_requests{tenant="acme",type="stream"} 0`,
		`lifecyclesim_held_requests_limit{type="wait"} 256`,
		`lifecyclesim_held_requests_limit{type="stream"} 16`,
		`lifecyclesim_build_info{go_version="` + runtime.Version() + `",version="simtest"} 1`,
		`lifecyclesim_objects_overdue 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(m, "lifecyclesim_"))
		}
	}

	// The deploy phase (2 s) is 10 s overdue while the worker does not run: overdue counts
	// it until the engine advances it.
	clock.Advance(2*time.Second + engine.OverdueAfter + 3*time.Second)
	if m := scrape(t, sim); !strings.Contains(m, "lifecyclesim_objects_overdue 1\n") {
		t.Errorf("/metrics does not count the overdue cloudspace:\n%s", grepLines(m, "overdue"))
	}
	sim.Advance(t, 0)
	if err := <-polled; err != nil {
		t.Fatalf("the long-poll: %v", err)
	}
	m = scrape(t, sim)
	for _, want := range []string{"lifecyclesim_objects_overdue 0\n", `lifecyclesim_held_requests{tenant="acme",type="wait"} 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("once the cloudspace landed, /metrics lacks %s", want)
		}
	}

	// A failed disable rolls back: a fault firing is counted, and the landing says failed.
	if _, err := cl.AddFault(ctx, client.FaultRule{Kind: "cloudspace", Action: "disable", Mode: "fail"}); err != nil {
		t.Fatal(err)
	}
	dis, err := cl.Act(ctx, "cloudspaces", cs.ID, "disable", client.ActionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	sim.Advance(t, 2*time.Second)
	if o, err := cl.Get(ctx, "cloudspaces", cs.ID); err != nil || o.State != "DEPLOYED" || !o.Static {
		t.Fatalf("after the failed disable the cloudspace is %+v (%v), want DEPLOYED", o, err)
	}
	m = scrape(t, sim)
	for _, want := range []string{
		`lifecyclesim_fault_firings_total{action="disable",kind="cloudspace",mode="fail"} 1`,
		`lifecyclesim_transitions_total{action="disable",kind="cloudspace",outcome="failed"} 1`,
		`lifecyclesim_transitions_total{action="deploy",kind="cloudspace",outcome="succeeded"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(m, "lifecyclesim_"))
		}
	}

	// One "transition landed" line per operation, naming all of it.
	landed := linesOf(logs.lines(t), "transition landed")
	byOp := map[string][]map[string]any{}
	for _, l := range landed {
		byOp[l["operation_id"].(string)] = append(byOp[l["operation_id"].(string)], l)
	}
	tests := []struct {
		name string
		op   string
		want map[string]any
	}{
		{"deploy", cs.Operation.ID, map[string]any{"tenant": "acme", "kind": "cloudspace", "id": cs.ID, "from": "VIRTUAL", "to": "DEPLOYED",
			"phase": "DEPLOYING", "action": "deploy", "actor": "system", "outcome": "succeeded", "level": "INFO"}},
		{"failed disable", dis.Operation.ID, map[string]any{"tenant": "acme", "kind": "cloudspace", "id": cs.ID, "from": "DEPLOYED", "to": "DEPLOYED",
			"phase": "DISABLING", "action": "disable", "outcome": "failed"}},
	}
	for _, tt := range tests {
		got := byOp[tt.op]
		if len(got) != 1 {
			t.Errorf("%s: %d landing lines for operation %s, want 1: %v", tt.name, len(got), tt.op, landed)
			continue
		}
		for k, v := range tt.want {
			if got[0][k] != v {
				t.Errorf("%s: landing line %s = %v, want %v (line %v)", tt.name, k, got[0][k], v, got[0])
			}
		}
	}

	// Request lines carry the user agent and the create's idempotency key.
	var creates int
	for _, l := range linesOf(logs.lines(t), "request") {
		if l["method"] != http.MethodPost || l["path"] != "/v1/cloudspaces" {
			continue
		}
		creates++
		if l["user_agent"] != "observe-test/1.0" {
			t.Errorf("request line user_agent = %v, want observe-test/1.0: %v", l["user_agent"], l)
		}
		if k, _ := l["idempotency_key"].(string); k == "" {
			t.Errorf("the create's request line has no idempotency_key: %v", l)
		}
	}
	if creates != 1 {
		t.Errorf("%d request lines for the cloudspace's create, want 1", creates)
	}
}

// TestLandingCountedOnce: a worker step that loses its commit (another writer changed the
// object first) and lands on its next try is counted and logged once, for the commit that
// landed it.
func TestLandingCountedOnce(t *testing.T) {
	ctx := context.Background()
	st := &faultyStore{Store: memstore.New()}
	logs := &syncBuffer{}
	var mu sync.Mutex
	counted := map[string]int{}
	clock := engine.NewManualClock(harnessT0)
	e := engine.New(st, lifecycle.Builtin(), clock, engine.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		OnTransition: func(kind, action, outcome string) {
			mu.Lock()
			defer mu.Unlock()
			counted[kind+" "+action+" "+outcome]++
		}})
	acct, err := e.Create(ctx, "", mustKind(t, e, "account"), client.CreateRequest{Name: "a"}, "")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := e.Create(ctx, "", mustKind(t, e, "cloudspace"), client.CreateRequest{Name: "n", ParentID: acct.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	st.fail(nil, store.ErrVersion, nil)
	_ = e.Tick(ctx) // the landing's commit loses
	st.fail(nil, nil, nil)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if o, err := e.Get(ctx, "", mustKind(t, e, "cloudspace"), cs.ID); err != nil || o.State != "DEPLOYED" {
		t.Fatalf("the cloudspace is %+v (%v), want DEPLOYED", o, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := counted["cloudspace deploy succeeded"]; n != 1 {
		t.Errorf("the deploy was counted %d times, want 1: %v", n, counted)
	}
	var lines int
	for _, l := range linesOf(logs.lines(t), "transition landed") {
		if l["id"] == cs.ID {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("the deploy was logged %d times, want 1", lines)
	}
}

func mustKind(t *testing.T, e *engine.Engine, name string) *lifecycle.Kind {
	t.Helper()
	k, err := e.Registry().Kind(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
