package simulator

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
)

// raceActions are fired at one machine: most conflict, some are not allowed from where it is.
var raceActions = []string{"stop", "pause", "reboot", "reset", "clone", "start", "resume", "restore", "attach_disk", "delete"}

func TestConflictingActionsMemStore(t *testing.T) {
	testConflictingActions(t, memstore.New())
}

func TestConflictingActionsSQLite(t *testing.T) {
	s, _ := openTestSQLite(t)
	testConflictingActions(t, s)
}

// testConflictingActions fires 50 concurrent actions at one machine, round after round: one is
// accepted per static state, the others are refused as busy or invalid_transition, and the
// history stays gapless and consistent. Then it does the same while the worker runs.
func testConflictingActions(t *testing.T, store store.Store) {
	h := newTestServer(t, harnessOptions{store: store})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "target")
	kind, _ := h.engine.Registry().Kind("machine")
	const workers = 50

	var accepted int64 = 1 // the deploy
	fire := func(round int) (ok []string, refused map[client.Code]int, errs []string) {
		var mu sync.Mutex
		refused = map[client.Code]int{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				action := raceActions[(i+round)%len(raceActions)]
				r, err := h.request(http.MethodPost, objPath("machines", m.ID)+"/actions/"+action, nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, err.Error())
				case r.Status == http.StatusAccepted:
					ok = append(ok, action)
				default:
					var body client.ErrorBody
					if decodeErr := json.Unmarshal(r.Body, &body); decodeErr != nil {
						errs = append(errs, r.String())
						return
					}
					refused[client.Code(body.Error.Code)]++
				}
			}()
		}
		close(start)
		wg.Wait()
		return ok, refused, errs
	}

	for round := range 8 {
		before := h.get("machines", m.ID)
		ok, refused, errs := fire(round)
		if len(errs) > 0 {
			t.Fatalf("round %d: unexpected answers: %v", round, errs)
		}
		if len(ok) != 1 {
			t.Fatalf("round %d from %s: %d actions accepted (%v), want exactly 1", round, before.State, len(ok), ok)
		}
		accepted++
		for code, n := range refused {
			if code != client.CodeBusy && code != client.CodeInvalidTransition {
				t.Errorf("round %d: %d refusals with code %s, want only busy or invalid_transition", round, n, code)
			}
		}
		if refused[client.CodeBusy]+refused[client.CodeInvalidTransition] != workers-1 {
			t.Errorf("round %d: refusals %v, want %d", round, refused, workers-1)
		}
		o := h.get("machines", m.ID)
		if o.Operation == nil || o.Operation.Action != ok[0] || o.Version != before.Version+1 {
			t.Errorf("round %d: accepted %s but the machine runs %+v at version %d (was %d)", round, ok[0], o.Operation, o.Version, before.Version)
		}
		final, exists := h.settle("machines", m.ID)
		if !exists || !kind.IsStatic(final.State) || kind.IsGone(final.State) {
			t.Fatalf("round %d: machine settled in %q (exists %v)", round, final.State, exists)
		}
	}
	checkRaceHistory(t, h, kind, m.ID, accepted)

	// Again while the worker completes phases concurrently: several actions may now be accepted
	// in a round, but never two at once.
	ctx, cancel := context.WithCancel(context.Background())
	var tickErr atomic.Value
	ticking := make(chan struct{})
	go func() {
		defer close(ticking)
		for ctx.Err() == nil {
			h.manual.Advance(700 * time.Millisecond)
			if err := h.engine.Tick(ctx); err != nil && ctx.Err() == nil {
				tickErr.Store(err)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	for round := range 8 {
		ok, refused, errs := fire(round)
		if len(errs) > 0 {
			t.Errorf("concurrent round %d: unexpected answers: %v", round, errs)
		}
		for code := range refused {
			if code != client.CodeBusy && code != client.CodeInvalidTransition {
				t.Errorf("concurrent round %d: refusals with code %s", round, code)
			}
		}
		accepted += int64(len(ok))
	}
	cancel()
	<-ticking
	if err := tickErr.Load(); err != nil {
		t.Errorf("Tick during the race = %v", err)
	}
	if final, exists := h.settle("machines", m.ID); !exists || !kind.IsStatic(final.State) {
		t.Fatalf("machine settled in %q (exists %v)", final.State, exists)
	}
	checkRaceHistory(t, h, kind, m.ID, accepted)
}

// checkRaceHistory checks the machine's history: gapless, chained, only the kind's states, and
// one operation per accepted request, none overlapping.
func checkRaceHistory(t *testing.T, h *harness, kind *lifecycle.Kind, id string, accepted int64) {
	t.Helper()
	evs := h.events("machines", id)
	checkEventLog(t, evs)
	ops := map[string]bool{}
	running := ""
	for _, e := range evs {
		if !kind.HasState(e.To) {
			t.Errorf("event %d goes to %q, not a machine state", e.Seq, e.To)
		}
		if e.OperationID == "" {
			continue
		}
		if !ops[e.OperationID] {
			ops[e.OperationID] = true
			if running != "" {
				t.Errorf("event %d starts operation %s while %s still runs", e.Seq, e.OperationID, running)
			}
			if e.Actor != "user" || !kind.IsStatic(e.From) && e.From != kind.Initial {
				t.Errorf("operation %s starts with %+v, want a user action from a static state", e.OperationID, e)
			}
			running = e.OperationID
		} else if e.OperationID != running {
			t.Errorf("event %d belongs to operation %s, but %s is the one running", e.Seq, e.OperationID, running)
		}
		if kind.IsStatic(e.To) {
			running = ""
		}
	}
	if int64(len(ops)) != accepted {
		t.Errorf("history has %d operations, but %d requests were accepted", len(ops), accepted)
	}
}
