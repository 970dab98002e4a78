package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
)

// A race pairs two requests on related objects that exclude each other: sent one after the
// other, whichever goes second is refused (a parent's delete is refused while it has a child
// whose delete policy is refuse; a child's create is refused while its parent is not Ready).
// Sent together, at most one may be accepted, and an accepted create must not vanish with its
// parent. porcupine checks one object's history; this rule spans two objects, so it has its
// own checker: each round's pair of answers and what the store then holds.
type race struct {
	name string
	// parent makes the object the round deletes (Ready), under top.
	parent func(t *testing.T, top string) string
	// coll is the collection of the child created under it.
	parentColl, childColl string
	childSpec             map[string]any
}

// raceCounts are one race's figures.
type raceCounts struct {
	tried, bothAccepted, vanished, fivexx int
}

func TestRelatedRaces(t *testing.T) {
	for _, backend := range []string{"memory", "sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var st store.Store = memstore.New()
			rounds := scale(60, 600)
			switch backend {
			case "sqlite":
				s, err := sqlitestore.Open(t.Context(), t.TempDir()+"/sim.db")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				st, rounds = s, scale(30, 300)
			case "postgres":
				s, err := pgstore.Open(t.Context(), pgtest.Database(t))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				st, rounds = s, scale(30, 300)
			}
			sim := simtest.Start(t, simtest.WithStore(st), simtest.WithClock(engine.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))),
				simtest.WithoutWorker(), simtest.WithTimeScale(1), simtest.WithEngineOptions(func(o *engine.Options) { o.CheckInvariants = true }))
			post := func(coll string, req client.CreateRequest) (int, client.Object) {
				st, body, err := call(http.MethodPost, sim.URL+"/v1/"+coll, req)
				if err != nil {
					t.Fatal(err)
				}
				var o client.Object
				_ = json.Unmarshal(body, &o)
				return st, o
			}
			ready := func(coll string, req client.CreateRequest) string {
				st, o := post(coll, req)
				if st != http.StatusAccepted {
					t.Fatalf("create %s: %d", coll, st)
				}
				for range 20 {
					sim.Advance(t, time.Hour)
					_, body, _ := call(http.MethodGet, sim.URL+"/v1/"+coll+"/"+o.ID, nil)
					_ = json.Unmarshal(body, &o)
					if o.State == "Ready" {
						return o.ID
					}
				}
				t.Fatalf("%s %s is %s, not Ready", coll, o.ID, o.State)
				return ""
			}
			races := []race{
				{name: "delete cluster_inst ∥ create app_inst", parentColl: "cluster_insts", childColl: "app_insts",
					childSpec: map[string]any{"app_name": "web", "app_version": "1.0"},
					parent: func(t *testing.T, top string) string {
						return ready("cluster_insts", client.CreateRequest{Name: "ci", ParentID: top, Spec: map[string]any{"flavor": "m4.small"}})
					}},
				{name: "delete cloudlet ∥ create cluster_inst", parentColl: "cloudlets", childColl: "cluster_insts",
					childSpec: map[string]any{"flavor": "m4.small"},
					parent: func(*testing.T, string) string {
						return ready("cloudlets", client.CreateRequest{Name: "edge"})
					}},
			}
			top := ready("cloudlets", client.CreateRequest{Name: "home"})
			for _, r := range races {
				var c raceCounts
				for i := range rounds {
					p := r.parent(t, top)
					var del, cre int
					var child client.Object
					start := make(chan struct{})
					var wg sync.WaitGroup
					wg.Go(func() {
						<-start
						del, _, _ = call(http.MethodDelete, sim.URL+"/v1/"+r.parentColl+"/"+p, nil)
					})
					wg.Go(func() {
						<-start
						cre, child = post(r.childColl, client.CreateRequest{Name: fmt.Sprint("c", i), ParentID: p, Spec: r.childSpec})
					})
					close(start)
					wg.Wait()
					c.tried++
					for _, s := range []int{del, cre} {
						if s >= 500 {
							c.fivexx++
						}
					}
					if del == http.StatusAccepted && cre == http.StatusAccepted {
						c.bothAccepted++
					}
					sim.Advance(t, time.Hour)
					sim.Advance(t, time.Hour)
					if cre == http.StatusAccepted {
						if st, _, _ := call(http.MethodGet, sim.URL+"/v1/"+r.childColl+"/"+child.ID, nil); st == http.StatusNotFound {
							c.vanished++
						}
					}
				}
				record(row{name: "race: " + r.name + " (" + backend + ")", tried: c.tried, lost: c.vanished, violations: c.bothAccepted, fivexx: c.fivexx,
					note: fmt.Sprintf("races tried %d / both accepted %d / acknowledged vanished %d", c.tried, c.bothAccepted, c.vanished)})
				t.Logf("%s: %d races tried, %d both accepted, %d acknowledged creates vanished", r.name, c.tried, c.bothAccepted, c.vanished)
				if c.bothAccepted+c.vanished+c.fivexx > 0 {
					t.Errorf("%s: %d races tried, %d both accepted, %d acknowledged creates vanished, %d 5xx; want 0",
						r.name, c.tried, c.bothAccepted, c.vanished, c.fivexx)
				}
			}
			// A link's target destroyed while the link is set: both may be accepted (a machine
			// may be destroyed with a disk attached: the disk is detached), but no disk may end
			// up naming a machine that is gone.
			var lc raceCounts
			dangling := 0
			_, acct := post("accounts", client.CreateRequest{Name: "acct"})
			cs := ready0(t, sim, post, "cloudspaces", client.CreateRequest{Name: "cs", ParentID: acct.ID}, "DEPLOYED")
			// The attach runs long, so the destroy lands while it runs when both are accepted.
			if st, body, _ := call(http.MethodPost, sim.URL+"/v1/sim/faults", client.FaultRule{Kind: "disk", Action: "attach", Mode: "slow", Factor: 50}); st != http.StatusCreated {
				t.Fatalf("slow attach fault: %d %s", st, body)
			}
			for i := range rounds {
				m := ready0(t, sim, post, "machines", client.CreateRequest{Name: fmt.Sprint("m", i), ParentID: cs, Spec: map[string]any{"memory": 2048, "image_id": "img"}}, "RUNNING")
				d := ready0(t, sim, post, "disks", client.CreateRequest{Name: fmt.Sprint("d", i), ParentID: acct.ID, Spec: map[string]any{"size_gb": 10}}, "CREATED")
				var del, att int
				start := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() {
					<-start
					del, _, _ = call(http.MethodDelete, sim.URL+"/v1/machines/"+m+"?mode=destroy", nil)
				})
				wg.Go(func() {
					<-start
					att, _, _ = call(http.MethodPost, sim.URL+"/v1/disks/"+d+"/actions/attach", client.ActionRequest{Params: map[string]any{"machine_id": m}})
				})
				close(start)
				wg.Wait()
				lc.tried++
				for _, s := range []int{del, att} {
					if s >= 500 {
						lc.fivexx++
					}
				}
				for range 4 {
					sim.Advance(t, time.Hour)
				}
				_, body, _ := call(http.MethodGet, sim.URL+"/v1/disks/"+d, nil)
				var disk client.Object
				_ = json.Unmarshal(body, &disk)
				if st, _, _ := call(http.MethodGet, sim.URL+"/v1/machines/"+m, nil); st == http.StatusNotFound && disk.Spec["machine_id"] == m {
					dangling++
				}
			}
			record(row{name: "race: destroy machine ∥ attach disk (" + backend + ")", tried: lc.tried, violations: dangling, fivexx: lc.fivexx,
				note: fmt.Sprintf("races tried %d / dangling links %d", lc.tried, dangling)})
			if dangling+lc.fivexx > 0 {
				t.Errorf("destroy machine ∥ attach disk: %d races, %d dangling links, %d 5xx; want 0", lc.tried, dangling, lc.fivexx)
			}
			if v := sim.Engine.Violations(); len(v) > 0 {
				t.Errorf("invariant violations: %v", v)
			}
		})
	}
}

// ready0 creates an object and advances the clock until it is in state want; it returns its ID.
func ready0(t *testing.T, sim *simtest.Sim, post func(string, client.CreateRequest) (int, client.Object), coll string, req client.CreateRequest, want string) string {
	t.Helper()
	st, o := post(coll, req)
	if st != http.StatusAccepted && st != http.StatusCreated {
		t.Fatalf("create %s: %d", coll, st)
	}
	for range 20 {
		if o.State == want {
			return o.ID
		}
		sim.Advance(t, time.Hour)
		_, body, _ := call(http.MethodGet, sim.URL+"/v1/"+coll+"/"+o.ID, nil)
		_ = json.Unmarshal(body, &o)
	}
	t.Fatalf("%s %s is %s, not %s", coll, o.ID, o.State, want)
	return ""
}
