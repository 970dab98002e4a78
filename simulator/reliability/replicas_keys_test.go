package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// One Idempotency-Key makes one object, and starts one operation, across replicas: the key is
// claimed in the commit of what it makes, so a request racing it on another replica (a client
// that retried there, as the README's load-balancer section allows) answers with the first's
// object or operation, as a retry on the same replica does.

// keyAnswer is one replica's answer to a keyed request.
type keyAnswer struct {
	status  int
	id, op  string // the object's ID and its operation's ID, when answered with an object
	latency time.Duration
	err     error
}

// keyedPost POSTs body to url with an Idempotency-Key.
func keyedPost(url, key string, body any) keyAnswer {
	began := time.Now()
	st, data, err := callWith(http.MethodPost, url, body, map[string]string{"Idempotency-Key": key})
	a := keyAnswer{status: st, latency: time.Since(began), err: err}
	var o wire.Object
	if err == nil && st/100 == 2 && json.Unmarshal(data, &o) == nil {
		a.id = o.ID
		if o.Operation != nil {
			a.op = o.Operation.ID
		}
	}
	return a
}

// atOnce sends one keyed request to every replica at the same moment and returns their
// answers in replica order.
func atOnce(sims []*simtest.Sim, path, key string, body any) []keyAnswer {
	out := make([]keyAnswer, len(sims))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, sim := range sims {
		wg.Go(func() {
			<-start
			out[i] = keyedPost(sim.URL+path, key, body)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// keyTally counts what a key race did.
type keyTally struct {
	mu sync.Mutex
	// keys tried; requests sent; 5xx answers; answers that were not 2xx with the winner's
	// object (or operation); keys whose requests made two or more objects (or operations).
	keys, requests, fivexx, diverged, doubled int
	latencies                                 []time.Duration
}

// add counts one key's answers; want is the object (or operation) ID the key holds, and
// field picks the answers' ID to compare with it.
func (k *keyTally) add(answers []keyAnswer, want string, field func(keyAnswer) string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys++
	for _, a := range answers {
		k.requests++
		k.latencies = append(k.latencies, a.latency)
		if a.status >= 500 {
			k.fivexx++
		}
		if a.err != nil || a.status/100 != 2 || field(a) != want || want == "" {
			k.diverged++
		}
	}
}

// TestReplicasKeyRace sends each of ≥ 100 keys' create to 3 replicas over one PostgreSQL at
// once, then each key's action the same way: every key makes one object and starts one
// operation, and every replica answers with it (202, the same ID). Before keys were claimed in
// the commit, 2–3 objects per key were made (93 of 100 keys, in the external run) and the
// action's losers answered 409 busy.
func TestReplicasKeyRace(t *testing.T) {
	stores, url := openReplicaStores(t, 3)
	var sims []*simtest.Sim
	for _, s := range stores {
		sims = append(sims, simtest.Start(t, simtest.WithStore(s), simtest.WithoutWorker()))
	}
	waitListening(t, url, len(sims))
	n := scale(100, 300)
	const parallel = 8 // keys in flight at once, each sent to the 3 replicas at once
	run := fmt.Sprintf("%x", time.Now().UnixNano())
	key := func(i int) string { return fmt.Sprintf("race-%s-%d", run, i) }

	var creates, actions keyTally
	madeBy := make([]string, n) // the object each key holds (from the answers; checked below)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			answers := atOnce(sims, "/v1/accounts", key(i), map[string]any{"name": key(i)})
			for _, a := range answers {
				if a.id != "" {
					madeBy[i] = a.id
					break
				}
			}
			creates.add(answers, madeBy[i], func(a keyAnswer) string { return a.id })
			if madeBy[i] == "" {
				return
			}
			answers = atOnce(sims, "/v1/accounts/"+madeBy[i]+"/actions/disable", key(i), map[string]any{})
			op := ""
			for _, a := range answers {
				if a.op != "" {
					op = a.op
					break
				}
			}
			actions.add(answers, op, func(a keyAnswer) string { return a.op })
		})
	}
	wg.Wait()

	// What the database holds: objects per key (by name), operations started per object.
	objs, err := stores[0].List(t.Context(), "", store.Filter{Kind: "account"})
	if err != nil {
		t.Fatal(err)
	}
	perKey := map[string][]string{}
	for _, o := range objs {
		perKey[o.Name] = append(perKey[o.Name], o.ID)
	}
	for i := range n {
		ids := perKey[key(i)]
		if len(ids) != 1 {
			creates.doubled++
			if len(ids) > 1 {
				t.Logf("key %d made %d objects: %v", i, len(ids), ids)
			}
			continue
		}
		evs, err := stores[0].Events(t.Context(), "", ids[0])
		if err != nil {
			t.Fatal(err)
		}
		started := 0
		for _, e := range evs {
			if e.Action == "disable" && e.From == "CONFIRMED" {
				started++
			}
		}
		if started != 1 {
			actions.doubled++
		}
	}
	for _, k := range []*keyTally{&creates, &actions} {
		slices.Sort(k.latencies)
	}
	t.Logf("creates: %d keys × 3 replicas at once: %d keys with other than one object, %d answers not the winner's, %d × 5xx; answer p50 %s, p99 %s",
		creates.keys, creates.doubled, creates.diverged, creates.fivexx,
		percentile(creates.latencies, 0.5).Round(time.Millisecond), percentile(creates.latencies, 0.99).Round(time.Millisecond))
	t.Logf("actions: %d keys × 3 replicas at once: %d objects with other than one operation started, %d answers not the winner's, %d × 5xx; answer p50 %s, p99 %s",
		actions.keys, actions.doubled, actions.diverged, actions.fivexx,
		percentile(actions.latencies, 0.5).Round(time.Millisecond), percentile(actions.latencies, 0.99).Round(time.Millisecond))
	checkRow(t, row{name: "replica key race (3 replicas, PostgreSQL)", tried: creates.requests + actions.requests,
		violations: creates.doubled + actions.doubled + creates.diverged + actions.diverged, fivexx: creates.fivexx + actions.fivexx,
		note: fmt.Sprintf("%d keys: %d with 2+ objects, %d with 2+ operations, %d answers not the winner's; p99 create %s, action %s",
			n, creates.doubled, actions.doubled, creates.diverged+actions.diverged,
			percentile(creates.latencies, 0.99).Round(time.Millisecond), percentile(actions.latencies, 0.99).Round(time.Millisecond))})
}

// TestReplicasKeyRetryOnAnotherReplica: a request retried on another replica once the first
// committed gets the first's answer: the same object for a create, the same operation for an
// action (not 409 busy); the same key with another body is refused on every replica.
func TestReplicasKeyRetryOnAnotherReplica(t *testing.T) {
	stores, url := openReplicaStores(t, 3)
	var sims []*simtest.Sim
	for _, s := range stores {
		sims = append(sims, simtest.Start(t, simtest.WithStore(s), simtest.WithoutWorker()))
	}
	waitListening(t, url, len(sims))
	const key = "retry-elsewhere"
	first := keyedPost(sims[0].URL+"/v1/accounts", key, map[string]any{"name": "acme"})
	if first.status/100 != 2 || first.id == "" {
		t.Fatalf("create on A = %d %v", first.status, first.err)
	}
	// The answer a retry gets is the object as it is now: A's too, so compare before it moves.
	for i, sim := range sims[1:] {
		name := string(rune('B' + i))
		if got := keyedPost(sim.URL+"/v1/accounts", key, map[string]any{"name": "acme"}); got.status != first.status || got.id != first.id {
			t.Errorf("create retried on %s = %d %s (%v), want A's %d %s", name, got.status, got.id, got.err, first.status, first.id)
		}
		if got := keyedPost(sim.URL+"/v1/accounts", key, map[string]any{"name": "other"}); got.status != http.StatusUnprocessableEntity {
			t.Errorf("the key with another body on %s = %d, want 422 (idempotency_key_reused)", name, got.status)
		}
	}
	act := keyedPost(sims[0].URL+"/v1/accounts/"+first.id+"/actions/disable", key, map[string]any{})
	if act.status/100 != 2 || act.op == "" {
		t.Fatalf("action on A = %d %v", act.status, act.err)
	}
	for i, sim := range sims[1:] {
		name := string(rune('B' + i))
		if got := keyedPost(sim.URL+"/v1/accounts/"+first.id+"/actions/disable", key, map[string]any{}); got.status != act.status || got.op != act.op {
			t.Errorf("action retried on %s = %d operation %q (%v), want A's %d %s", name, got.status, got.op, got.err, act.status, act.op)
		}
	}
	objs, err := stores[0].List(t.Context(), "", store.Filter{Kind: "account"})
	if err != nil || len(objs) != 1 {
		t.Errorf("the database holds %d accounts (%v), want 1", len(objs), err)
	}
}

// TestReplicasKeyRetryDuringStall: while PostgreSQL takes no writes (a transaction holds the
// objects table in EXCLUSIVE mode: reads go on, every commit waits), a client sends each keyed
// create to one replica, gives up after a timeout and sends it again to the next, as the
// README's load-balancer section allows, until it has tried all three; then the stall ends.
// Every key makes one object, and a retry after the stall is answered with it.
func TestReplicasKeyRetryDuringStall(t *testing.T) {
	stores, url := openReplicaStores(t, 3)
	var sims []*simtest.Sim
	for _, s := range stores {
		sims = append(sims, simtest.Start(t, simtest.WithStore(s), simtest.WithoutWorker()))
	}
	waitListening(t, url, len(sims))
	keys := scale(5, 20)
	giveUp := time.Duration(scale(1, 2)) * time.Second
	run := fmt.Sprintf("%x", time.Now().UnixNano())
	key := func(i int) string { return fmt.Sprintf("stall-%s-%d", run, i) }

	stall, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer stall.Close(context.Background())
	tx, err := stall.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), "LOCK TABLE objects IN EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	impatient := &http.Client{Timeout: giveUp}
	var tries, answeredInStall atomic.Int64
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			for _, sim := range sims {
				req, _ := http.NewRequest(http.MethodPost, sim.URL+"/v1/accounts", strings.NewReader(fmt.Sprintf(`{"name":%q}`, key(i))))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", key(i))
				tries.Add(1)
				if resp, err := impatient.Do(req); err == nil {
					resp.Body.Close()
					answeredInStall.Add(1)
				}
			}
		})
	}
	wg.Wait() // every key tried on every replica, each given up on
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}

	// After the stall, the client's next retry gets the key's object; the database holds one.
	fivexx, doubled, missing := 0, 0, 0
	for i := range keys {
		a := keyedPost(sims[i%len(sims)].URL+"/v1/accounts", key(i), map[string]any{"name": key(i)})
		switch {
		case a.status >= 500:
			fivexx++
		case a.status/100 != 2 || a.id == "":
			missing++
			t.Errorf("key %d after the stall = %d %v", i, a.status, a.err)
		}
	}
	objs, err := stores[0].List(t.Context(), "", store.Filter{Kind: "account"})
	if err != nil {
		t.Fatal(err)
	}
	perKey := map[string]int{}
	for _, o := range objs {
		perKey[o.Name]++
	}
	for i := range keys {
		if perKey[key(i)] > 1 {
			doubled++
			t.Errorf("key %d made %d objects", i, perKey[key(i)])
		}
	}
	checkRow(t, row{name: "replica key retries during a PostgreSQL stall", tried: int(tries.Load()) + keys,
		violations: doubled + missing, fivexx: fivexx,
		note: fmt.Sprintf("%d keys, each tried on 3 replicas %s apart while writes stalled (%d answered in the stall): %d with 2+ objects",
			keys, giveUp, answeredInStall.Load(), doubled)})
}
