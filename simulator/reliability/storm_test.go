package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// stormIn is one call of a storm: an action, or a read when action is "".
type stormIn struct{ action string }

// stormOut is what the server answered.
type stormOut struct {
	status int
	state  string
}

// objState is the model's object: its state, and whether an action runs on it.
type objState struct {
	state string
	busy  bool
}

// stormModel is the sequential specification of one object within a storm (the clock stands
// still, so nothing lands): an action on a busy object is busy (409); on a static one it is
// accepted (202) exactly when the state machine allows it, and then the object is busy in the
// state answered; otherwise it is invalid_transition (422). A read sees the current state.
func stormModel(k *lifecycle.Kind) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return nil }, // each partition's initial state comes from its first read
		Step: func(st, in, out any) (bool, any) {
			s, i, o := st.(objState), in.(stormIn), out.(stormOut)
			if i.action == "" {
				return o.status == http.StatusOK && o.state == s.state, s
			}
			if s.busy {
				return o.status == http.StatusConflict, s
			}
			if _, err := k.Check(s.state, i.action, false); err != nil {
				return o.status == http.StatusUnprocessableEntity, s
			}
			return o.status == http.StatusAccepted && o.state != s.state, objState{state: o.state, busy: true}
		},
		Equal: func(a, b any) bool { return a == b },
	}
}

// TestStormLinearizable fires conflicting actions at one object from many clients at once,
// round after round, and checks each round's history with porcupine against stormModel.
// Histories are partitioned per object and round, so each check stays small.
func TestStormLinearizable(t *testing.T) {
	reg := lifecycle.Builtin()
	k, err := reg.Kind("cloudspace")
	if err != nil {
		t.Fatal(err)
	}
	sim := simtest.Start(t, simtest.WithRegistry(reg), simtest.WithClock(engine.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))),
		simtest.WithoutWorker(), simtest.WithTimeScale(1), simtest.WithEngineOptions(func(o *engine.Options) { o.CheckInvariants = true }))
	srv, eng := sim.HTTP, sim.Engine
	settle := func() { sim.Advance(t, time.Hour) }
	_, body, _ := call(http.MethodPost, srv.URL+"/v1/accounts", client.CreateRequest{Name: "acme"})
	var acct client.Object
	_ = json.Unmarshal(body, &acct)
	const objects = 3
	ids := make([]string, objects)
	for i := range ids {
		_, body, _ := call(http.MethodPost, srv.URL+"/v1/cloudspaces", client.CreateRequest{Name: fmt.Sprint("cs", i), ParentID: acct.ID})
		var o client.Object
		_ = json.Unmarshal(body, &o)
		ids[i] = o.ID
	}
	settle()

	model := stormModel(k)
	actions := []string{"disable", "enable", "pause", "delete", "restore"}
	rounds, clients := scale(30, 300), 8
	tried, violations, fivexx := 0, 0, 0
	for round := range rounds {
		var mu sync.Mutex
		histories := make([][]porcupine.Operation, objects)
		inits := make([]objState, objects)
		var wg sync.WaitGroup
		for obj, id := range ids {
			// The partition starts from a read of the settled object.
			st, body, _ := call(http.MethodGet, srv.URL+"/v1/cloudspaces/"+id, nil)
			var o client.Object
			_ = json.Unmarshal(body, &o)
			if st != http.StatusOK {
				t.Fatalf("read %s = %d", id, st)
			}
			inits[obj] = objState{state: o.State, busy: o.Operation != nil}
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(round), uint64(c*objects+obj)))
					in := stormIn{}
					if c%4 != 0 {
						in.action = actions[rng.IntN(len(actions))]
					}
					start := time.Now().UnixNano()
					var st int
					var body []byte
					if in.action == "" {
						st, body, _ = call(http.MethodGet, srv.URL+"/v1/cloudspaces/"+id, nil)
					} else {
						st, body, _ = call(http.MethodPost, srv.URL+"/v1/cloudspaces/"+id+"/actions/"+in.action, nil)
					}
					end := time.Now().UnixNano()
					var o client.Object
					_ = json.Unmarshal(body, &o)
					mu.Lock()
					histories[obj] = append(histories[obj], porcupine.Operation{ClientId: c, Input: in, Call: start, Output: stormOut{status: st, state: o.State}, Return: end})
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		for obj, h := range histories {
			tried += len(h)
			for _, op := range h {
				if op.Output.(stormOut).status >= 500 {
					fivexx++
				}
			}
			m := model
			init := inits[obj]
			m.Init = func() any { return init }
			if !porcupine.CheckOperations(m, h) {
				violations++
				t.Errorf("round %d, %s: history is not linearizable: %+v", round, ids[obj], h)
			}
		}
		settle()
	}
	if v := eng.Violations(); len(v) > 0 {
		violations += len(v)
		t.Errorf("invariant violations: %v", v)
	}
	checkRow(t, row{name: "action storms (porcupine)", tried: tried, violations: violations, fivexx: fivexx})
}
