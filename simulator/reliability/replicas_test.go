package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
)

// Replicas: two simulators (engine, worker, HTTP API) over one PostgreSQL database, as two
// lifecyclesim processes run.

// landings counts the objects a replica's worker committed (its Background commits): which
// replica did the due work.
type landings struct {
	*pgstore.Store
	n atomic.Int64
	// gate, when set, holds a replica that has landed something from claiming more until
	// every replica sharing it has (splitGate).
	gate *splitGate
}

// ClaimDue implements store.Claimer, after the gate if any.
func (s *landings) ClaimDue(ctx context.Context, now time.Time, n, batch int, ttl time.Duration) ([]store.Scheduled, error) {
	if s.gate != nil {
		s.gate.wait(s)
	}
	return s.Store.ClaimDue(ctx, now, n, batch, ttl)
}

func (s *landings) Commit(ctx context.Context, b store.Batch) error {
	err := s.Store.Commit(ctx, b)
	if err == nil && b.Background {
		s.n.Add(int64(len(b.Writes)))
	}
	return err
}

// waitListening waits until n replicas listen for notifications on the database at url
// (a change committed before a replica listens reaches it by the next second's poll only).
// pg_stat_activity shows a connection's last statement: a listener's LISTEN, then, from a
// second on, its ping (pgconn's "-- ping"), which it sends only once it listens.
func waitListening(t *testing.T, url string, n int) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	simtest.Eventually(t, time.Minute, fmt.Sprintf("%d replicas listening", n), func() bool {
		var got int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lifecyclesim listen'
			AND datname = current_database() AND (query LIKE 'LISTEN %' OR query = '-- ping')`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got >= n
	})
}

// openReplicaStores opens n stores over one new database.
func openReplicaStores(t *testing.T, n int) ([]*landings, string) {
	t.Helper()
	url := pgtest.Database(t)
	var out []*landings
	for range n {
		s, err := pgstore.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		out = append(out, &landings{Store: s})
	}
	return out, url
}

// createAccount creates an account (static at once) on sim, the parent of cloudspaces.
func createAccount(t *testing.T, sim *simtest.Sim) string {
	t.Helper()
	o, err := sim.Client.Create(t.Context(), "accounts", client.CreateRequest{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	return o.ID
}

// createBusy creates a cloudspace of account on sim and returns its ID; it is DEPLOYING
// until its phase lands (DEPLOYED).
func createBusy(t *testing.T, sim *simtest.Sim, account, name string) string {
	t.Helper()
	o, err := sim.Client.Create(t.Context(), "cloudspaces", client.CreateRequest{Name: name, ParentID: account})
	if err != nil {
		t.Fatal(err)
	}
	if o.Operation == nil {
		t.Fatalf("cloudspace %s is static at once; the test needs a busy one", o.ID)
	}
	return o.ID
}

// longPoll GETs an object on sim with ?wait=static and sends the state it answered with.
func longPoll(sim *simtest.Sim, id string, out chan<- string) {
	go func() {
		_, body, err := call(http.MethodGet, sim.URL+"/v1/cloudspaces/"+id+"?wait=static&timeout=20s", nil)
		var o client.Object
		if err == nil {
			err = json.Unmarshal(body, &o)
		}
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		out <- o.State
	}()
}

// stillT0 is the time of startStill's clocks.
var stillT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// startStill starts a replica over s with no worker, at time scale 1, on a clock stopped at
// stillT0: its phases land only when a test advances it.
func startStill(t *testing.T, s store.Store) *simtest.Sim {
	return simtest.Start(t, simtest.WithStore(s), simtest.WithClock(engine.NewManualClock(stillT0)), simtest.WithoutWorker(),
		simtest.WithTimeScale(1))
}

// waitWatching waits until the test's one long-poll of sim waits on id.
func waitWatching(t *testing.T, sim *simtest.Sim, id string) {
	t.Helper()
	simtest.Eventually(t, 30*time.Second, "a long-poll waits on "+id, func() bool { return sim.Engine.LongPolls() > 0 })
}

// unpolled is a replica's store whose change feed drops the regular poll (Changes.Poll), so
// only a notification of the object (or Lost, after the listener reconnects) wakes its
// long-polls: what wakes them is then not a matter of how soon.
type unpolled struct{ *landings }

func (s unpolled) Changes(ctx context.Context) (<-chan store.Changes, error) {
	in, err := s.landings.Changes(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan store.Changes)
	go func() {
		defer close(out)
		for c := range in {
			if c.Poll {
				if c.Poll = false; !c.Lost && !c.Clock && !c.Faults && !c.Config && len(c.Objects) == 0 {
					continue
				}
			}
			select {
			case out <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// A long-poll on replica A answers once replica B lands the object: B's commit reaches A as
// a notification (A's regular poll is off, so nothing else wakes it within the 10 s bound);
// then again right after the listening connections are killed (A listens again and re-reads).
// The delays, from the start of B's landing to A's answer, are figures, not bounds.
func TestReplicasLongPollWakeUp(t *testing.T) {
	stores, url := openReplicaStores(t, 2)
	a, b := startStill(t, unpolled{stores[0]}), startStill(t, stores[1])
	waitListening(t, url, 2)

	account := createAccount(t, b)
	measure := func(name string, before func()) time.Duration {
		id := createBusy(t, b, account, name)
		answered := make(chan string, 1)
		longPoll(a, id, answered)
		waitWatching(t, a, id)
		if before != nil {
			before()
		}
		began := time.Now()
		b.Advance(t, time.Hour) // B's worker lands the account
		select {
		case state := <-answered:
			if state != "DEPLOYED" {
				t.Fatalf("A answered %q, want DEPLOYED", state)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the long-poll on A was not woken within 10s of B landing %s", id)
		}
		return time.Since(began)
	}

	tries := scale(50, 200)
	var delays []time.Duration
	for i := range tries {
		delays = append(delays, measure("wake-"+string(rune('a'+i%26)), nil))
	}
	slices.Sort(delays)
	p50, p99 := percentile(delays, 0.50), percentile(delays, 0.99)
	t.Logf("FIGURE cross-replica long-poll wake-up over %d tries: p50 %s, p99 %s, max %s", tries, p50, p99, delays[len(delays)-1])

	admin, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	kill := func() {
		if _, err := admin.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE application_name = 'lifecyclesim listen' AND datname = current_database()`); err != nil {
			t.Fatal(err)
		}
	}
	var worst time.Duration
	for range 5 {
		worst = max(worst, measure("killed", kill))
	}
	t.Logf("FIGURE wake-up right after the listening connections were killed: worst of 5 %s", worst)
}

// A clock advance on one replica moves the others' clocks (they read the shared offset when
// notified), and advances on two replicas at once both count.
func TestReplicasSharedClock(t *testing.T) {
	stores, url := openReplicaStores(t, 2)
	a := simtest.Start(t, simtest.WithStore(stores[0]), simtest.WithoutWorker())
	b := simtest.Start(t, simtest.WithStore(stores[1]), simtest.WithoutWorker())
	waitListening(t, url, 2)
	ahead := func(sim *simtest.Sim) time.Duration { return time.Until(sim.Engine.Clock().Now()) }
	waitAhead := func(sim *simtest.Sim, d time.Duration) time.Duration {
		t.Helper()
		return simtest.Eventually(t, time.Minute, fmt.Sprintf("the clock %s ahead", d), func() bool { return ahead(sim) >= d-time.Second })
	}
	if err := a.Engine.AdvanceClock(t.Context(), time.Hour); err != nil {
		t.Fatal(err)
	}
	t.Logf("replica B's clock followed A's advance in %s", waitAhead(b, time.Hour))

	var wg sync.WaitGroup
	for _, sim := range []*simtest.Sim{a, b} {
		wg.Go(func() {
			for range 5 {
				if err := sim.Engine.AdvanceClock(t.Context(), time.Minute); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	waitAhead(a, time.Hour+10*time.Minute)
	waitAhead(b, time.Hour+10*time.Minute)
	if got := ahead(a); got > time.Hour+11*time.Minute {
		t.Errorf("A's clock is %s ahead, want 1h10m", got)
	}
	if off, err := stores[0].ClockOffset(t.Context()); err != nil || off != time.Hour+10*time.Minute {
		t.Errorf("the saved offset = %s, %v; want 1h10m", off, err)
	}
}

// Two replicas' workers split the due work: every object lands exactly once (its history has
// one landing), and each replica lands some (splitGate holds the first to land from claiming
// more until the other has: which lands first, and how much each lands, is the scheduler's).
func TestReplicasShareSchedule(t *testing.T) {
	stores, _ := openReplicaStores(t, 2)
	gate := newSplitGate(stores)
	const scaleFactor = 0.001 // a 2s phase takes 2ms
	var sims []*simtest.Sim
	for _, s := range stores {
		sims = append(sims, simtest.Start(t, simtest.WithStore(s), simtest.WithTimeScale(scaleFactor)))
	}
	n := scale(200, 1000)
	account := createAccount(t, sims[0])
	ids := make([]string, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				ids[i] = createBusy(t, sims[i%2], account, "load")
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	settled(t, stores[0])
	landedOnce(t, stores[0], ids)
	// A landing is visible a moment before the worker's commit returns and counts it.
	simtest.Eventually(t, 30*time.Second, "the workers counted every landing", func() bool {
		return stores[0].n.Load()+stores[1].n.Load() >= int64(n)
	})
	a, b := stores[0].n.Load(), stores[1].n.Load()
	t.Logf("%d objects landed: replica A's worker wrote %d, B's %d", n, a, b)
	if gate.hung.Load() {
		t.Errorf("a replica that had landed waited a minute to claim more: the other landed nothing meanwhile")
	}
	if a == 0 || b == 0 {
		t.Errorf("replica A landed %d objects and B %d: want both to do part of the work", a, b)
	}
}

// splitGate makes replicas split the due work whatever the scheduler does: a replica whose
// worker has landed something claims no more until every replica sharing the gate has landed
// something too. It holds no claim and no object while it waits, so the others claim what is
// due. Without it, one worker on a loaded machine could claim and land every round before the
// other woke: a split the Claimer does not promise.
type splitGate struct {
	replicas []*landings
	hung     atomic.Bool
}

// newSplitGate shares one gate among replicas.
func newSplitGate(replicas []*landings) *splitGate {
	g := &splitGate{replicas: replicas}
	for _, r := range replicas {
		r.gate = g
	}
	return g
}

// wait holds r's claim while r has landed something and another replica has not (at most a
// minute: then hung is set, and the test fails on it).
func (g *splitGate) wait(r *landings) {
	behind := func() bool {
		return slices.ContainsFunc(g.replicas, func(o *landings) bool { return o.n.Load() == 0 })
	}
	if r.n.Load() == 0 || !behind() {
		return
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for behind() {
		select {
		case <-tick.C:
		case <-deadline:
			g.hung.Store(true)
			return
		}
	}
}

// landedOnce checks that each of the cloudspaces ids landed in DEPLOYED once: its history has
// one landing there.
func landedOnce(t *testing.T, s store.Store, ids []string) {
	t.Helper()
	for _, id := range ids {
		evs, err := s.Events(t.Context(), "", id)
		if err != nil {
			t.Fatal(err)
		}
		landed := 0
		for _, ev := range evs {
			if ev.To == "DEPLOYED" {
				landed++
			}
		}
		if landed != 1 {
			t.Errorf("%s landed %d times, want once: %+v", id, landed, evs)
		}
	}
}

// A replica killed while it holds claims on due objects loses nothing: the claims lapse and
// another replica's worker lands the objects, once each.
func TestReplicasClaimsOfAKilledReplicaLapse(t *testing.T) {
	stores, _ := openReplicaStores(t, 2)
	a := simtest.Start(t, simtest.WithStore(stores[0]), simtest.WithoutWorker(), simtest.WithTimeScale(0.001))
	account := createAccount(t, a)
	const n = 20
	var ids []string
	for range n {
		ids = append(ids, createBusy(t, a, account, "orphan"))
	}
	time.Sleep(10 * time.Millisecond) // a 2s phase at 0.001 is due after 2ms
	const ttl = time.Second
	claimed, err := stores[0].ClaimDue(t.Context(), time.Now(), 100, 64, ttl)
	if err != nil || len(claimed) != n {
		t.Fatalf("the doomed replica claims %d objects (%v), want %d", len(claimed), err, n)
	}
	claimedAt := time.Now()

	simtest.Start(t, simtest.WithStore(stores[1]), simtest.WithTimeScale(0.001)) // a live replica's worker
	time.Sleep(100 * time.Millisecond)
	due, err := stores[1].Due(t.Context(), store.MaxDue)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(claimedAt) < ttl*8/10 && len(due) != n {
		t.Errorf("%d objects landed while another replica's claims held, want none", n-len(due))
	}
	simtest.Eventually(t, time.Minute, "every object the killed replica claimed landed", func() bool {
		if due, err = stores[1].Due(t.Context(), store.MaxDue); err != nil {
			t.Fatal(err)
		}
		return len(due) == 0
	})
	t.Logf("the killed replica's %d objects landed %s after it claimed them", n, time.Since(claimedAt).Round(time.Millisecond))
	landedOnce(t, stores[1], ids)
	// The landings are visible once committed, a moment before the worker's commit returns
	// and counts them (on a loaded machine, more than a moment).
	simtest.Eventually(t, 30*time.Second, fmt.Sprintf("the live replica's worker wrote the %d orphans", n), func() bool {
		return stores[1].n.Load() >= n
	})
}

// The change feed (the dashboard's live stream) of one replica lists the objects another
// replica changed.
func TestReplicasChangeFeed(t *testing.T) {
	stores, url := openReplicaStores(t, 2)
	a := simtest.Start(t, simtest.WithStore(stores[0]), simtest.WithoutWorker())
	b := simtest.Start(t, simtest.WithStore(stores[1]), simtest.WithoutWorker())
	waitListening(t, url, 2)
	after := a.Engine.ChangePosition("")
	id := createAccount(t, b)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a guard against a hang only
	defer cancel()
	for {
		ids, next, resync, err := a.Engine.Changes(ctx, "", after)
		if err != nil {
			t.Fatalf("A's feed did not list %s made on B: %v", id, err)
		}
		if resync || slices.Contains(ids, id) {
			return // a resync reads everything, B's object with it
		}
		after = next
	}
}
