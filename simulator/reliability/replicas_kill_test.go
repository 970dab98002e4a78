package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/jackc/pgx/v5"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
)

// Replicas killed with SIGKILL: three lifecyclesim processes (built from this tree) over one
// PostgreSQL database, a workload spread over them at random, and every 0.3–0.9 s a random
// replica killed and started again. Once in a while the replica killed is one caught holding
// claims on due objects (the others frozen with SIGSTOP, so it alone claims; frozen as soon as
// the database shows its claims, then killed): the objects must land once each, after the
// claims lapse, by another replica, and long-polls on the two others must be woken by that
// landing. At the end every acknowledged create and operation must be in the database, every
// operation's events must appear once, every Idempotency-Key must have made one object, and
// every object's history of answers must be linearizable (porcupine, replicaModel).

// replicaIn is one call on an object: an action, a read when action is "", or a DELETE
// (?mode=delete) when viaDelete.
type replicaIn struct {
	action    string
	viaDelete bool
}

// replicaOut is what a replica answered. status 0 means no answer (the replica died, or the
// client gave up on a frozen one, or a 5xx): the call may or may not have taken effect.
type replicaOut struct {
	status  int
	state   string
	version int64
	action  string // the operation running, "" when none
}

// replicaObj is the model's object: its state and version, and the operation running on it
// (its action, and the static state it started from).
type replicaObj struct {
	state   string
	version int64
	action  string
	from    string
}

// hop is the one change the engine may commit on an object nobody asked for: a landing (the
// next phase, or where the action ends) or a system action starting (a paused cloudspace
// resumes by itself). Each is one commit, so the version grows by one.
func hop(k *lifecycle.Kind, s replicaObj) (replicaObj, bool) {
	if s.action == "" {
		for _, a := range k.AllActions() {
			if !a.ByUser() && len(a.Via) > 0 && slices.Contains(a.From, s.state) {
				return replicaObj{state: a.Via[0].State, version: s.version + 1, action: a.Name, from: s.state}, true
			}
		}
		return s, false
	}
	a, ok := k.Action(s.action)
	if !ok {
		return s, false
	}
	i := slices.IndexFunc(a.Via, func(p lifecycle.Phase) bool { return p.State == s.state })
	if i >= 0 && i+1 < len(a.Via) {
		return replicaObj{state: a.Via[i+1].State, version: s.version + 1, action: s.action, from: s.from}, true
	}
	to := a.To
	if a.Returns {
		to = s.from
	}
	return replicaObj{state: to, version: s.version + 1}, true
}

// hops is s and what the engine may make of it on its own, one commit after the other.
func hops(k *lifecycle.Kind, s replicaObj) []replicaObj {
	out := []replicaObj{s}
	for range 8 {
		next, ok := hop(k, s)
		if !ok {
			break
		}
		out = append(out, next)
		s = next
	}
	return out
}

// replicaModel is the sequential specification of one object served by replicas whose
// workers land its phases in the background: before any call the object may have moved on by
// landings (hops); a read sees the state and version it is at; an action on a static object is
// accepted (202, version + 1, the action's first phase) exactly when the state machine allows
// it, refused with 422 when it does not, and an action on a busy object is busy (409); a
// DELETE of an object already in the recycle bin answers 200 with it. A call with no answer
// either took effect or did not.
func replicaModel(k *lifecycle.Kind) porcupine.NondeterministicModel {
	allowed := func(state, action string) bool {
		_, err := k.Check(state, action, false)
		return err == nil
	}
	first := func(action string) string {
		a, ok := k.Action(action)
		if !ok || len(a.Via) == 0 {
			return ""
		}
		return a.Via[0].State
	}
	return porcupine.NondeterministicModel{
		Step: func(st, in, out any) []any {
			s, i, o := st.(replicaObj), in.(replicaIn), out.(replicaOut)
			var next []any
			if o.status == 0 {
				next = append(next, s) // no effect
			}
			for _, h := range hops(k, s) {
				switch {
				case o.status == 0:
					if i.action != "" && h.action == "" && allowed(h.state, i.action) {
						next = append(next, replicaObj{state: first(i.action), version: h.version + 1, action: i.action, from: h.state})
					}
				case i.action == "" || (i.viaDelete && o.status == http.StatusOK):
					if o.status == http.StatusOK && h == (replicaObj{state: o.state, version: o.version, action: o.action, from: h.from}) {
						next = append(next, h)
					}
				case o.status == http.StatusAccepted:
					if h.action == "" && h.version+1 == o.version && allowed(h.state, i.action) && o.state == first(i.action) && o.action == i.action {
						next = append(next, replicaObj{state: o.state, version: o.version, action: i.action, from: h.state})
					}
				case o.status == http.StatusConflict:
					if h.action != "" {
						next = append(next, h)
					}
				case o.status == http.StatusUnprocessableEntity:
					// A DELETE of an object in the recycle bin answers 200 instead.
					if h.action == "" && !allowed(h.state, i.action) && !(i.viaDelete && h.state == "DELETED") {
						next = append(next, h)
					}
				}
			}
			return next
		},
		Equal: func(a, b any) bool { return a == b },
	}
}

// replicaRun is the state of one run: the replicas, and the ledger of what they acknowledged
// with each object's history of calls.
type replicaRun struct {
	t       *testing.T
	reps    []*sim
	db      *pgx.Conn
	kind    *lifecycle.Kind
	account string
	began   time.Time

	mu      sync.Mutex
	objects []string              // acknowledged creates, in order
	ops     map[string]string     // acknowledged operation → its object
	initial map[string]replicaObj // an object as its create answered
	history map[string][]porcupine.Operation
	active  []string // the objects the workload acts on now

	tried, fivexx, unanswered atomic.Int64
}

// poolSize is how many objects the workload acts on at once: few, so calls on one object
// race; a create retires the oldest, so that each object's history stays short for porcupine.
const poolSize = 16

func (r *replicaRun) now() int64 { return time.Since(r.began).Nanoseconds() }

// pick is a random replica.
func (r *replicaRun) pick(rng *rand.Rand) *sim { return r.reps[rng.IntN(len(r.reps))] }

// create makes a cloudspace with an Idempotency-Key, named after the key, sending it again to
// a random replica until one answers (the key makes the retries one object), and records it.
// With only set, it sends it once, to that replica. It returns the object's ID, or "" when
// the create was not acknowledged.
func (r *replicaRun) create(rng *rand.Rand, key string, only *sim, pooled bool) string {
	req := client.CreateRequest{Name: key, ParentID: r.account}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		s := only
		if s == nil {
			s = r.pick(rng)
		}
		r.tried.Add(1)
		st, body, err := callWith(http.MethodPost, s.url("/v1/cloudspaces"), req, map[string]string{"Idempotency-Key": key})
		if st >= 500 {
			r.fivexx.Add(1)
		}
		if st == http.StatusCreated || st == http.StatusAccepted {
			var o client.Object
			if err := json.Unmarshal(body, &o); err != nil {
				r.t.Errorf("create %s: %v", key, err)
				return ""
			}
			r.record(o, pooled)
			return o.ID
		}
		if err == nil && st < 500 && st != http.StatusTooManyRequests {
			r.t.Errorf("create %s on %s = %d %s", key, s.addr, st, body)
			return ""
		}
		if only != nil {
			return "" // the caller kills this replica: not acknowledged
		}
		time.Sleep(10 * time.Millisecond) // the replica is down or overloaded: try another
	}
	r.t.Errorf("create %s: no replica answered within 60s", key)
	return ""
}

// record writes an acknowledged create into the ledger.
func (r *replicaRun) record(o client.Object, pooled bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objects = append(r.objects, o.ID)
	init := replicaObj{state: o.State, version: o.Version}
	if o.Operation != nil {
		r.ops[o.Operation.ID] = o.ID
		init.action, init.from = o.Operation.Action, o.Operation.From
	}
	if !pooled {
		return
	}
	r.initial[o.ID] = init
	r.active = append(r.active, o.ID)
	if len(r.active) > poolSize {
		r.active = r.active[1:]
	}
}

// call sends one call on a pooled object to a random replica and records it in the object's
// history.
func (r *replicaRun) call(rng *rand.Rand, who int) {
	r.mu.Lock()
	id := r.active[rng.IntN(len(r.active))]
	r.mu.Unlock()
	s := r.pick(rng)
	var in replicaIn
	method, path := http.MethodGet, "/v1/cloudspaces/"+id
	switch n := rng.IntN(8); {
	case n < 2: // a read
	case n == 2:
		in = replicaIn{action: "delete", viaDelete: true}
		method, path = http.MethodDelete, path+"?mode=delete"
	default:
		in.action = []string{"disable", "enable", "pause", "delete", "restore", "reset"}[rng.IntN(6)]
		method, path = http.MethodPost, path+"/actions/"+in.action
	}
	r.tried.Add(1)
	call := r.now()
	st, body, err := callWith(method, s.url(path), nil, nil)
	ret := r.now()
	out := replicaOut{status: st}
	if st >= 500 {
		r.fivexx.Add(1)
	}
	if err == nil && st < 500 && !slices.Contains([]int{http.StatusOK, http.StatusAccepted, http.StatusConflict, http.StatusUnprocessableEntity}, st) {
		r.t.Errorf("%s %s on %s = %d %s", method, path, s.addr, st, body)
		return
	}
	if err != nil || st >= 500 {
		if in.action == "" {
			return // a read that went unanswered changed nothing
		}
		r.unanswered.Add(1)
		out, ret = replicaOut{}, math.MaxInt64 // it may still take effect (a frozen replica): open to the end
	} else if st == http.StatusOK || st == http.StatusAccepted {
		var o client.Object
		if err := json.Unmarshal(body, &o); err != nil {
			r.t.Errorf("%s %s: %v", method, path, err)
			return
		}
		out.state, out.version = o.State, o.Version
		if o.Operation != nil {
			out.action = o.Operation.Action
		}
		if st == http.StatusAccepted && o.Operation != nil {
			r.mu.Lock()
			r.ops[o.Operation.ID] = id
			r.mu.Unlock()
		}
	}
	r.mu.Lock()
	r.history[id] = append(r.history[id], porcupine.Operation{ClientId: who, Input: in, Call: call, Output: out, Return: ret})
	r.mu.Unlock()
}

// work runs one client of the workload until ctx ends: creates (to keep the pool full, and
// now and then anyway) and calls on pooled objects, on random replicas.
func (r *replicaRun) work(ctx context.Context, w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 34))
	for n := 0; ctx.Err() == nil; n++ {
		r.mu.Lock()
		pooled := len(r.active)
		r.mu.Unlock()
		if pooled < poolSize || rng.IntN(12) == 0 {
			r.create(rng, fmt.Sprintf("w%d-%d", w, n), nil, true)
			continue
		}
		r.call(rng, w)
	}
}

// claims are the objects of ids that are due and held by a replica whose lease holds now,
// with the time the lease lapses.
func (r *replicaRun) claims(ctx context.Context, ids []string) (map[string]time.Time, error) {
	// The replica whose commit started an object's phase holds it (schema 8: the object's
	// owner), under its lease.
	rows, err := r.db.Query(ctx, `SELECT o.id, l.until FROM objects o JOIN replicas l ON l.name = o.owner
		WHERE o.id = ANY($1) AND o.due IS NOT NULL AND l.until > clock_timestamp()`, ids)
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var until time.Time
		if err := rows.Scan(&id, &until); err != nil {
			return nil, err
		}
		out[id] = until
	}
	return out, rows.Err()
}

// heldKill is what a kill of a replica holding claims showed.
type heldKill struct {
	held, woken int           // objects claimed when it died; long-polls on them woken
	worstWake   time.Duration // the latest long-poll answer after its object's landing
	early       int           // objects landed before their claims lapsed (violations)
}

// killHoldingClaims kills replica victim while it holds claims on due objects, starts it again,
// and checks that long-polls on the other replicas are woken by those objects' landings. The
// others are frozen (SIGSTOP) while objects are created on the victim, so that it alone claims
// them; it is frozen as soon as the database shows one of its claims, and killed if the claim
// still holds (else thawed, and tried again).
func (r *replicaRun) killHoldingClaims(ctx context.Context, victim int) heldKill {
	t := r.t
	v := r.reps[victim]
	var others []*sim
	for i, s := range r.reps {
		if i != victim {
			others = append(others, s)
			s.signal(syscall.SIGSTOP)
		}
	}
	thaw := func() {
		for _, s := range others {
			s.signal(syscall.SIGCONT)
		}
	}
	var fresh []string
	var freshMu sync.Mutex
	creating, stopCreating := context.WithCancel(ctx)
	var creators sync.WaitGroup
	for c := range 3 {
		creators.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 99))
			for n := 0; creating.Err() == nil; n++ {
				if id := r.create(rng, fmt.Sprintf("held-%d-%d-%d", victim, c, n), v, false); id != "" {
					freshMu.Lock()
					fresh = append(fresh, id)
					freshMu.Unlock()
				}
			}
		})
	}
	var held map[string]time.Time
	// The victim's own landings stamped before it froze may still commit after (their
	// commits were on the way): a landing stamped after it is another replica's.
	var frozenAt time.Time
	for deadline := time.Now().Add(20 * time.Second); held == nil; {
		if time.Now().After(deadline) {
			stopCreating()
			thaw()
			creators.Wait()
			t.Errorf("replica %s never held a claim the database showed in 20s", v.addr)
			return heldKill{}
		}
		freshMu.Lock()
		ids := slices.Clone(fresh)
		freshMu.Unlock()
		c, err := r.claims(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(c) == 0 {
			continue
		}
		v.signal(syscall.SIGSTOP)
		frozenAt = time.Now()
		if c, err = r.claims(ctx, ids); err != nil {
			t.Fatal(err)
		}
		if len(c) > 0 {
			held = c
			v.kill()
		} else {
			v.signal(syscall.SIGCONT) // it landed them meanwhile: try again
		}
	}
	stopCreating()
	creators.Wait()
	thaw()

	// Long-polls on both live replicas for the held objects (a few): whichever replica lands
	// an object, at least one of its two long-polls is woken by another replica's landing.
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range held {
			if !yield(id) {
				return
			}
		}
	})
	ids = ids[:min(len(ids), 6)]
	type answer struct {
		id    string
		state string
		at    time.Time
		err   error
	}
	answers := make(chan answer, 2*len(ids))
	wrote := make(chan struct{}, 2*len(ids))
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote <- struct{}{} }}
	long := &http.Client{Timeout: 40 * time.Second}
	for _, id := range ids {
		for _, s := range others {
			go func() {
				req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet,
					s.url("/v1/cloudspaces/"+id+"?wait=static&timeout=30s"), nil)
				if err != nil {
					panic(err)
				}
				resp, err := long.Do(req)
				a := answer{id: id, err: err}
				if err == nil {
					var o client.Object
					a.err = json.NewDecoder(resp.Body).Decode(&o)
					resp.Body.Close()
					a.state, a.at = o.State, time.Now()
				}
				answers <- a
			}()
		}
	}
	// Which of them were still due (claimed by the dead replica) once the long-polls were
	// sent: those the long-polls had to wait for.
	for range 2 * len(ids) {
		<-wrote
	}
	still, err := r.claims(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	v.start(t)
	out := heldKill{held: len(held)}
	for range 2 * len(ids) {
		a := <-answers
		if a.err != nil || a.state != "DEPLOYED" {
			t.Errorf("long-poll of %s held by a killed replica: %q %v, want DEPLOYED", a.id, a.state, a.err)
			continue
		}
		until, waited := still[a.id]
		if !waited {
			continue
		}
		landed, err := r.landedAt(a.id)
		if err != nil {
			t.Error(err)
			continue
		}
		if landed.Before(frozenAt) {
			continue // the victim landed it itself, its commit on the way when it froze
		}
		out.woken++
		out.worstWake = max(out.worstWake, a.at.Sub(landed))
		if landed.Before(until) {
			out.early++
			t.Errorf("%s landed at %s, before the killed replica's claim lapsed (%s)", a.id, landed, until)
		}
	}
	return out
}

// landedAt is when an object's create landed (DEPLOYING → DEPLOYED), by its events.
func (r *replicaRun) landedAt(id string) (time.Time, error) {
	evs, err := r.events(r.reps[0], id)
	if err != nil {
		return time.Time{}, err
	}
	for _, e := range evs {
		if e.From == "DEPLOYING" && e.To == "DEPLOYED" {
			return e.Time, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s has not landed: %+v", id, evs)
}

// events reads an object's history from replica s.
func (r *replicaRun) events(s *sim, id string) ([]client.Event, error) {
	st, body, err := call(http.MethodGet, s.url("/v1/cloudspaces/"+id+"/events"), nil)
	if err != nil || st != http.StatusOK {
		return nil, fmt.Errorf("events of %s: %d %v", id, st, err)
	}
	var evs client.EventList
	return evs.Items, json.Unmarshal(body, &evs)
}

// settle waits until nothing is due in the database: every acknowledged operation landed.
func (r *replicaRun) settle(ctx context.Context) {
	simtest.Eventually(r.t, 90*time.Second, "every object landed after the last kill", func() bool {
		var due int
		if err := r.db.QueryRow(ctx, `SELECT count(*) FROM objects WHERE due IS NOT NULL`).Scan(&due); err != nil {
			r.t.Fatal(err)
		}
		return due == 0
	})
}

func TestReplicasKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lifecyclesim and kills its processes")
	}
	url := pgtest.Database(t)
	bin := buildSim(t)
	db, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	k, err := lifecycle.Builtin().Kind("cloudspace")
	if err != nil {
		t.Fatal(err)
	}
	r := &replicaRun{t: t, db: db, kind: k, began: time.Now(), ops: map[string]string{},
		initial: map[string]replicaObj{}, history: map[string][]porcupine.Operation{}}
	for range 3 {
		s := &sim{bin: bin, postgres: url, addr: freeAddr(t)}
		s.start(t)
		r.reps = append(r.reps, s)
	}
	defer func() {
		for _, s := range r.reps {
			s.kill()
		}
	}()
	st, body, err := call(http.MethodPost, r.reps[0].url("/v1/accounts"), client.CreateRequest{Name: "acme"})
	if err != nil || st != http.StatusCreated {
		t.Fatalf("create account = %d %s %v", st, body, err)
	}
	var acct client.Object
	_ = json.Unmarshal(body, &acct)
	r.account = acct.ID

	began := time.Now()
	ctx, stop := context.WithCancel(t.Context())
	var workers sync.WaitGroup
	for w := range 6 {
		workers.Go(func() { r.work(ctx, w) })
	}
	defer func() { // before the replicas are killed, also when the test fails early
		stop()
		workers.Wait()
	}()
	kills := scale(6, 36)
	holding := map[int]bool{kills / 2: true} // the kills of a replica caught holding claims
	if full() {
		holding = map[int]bool{kills / 3: true, 2 * kills / 3: true}
	}
	rng := rand.New(rand.NewPCG(34, 3))
	var held []heldKill
	// A kill of a replica holding claims whose long-polls waited for none is tried again, past
	// the planned kills if need be (a loaded machine: -race, make test's other packages), up to
	// heldRetries more kills.
	const heldRetries = 10
	for n, extra := 0, 0; n < kills; n++ {
		time.Sleep(time.Duration(300+rng.IntN(600)) * time.Millisecond) // the workload runs; the kill comes at a random moment
		victim := rng.IntN(len(r.reps))
		if holding[n] {
			h := r.killHoldingClaims(ctx, victim)
			held = append(held, h)
			if h.woken == 0 {
				// Its claimed objects were all landed before the long-polls were sent (a
				// commit it had sent just before it froze): catch a replica again.
				if n+1 == kills && extra < heldRetries {
					kills++
					extra++
				}
				holding[n+1] = n+1 < kills
			}
			continue
		}
		r.reps[victim].kill()
		r.reps[victim].start(t)
	}
	time.Sleep(time.Duration(300+rng.IntN(600)) * time.Millisecond)
	stop()
	workers.Wait()
	ran := time.Since(began)
	if t.Failed() {
		return
	}
	settling := time.Now()
	r.settle(t.Context())
	checking := time.Now()
	r.check(t, kills, held, ran)
	t.Logf("settled in %s, checked in %s", checking.Sub(settling).Round(time.Millisecond), time.Since(checking).Round(time.Millisecond))
}

// check compares the database with the ledger once every replica is up and nothing is due.
func (r *replicaRun) check(t *testing.T, kills int, held []heldKill, ran time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lost, twice, dupes, broken, nonlinear, unchecked := 0, 0, 0, 0, 0, 0
	seen := map[string]bool{}
	var mu sync.Mutex // guards the counts, seen and the histories while the objects are read
	var readers sync.WaitGroup
	next := make(chan string)
	for w := range 8 { // the objects are read from every replica, 8 at a time
		readers.Go(func() {
			s := r.reps[w%len(r.reps)]
			for id := range next {
				began := r.now()
				st, body, err := call(http.MethodGet, s.url("/v1/cloudspaces/"+id), nil)
				ret := r.now()
				var evs []client.Event
				if err == nil && st == http.StatusOK {
					evs, err = r.events(s, id)
				}
				mu.Lock()
				if err != nil || st != http.StatusOK {
					lost++
					t.Errorf("acknowledged object %s: %d %v", id, st, err)
					mu.Unlock()
					continue
				}
				var o client.Object
				_ = json.Unmarshal(body, &o)
				if _, ok := r.history[id]; ok { // the settled object ends its history
					out := replicaOut{status: st, state: o.State, version: o.Version}
					r.history[id] = append(r.history[id], porcupine.Operation{ClientId: 99, Input: replicaIn{}, Call: began, Output: out, Return: ret})
				}
				type move struct{ op, from, to string }
				moves := map[move]bool{}
				for i, e := range evs {
					seen[e.OperationID] = true
					m := move{e.OperationID, e.From, e.To}
					if moves[m] {
						twice++
						t.Errorf("%s: operation %s moved %s→%s twice: %+v", id, e.OperationID, e.From, e.To, evs)
					}
					moves[m] = true
					if e.Seq != int64(i+1) || (i > 0 && e.From != evs[i-1].To) {
						broken++
						t.Errorf("%s: event %d (seq %d) %s→%s does not follow %+v", id, i, e.Seq, e.From, e.To, evs[max(i-1, 0)])
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range r.objects {
		next <- id
	}
	close(next)
	readers.Wait()
	for op, id := range r.ops {
		if !seen[op] {
			lost++
			t.Errorf("acknowledged operation %s on %s is not in its history", op, id)
		}
	}
	c, err := client.New(client.Config{Endpoint: r.reps[0].url("")})
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.ListAll(t.Context(), "cloudspaces", client.ListOptions{ParentID: r.account})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, o := range all {
		if names[o.Name]++; names[o.Name] == 2 {
			dupes++
			t.Errorf("Idempotency-Key %s made two objects or more", o.Name)
		}
	}
	model := replicaModel(r.kind)
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range r.history {
			if !yield(id) {
				return
			}
		}
	})
	calls := 0
	for _, id := range ids {
		h := r.history[id]
		calls += len(h)
		m := model
		init := r.initial[id]
		m.Init = func() []any { return []any{init} }
		switch porcupine.CheckOperationsTimeout(m.ToModel(), h, 30*time.Second) {
		case porcupine.Illegal:
			nonlinear++
			t.Errorf("%s: the history is not linearizable (from %+v): %+v", id, init, h)
		case porcupine.Unknown:
			unchecked++
			t.Logf("%s: porcupine gave up on a history of %d calls", id, len(h))
		}
	}
	var holding, woken, early int
	var wake time.Duration
	for _, h := range held {
		holding += h.held
		woken += h.woken
		early += h.early
		wake = max(wake, h.worstWake)
	}
	if woken == 0 {
		t.Errorf("no long-poll waited on an object a killed replica held")
	}
	note := fmt.Sprintf("%d objects, %d operations acknowledged in %s; %d unanswered; lost: objects or operations missing; "+
		"violations: %d non-linearizable objects (%d calls) + %d operations landed twice + %d keys made 2 objects + %d broken histories "+
		"+ %d landed before their holder's lease lapsed; %d kills held due objects (%d in all); %d long-polls on other replicas woken, the last %s after the landing",
		len(r.objects), len(r.ops), ran.Round(100*time.Millisecond), r.unanswered.Load(), nonlinear, calls, twice, dupes, broken,
		early, len(held), holding, woken, wake.Round(time.Millisecond))
	if unchecked > 0 {
		note += fmt.Sprintf("; porcupine gave up on %d histories", unchecked)
	}
	t.Log(note)
	checkRow(t, row{name: fmt.Sprintf("kill -9, 3 replicas on PostgreSQL (%d kills)", kills), tried: int(r.tried.Load()),
		lost: lost, violations: nonlinear + twice + dupes + broken + early, fivexx: int(r.fivexx.Load()), note: note})
}
