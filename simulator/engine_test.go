package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// TestIdempotentCreateConcurrent sends one create many times at once with the same key (a
// client retrying a slow first attempt): one object is made and every answer names it.
func TestIdempotentCreateConcurrent(t *testing.T) {
	h := newTestServer(t, harnessOptions{store: slowReadStore{memstore.New(), new(atomic.Int64)}})
	acct := h.create("accounts", client.CreateRequest{Name: "acme"})
	k, _ := h.engine.Registry().Kind("cloudspace")
	var wg sync.WaitGroup
	var mu sync.Mutex
	made := map[string]bool{}
	start := make(chan struct{})
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var id string
			if i%2 == 0 {
				o, err := h.engine.Create(context.Background(), "", k, client.CreateRequest{Name: "net", ParentID: acct.ID}, "retry-key")
				if err != nil {
					t.Error(err)
					return
				}
				id = o.ID
			} else {
				r, err := h.request(http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "net", ParentID: acct.ID}, "Idempotency-Key", "retry-key")
				if err != nil || r.Status != http.StatusAccepted {
					t.Errorf("POST = %v, %v", r, err)
					return
				}
				id = decodeAs[client.Object](t, r).ID
			}
			mu.Lock()
			made[id] = true
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	l := decodeAs[client.ObjectList](t, h.do(http.MethodGet, "/v1/cloudspaces", nil))
	if len(made) != 1 || len(l.Items) != 1 {
		t.Errorf("20 creates with one key answered %d objects and made %d, want 1", len(made), len(l.Items))
	}
}

// TestIdempotentActionConcurrent sends one action many times at once with the same key: the
// retries answer the operation the first attempt started, not busy.
func TestIdempotentActionConcurrent(t *testing.T) {
	h := newTestServer(t, harnessOptions{store: slowReadStore{memstore.New(), new(atomic.Int64)}})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	var wg sync.WaitGroup
	var mu sync.Mutex
	ops := map[string]int{}
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := h.request(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", nil, "Idempotency-Key", "stop-once")
			if err != nil || r.Status != http.StatusAccepted {
				t.Errorf("POST stop = %v, %v, want 202", r, err)
				return
			}
			o := decodeAs[client.Object](t, r)
			mu.Lock()
			ops[o.Operation.ID]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(ops) != 1 {
		t.Errorf("retries of one action answered operations %v, want one", ops)
	}
	// The key replays only for its object; another key on a busy object is busy.
	wantAPIError(t, h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", nil, "Idempotency-Key", "other"), http.StatusConflict, client.CodeBusy)
}

// TestIdempotentKeyAcrossEngines: two engines over one store (two replicas, without the
// PostgreSQL a real pair shares) get each key's create, then its action, at the same moment:
// each key makes one object and starts one operation, and both answer with it. The per-process
// lock cannot order them; the key's claim in the commit does.
func TestIdempotentKeyAcrossEngines(t *testing.T) {
	st := slowReadStore{memstore.New(), new(atomic.Int64)}
	sims := []*simtest.Sim{simtest.Start(t, simtest.WithStore(st), simtest.WithoutWorker()),
		simtest.Start(t, simtest.WithStore(st), simtest.WithoutWorker())}
	both := func(path, key string, body any) []client.Object {
		out := make([]client.Object, len(sims))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, sim := range sims {
			wg.Go(func() {
				<-start
				b, _ := json.Marshal(body)
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, sim.URL+path, bytes.NewReader(b))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					t.Errorf("POST %s on replica %d = %d, want 2xx", path, i, resp.StatusCode)
					return
				}
				if err := json.NewDecoder(resp.Body).Decode(&out[i]); err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		return out
	}
	const keys = 30
	for i := range keys {
		key := "key-" + strconv.Itoa(i)
		made := both("/v1/accounts", key, client.CreateRequest{Name: key})
		if made[0].ID != made[1].ID {
			t.Errorf("%s: the replicas answered objects %s and %s, want one", key, made[0].ID, made[1].ID)
			continue
		}
		started := both("/v1/accounts/"+made[0].ID+"/actions/disable", key, map[string]any{})
		if started[0].Operation == nil || started[1].Operation == nil || started[0].Operation.ID != started[1].Operation.ID {
			t.Errorf("%s: the replicas answered operations %+v and %+v, want one", key, started[0].Operation, started[1].Operation)
		}
	}
	objs, err := st.List(t.Context(), "", store.Filter{Kind: "account"})
	if err != nil || len(objs) != keys {
		t.Errorf("%d keys made %d accounts (%v), want %d", keys, len(objs), err, keys)
	}
}

// TestTickSkipsBrokenObjects restarts onto a store holding an object of a kind no longer
// loaded: Tick reports it, and the other objects still move on.
func TestTickSkipsBrokenObjects(t *testing.T) {
	reg := lifecycle.Builtin()
	gizmos, err := lifecycle.Parse("gizmos.yaml", []byte(`
kinds:
  - name: gizmo
    family: test
    collection: gizmos
    states: {static: [OFF, ON], transition: [BOOTING]}
    failure: {to: OFF}
    create: {via: [BOOTING], to: ON}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(gizmos...); err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	clock := engine.NewManualClock(harnessT0)
	h := newTestServer(t, harnessOptions{store: store, reg: reg, clock: clock})
	_, cs := h.openvcloud()
	// Make the gizmo due first, so a worker that stops at the first error never gets further.
	g := h.create("gizmos", client.CreateRequest{Name: "g"})
	m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID})
	m2 := h.create("machines", client.CreateRequest{Name: "web2", ParentID: cs.ID})
	_ = g

	h2 := newTestServer(t, harnessOptions{store: store, clock: clock}) // built-in kinds only
	clock.Advance(time.Minute)
	err = h2.engine.Tick(context.Background())
	if err == nil || !strings.Contains(err.Error(), "gizmo") {
		t.Errorf("Tick = %v, want an error naming the gizmo", err)
	}
	for _, id := range []string{m.ID, m2.ID} {
		if o := h2.get("machines", id); o.State != "RUNNING" {
			t.Errorf("machine %s = %s after Tick, want RUNNING despite the broken gizmo", id, o.State)
		}
	}
}

// TestCascadeOnlyOnChange: an action that fails back to where it started does not fire the
// cascades of that state again.
func TestCascadeOnlyOnChange(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	d := h.attachedDisk(acct.ID, m.ID)
	h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=delete", nil)
	h.mustSettle("machines", m.ID, "DELETED")
	h.mustSettle("disks", d.ID, "TOBEDELETED")
	// Put the disk back to ASSIGNED behind the API's back (the API refuses to attach to a
	// deleted machine), so a wrongly re-fired cascade would show.
	ctx := context.Background()
	stored, err := h.store.Get(ctx, "", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	prev := stored.Version
	stored.State, stored.Version = "ASSIGNED", prev+1
	if err := updateObject(ctx, h.store, stored, prev, nil, ""); err != nil {
		t.Fatal(err)
	}
	// A failed destroy rolls the machine back to DELETED: the disk stays where it is.
	h.addFault(client.FaultRule{Kind: "machine", Action: "destroy", Mode: wire.FaultFail})
	h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=destroy", nil)
	h.mustSettle("machines", m.ID, "DELETED")
	if o := h.get("disks", d.ID); o.State != "ASSIGNED" {
		t.Errorf("disk = %s after the machine's destroy rolled back, want ASSIGNED", o.State)
	}
}

func TestEngineSetConfigErrors(t *testing.T) {
	e := engine.New(memstore.New(), lifecycle.Builtin(), engine.NewManualClock(harnessT0), engine.Options{})
	if scale, heal := e.Config(); scale != 1 || heal != 10*time.Minute {
		t.Errorf("defaults = %v, %v, want 1 and 10m", scale, heal)
	}
	for _, tt := range []struct {
		scale float64
		heal  time.Duration
	}{{0, time.Minute}, {-1, time.Minute}, {1, 0}, {1, -time.Second}} {
		if err := e.SetConfig(t.Context(), tt.scale, tt.heal); !client.HasCode(toClientError(err), client.CodeInvalid) {
			t.Errorf("SetConfig(%v, %v) = %v, want invalid", tt.scale, tt.heal, err)
		}
	}
}

// toClientError turns an engine error into the client's type, for its code helpers.
func toClientError(err error) error {
	if err == nil {
		return nil
	}
	ae := engine.AsError(err)
	return &client.Error{Status: wire.StatusOf(ae.Code), Code: ae.Code, Message: ae.Message}
}

// TestLongPollLeavesNoWatchers: long-polls that return (static object, unknown object, timeout)
// leave nothing registered behind; /metrics counts the one waiting, then none.
func TestLongPollLeavesNoWatchers(t *testing.T) {
	h := newTestServer(t, harnessOptions{metrics: true})
	longPolls := func() string {
		for line := range strings.Lines(string(h.do(http.MethodGet, "/metrics", nil).Body)) {
			if v, ok := strings.CutPrefix(line, "lifecyclesim_long_polls "); ok {
				return strings.TrimSpace(v)
			}
		}
		return "missing"
	}
	acct, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.act("machines", m.ID, "stop", nil)
	h.do(http.MethodGet, objPath("accounts", acct.ID)+"?wait=static&timeout=1s", nil)
	h.do(http.MethodGet, objPath("accounts", "account-0000000000000000")+"?wait=static&timeout=1s", nil)
	h.do(http.MethodGet, objPath("machines", m.ID)+"?wait=static&timeout=1ms", nil) // times out: the clock is manual
	if n := h.engine.LongPolls(); n != 0 {
		t.Errorf("%d long-polls still waiting after every long-poll returned", n)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.do(http.MethodGet, objPath("machines", m.ID)+"?wait=static&timeout=60s", nil)
	}()
	simtest.Eventually(t, time.Minute, "/metrics counting the waiting long-poll", func() bool { return longPolls() == "1" })
	h.advance(time.Hour) // the machine lands: the long-poll answers
	<-done
	if got := longPolls(); got != "0" {
		t.Errorf("lifecyclesim_long_polls = %s once every long-poll returned, want 0", got)
	}
}

// TestCascadeFinishedAfterCrash: a machine's landing was written with its cascade still to do
// when the simulator stopped; the next worker round applies it and clears the record.
func TestCascadeFinishedAfterCrash(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	d := h.attachedDisk(acct.ID, m.ID)

	// The state a crash right after the machine's landing leaves behind.
	ctx := context.Background()
	stored, err := h.store.Get(ctx, "", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	prev := stored.Version
	stored.State, stored.CascadeFrom, stored.Due, stored.Version = "DELETED", "RUNNING", h.clock.Now(), prev+1
	if err := updateObject(ctx, h.store, stored, prev, nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := h.engine.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if o := h.get("disks", d.ID); o.State != "TOBEDELETED" {
		t.Errorf("disk = %s after the worker's round, want TOBEDELETED", o.State)
	}
	after, err := h.store.Get(ctx, "", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.CascadeFrom != "" || after.State != "DELETED" {
		t.Errorf("machine after the round: state %s, cascade %q; want DELETED with nothing pending", after.State, after.CascadeFrom)
	}
}

// staleOnceStore answers the next read of one object with an older copy of it, as a replica
// reads an object just before another replica's worker lands it.
type staleOnceStore struct {
	store.Store
	stale atomic.Pointer[store.Object]
}

func (s *staleOnceStore) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	if o := s.stale.Load(); o != nil && o.ID == id && s.stale.CompareAndSwap(o, nil) {
		return o, nil
	}
	return s.Store.Get(ctx, tenant, id)
}

// A DELETE racing with a deletion that lands between its first read and its step answers as
// a DELETE of an object in the recycle bin does (200), not 422 "delete is not allowed from
// DELETED": found by the kill -9 run of replicas (porcupine, reliability.TestReplicasKill).
func TestDeleteRacingALandedDeletion(t *testing.T) {
	st := &staleOnceStore{Store: memstore.New()}
	h := newTestServer(t, harnessOptions{store: st})
	_, cs := h.openvcloud()
	before, err := st.Store.Get(t.Context(), "", cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	r := h.do(http.MethodDelete, objPath("cloudspaces", cs.ID)+"?mode=delete", nil)
	wantStatus(t, r, "first DELETE", http.StatusAccepted)
	h.mustSettle("cloudspaces", cs.ID, "DELETED")

	st.stale.Store(before) // the second DELETE reads the DEPLOYED cloudspace first
	r = h.do(http.MethodDelete, objPath("cloudspaces", cs.ID)+"?mode=delete", nil)
	wantStatus(t, r, "DELETE after a deletion landed", http.StatusOK)
	if o := decodeAs[client.Object](t, r); o.State != "DELETED" || o.Operation != nil {
		t.Errorf("DELETE after a deletion landed = %s (operation %+v), want DELETED at rest", o.State, o.Operation)
	}
}
