package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// PostgreSQL restarts are outages: while the database is down every request it fails is a 503
// with Retry-After and the generic body naming the request (never a 500, never driver text),
// nothing acknowledged is lost, one Idempotency-Key makes one object however often it is
// retried, and the replica serves again soon after PostgreSQL is back, without a restart of
// its own.

// pgAck is an acknowledged action: the object and its operation.
type pgAck struct{ id, op string }

// pgTally counts a workload's answers while PostgreSQL restarts.
type pgTally struct {
	mu       sync.Mutex
	tried    int
	byStatus map[int]int
	noAnswer int // transport errors and timeouts
	// badOutage counts 503s without Retry-After, or whose body is not the generic one naming
	// the request, or that answer internal text.
	badOutage int
	badOther  int      // answers no request of the workload should get (400, ...)
	lostReads int      // GETs of an acknowledged object answered 404
	created   []string // IDs of acknowledged creates
	began     time.Time
	info      map[string]string // acknowledged object or operation → when and how (for failures)
	keyed     map[string]string // Idempotency-Key → the object its acknowledged create made
	keyMoved  int               // keyed retries answered with another object than the key's first
	acted     []pgAck
	down      bool // PostgreSQL is down: answers are counted in downSeen
	downSeen  int
}

// pgLeaks are texts of the driver, the database's address and the store an outage answer
// must not carry.
var pgLeaks = []string{"postgres", "pgx", "SQLSTATE", "127.0.0.1", "dial", "connect", "sql", "database"}

// answer counts one answer and checks an outage answer's form.
func (p *pgTally) answer(status int, h http.Header, body []byte, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tried++
	if p.down {
		p.downSeen++
	}
	if err != nil {
		p.noAnswer++
		return
	}
	p.byStatus[status]++
	switch {
	case status == http.StatusServiceUnavailable:
		id := h.Get(wire.HeaderRequestID)
		var env wire.ErrorBody
		ok := h.Get("Retry-After") != "" && id != "" && json.Unmarshal(body, &env) == nil &&
			env.Error.Code == string(wire.CodeUnavailable) && env.Error.RequestID == id && strings.Contains(env.Error.Message, id)
		low := strings.ToLower(string(body))
		for _, leak := range pgLeaks {
			ok = ok && !strings.Contains(low, strings.ToLower(leak))
		}
		if !ok {
			p.badOutage++
		}
	case status/100 == 2, status == http.StatusNotFound, status == http.StatusConflict, status == http.StatusUnprocessableEntity, status >= 500:
	default:
		p.badOther++
	}
}

// do sends one request and counts its answer; it returns the status (0 without an answer)
// and the object answered, if any.
func (p *pgTally) do(hc *http.Client, method, url, key string, body any) (int, wire.Object) {
	st, data := p.send(hc, method, url, key, body)
	var o wire.Object
	if st/100 == 2 {
		_ = json.Unmarshal(data, &o)
	}
	return st, o
}

// send sends one request and counts its answer; it returns the status (0 without an answer)
// and the body.
func (p *pgTally) send(hc *http.Client, method, url, key string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		p.answer(0, nil, nil, err)
		return 0, nil
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.answer(resp.StatusCode, resp.Header, data, err)
	return resp.StatusCode, data
}

// get GETs url, again after a 503 (a connection of the pool that died with the server before
// the restart fails the request it serves first), for up to 30 s; it returns the last status
// and body.
func (p *pgTally) get(t *testing.T, hc *http.Client, url string) (int, []byte) {
	t.Helper()
	var st int
	var body []byte
	simtest.Eventually(t, 30*time.Second, "GET "+url+" answers other than 503", func() bool {
		st, body = p.send(hc, http.MethodGet, url, "", nil)
		return st != http.StatusServiceUnavailable
	})
	return st, body
}

// pgWorkload runs one worker of the workload until ctx ends: creates of cloudspaces (every
// other one with an Idempotency-Key, retried with the same key until acknowledged), resets
// of the worker's deployed cloudspaces (with and without a key), and GETs of them.
type pgWorkload struct {
	url, account string
	tally        *pgTally
	hc           *http.Client
}

func (w *pgWorkload) run(ctx context.Context, worker int) {
	rng := rand.New(rand.NewPCG(uint64(worker), 43))
	var mine []string
	pause := func(status int) {
		if status == http.StatusServiceUnavailable || status == 0 {
			// Not Retry-After's second: the workload is to ask often while PostgreSQL is down.
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	for i := 0; ctx.Err() == nil; i++ {
		name := fmt.Sprintf("pg-%d-%d", worker, i)
		key := ""
		if i%2 == 1 {
			key = "key-" + name
		}
		for ctx.Err() == nil {
			st, o := w.tally.do(w.hc, http.MethodPost, w.url+"/v1/cloudspaces", key,
				map[string]any{"name": name, "parent_id": w.account})
			if st/100 == 2 && o.ID != "" {
				w.tally.mu.Lock()
				w.tally.created = append(w.tally.created, o.ID)
				w.tally.info[o.ID] = fmt.Sprintf("answered %d at %s, key %q", st, time.Since(w.tally.began), key)
				if key != "" {
					w.tally.keyed[key] = o.ID
				}
				w.tally.mu.Unlock()
				mine = append(mine, o.ID)
				break
			}
			pause(st)
			if key == "" {
				break // an unkeyed create is not retried: a retry could make a second object
			}
		}
		if key != "" && ctx.Err() == nil {
			// The key again: the same object.
			st, o := w.tally.do(w.hc, http.MethodPost, w.url+"/v1/cloudspaces", key,
				map[string]any{"name": name, "parent_id": w.account})
			w.tally.mu.Lock()
			if st/100 == 2 && o.ID != w.tally.keyed[key] {
				w.tally.keyMoved++
			}
			w.tally.mu.Unlock()
			pause(st)
		}
		if len(mine) == 0 {
			continue
		}
		id := mine[rng.IntN(len(mine))]
		actKey := ""
		if rng.IntN(2) == 0 {
			actKey = fmt.Sprintf("act-%d-%d", worker, i)
		}
		st, o := w.tally.do(w.hc, http.MethodPost, w.url+"/v1/cloudspaces/"+id+"/actions/reset", actKey, nil)
		if st/100 == 2 && o.Operation != nil {
			w.tally.mu.Lock()
			w.tally.acted = append(w.tally.acted, pgAck{id: id, op: o.Operation.ID})
			w.tally.info[o.Operation.ID] = fmt.Sprintf("answered %d at %s, key %q", st, time.Since(w.tally.began), actKey)
			w.tally.mu.Unlock()
		}
		pause(st)
		st, _ = w.tally.do(w.hc, http.MethodGet, w.url+"/v1/cloudspaces/"+id, "", nil)
		if st == http.StatusNotFound {
			w.tally.mu.Lock()
			w.tally.lostReads++
			w.tally.mu.Unlock()
		}
		pause(st)
	}
}

// TestPostgresRestarts: a replica on its own PostgreSQL cluster serves a workload while
// PostgreSQL is restarted several times, by fast shutdown and by kill -9 of the postmaster,
// each time started again on the same data directory and port.
func TestPostgresRestarts(t *testing.T) {
	ctx := t.Context()
	began := time.Now()
	cluster, err := pgtest.Start(ctx, pgtest.Options{})
	if err != nil {
		pgtest.Unavailable(t, err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	dbName, err := cluster.CreateDatabase(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	url := cluster.URL(dbName)
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sim := simtest.Start(t, simtest.WithStore(s), simtest.WithTimeScale(0.01)) // a 2s phase takes 20ms
	account := createAccount(t, sim)
	t.Logf("the cluster, its database and the replica started in %s", time.Since(began).Round(time.Millisecond))

	tally := &pgTally{byStatus: map[int]int{}, keyed: map[string]string{}, info: map[string]string{}, began: time.Now()}
	hc := &http.Client{Timeout: time.Minute} // a bound on a hang only
	work, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { (&pgWorkload{url: sim.URL, account: account, tally: tally, hc: hc}).run(work, w) })
	}
	acked := func() int {
		tally.mu.Lock()
		defer tally.mu.Unlock()
		return len(tally.created) + len(tally.acted)
	}
	restarts := scale(4, 20)
	var backIn []time.Duration
	var downAnswers []int
	for r := range restarts {
		before := acked()
		simtest.Eventually(t, time.Minute, "the workload acknowledges more creates and actions", func() bool { return acked() >= before+10 })
		how, what := pgtest.FastShutdown, "fast shutdown"
		if r%2 == 1 {
			how, what = pgtest.KillPostmaster, "kill -9 of the postmaster"
		}
		tally.mu.Lock()
		tally.down, tally.downSeen = true, 0
		tally.mu.Unlock()
		downAt := time.Since(tally.began)
		if err := cluster.Down(how); err != nil {
			stop()
			wg.Wait()
			t.Fatalf("restart %d (%s): %v", r+1, what, err)
		}
		simtest.Eventually(t, time.Minute, "the workload is answered while PostgreSQL is down", func() bool {
			tally.mu.Lock()
			defer tally.mu.Unlock()
			return tally.downSeen >= 4
		})
		if err := cluster.Up(ctx); err != nil {
			stop()
			wg.Wait()
			t.Fatalf("restart %d (%s): start again: %v", r+1, what, err)
		}
		tally.mu.Lock()
		tally.down = false
		downAnswers = append(downAnswers, tally.downSeen)
		tally.mu.Unlock()
		back := acked()
		backIn = append(backIn, simtest.Eventually(t, time.Minute, "the replica acknowledges a create or action after PostgreSQL is back",
			func() bool { return acked() > back }))
		t.Logf("restart %d (%s, at %s): %d answers while down; served again %s after PostgreSQL took connections",
			r+1, what, downAt, downAnswers[r], backIn[r].Round(time.Millisecond))
	}
	before := acked()
	simtest.Eventually(t, time.Minute, "the workload goes on after the last restart", func() bool { return acked() >= before+10 })
	stop()
	wg.Wait()

	// Every acknowledged object and operation is there, checked through the API.
	check := &pgTally{byStatus: map[int]int{}}
	lost := 0
	for _, id := range tally.created {
		if st, _ := check.get(t, hc, sim.URL+"/v1/cloudspaces/"+id); st != http.StatusOK {
			lost++
			t.Errorf("the acknowledged create of %s (%s): GET answers %d", id, tally.info[id], st)
		}
	}
	ops := map[string]map[string]bool{} // object ID → its operations in its history
	for _, a := range tally.acted {
		if ops[a.id] == nil {
			ops[a.id] = map[string]bool{}
			st, body := check.get(t, hc, sim.URL+"/v1/cloudspaces/"+a.id+"/events")
			var evs wire.EventList
			if err := json.Unmarshal(body, &evs); err != nil || st != http.StatusOK {
				t.Fatalf("events of %s = %d: %v (%s)", a.id, st, err, body)
			}
			for _, ev := range evs.Items {
				ops[a.id][ev.OperationID] = true
			}
		}
		if !ops[a.id][a.op] {
			lost++
			t.Errorf("the acknowledged action %s on %s (%s) is not in its history", a.op, a.id, tally.info[a.op])
		}
	}
	// One key, one object: no two objects of a keyed create's name.
	names := map[string]int{}
	for after := ""; ; {
		st, body := check.get(t, hc, sim.URL+"/v1/cloudspaces?limit=500&parent_id="+account+"&after="+after)
		var page wire.ObjectList
		if err := json.Unmarshal(body, &page); err != nil || st != http.StatusOK {
			t.Fatalf("list the cloudspaces = %d: %v (%s)", st, err, body)
		}
		for _, o := range page.Items {
			names[o.Name]++
		}
		if after = page.Next; after == "" {
			break
		}
	}
	var dupKeys, keyedFound int
	for key := range tally.keyed {
		switch n := names[strings.TrimPrefix(key, "key-")]; {
		case n > 1:
			dupKeys++
			fallthrough
		case n == 1:
			keyedFound++
		}
	}

	fivexx, unavailable := 0, tally.byStatus[http.StatusServiceUnavailable]
	for _, by := range []map[int]int{tally.byStatus, check.byStatus} {
		for st, n := range by {
			if st >= 500 && st != http.StatusServiceUnavailable {
				fivexx += n
			}
		}
	}
	worst := slicesMax(backIn)
	r := row{name: "PostgreSQL restarts (fast shutdown, kill -9), 1 replica", tried: tally.tried + check.tried, lost: lost + tally.lostReads,
		violations: tally.badOutage + tally.badOther + tally.noAnswer + tally.keyMoved + dupKeys + check.badOutage + check.noAnswer,
		fivexx:     fivexx,
		note: fmt.Sprintf("%d restarts: %d creates and %d actions acknowledged (%d keyed); %d × 503 (%d not generic or without Retry-After), %d × 500, %d unanswered; %d keys made 2+ objects; %d × 503 in the check after; served again at most %s after PostgreSQL was back",
			restarts, len(tally.created), len(tally.acted), len(tally.keyed), unavailable, tally.badOutage, tally.byStatus[http.StatusInternalServerError],
			tally.noAnswer, dupKeys, check.byStatus[http.StatusServiceUnavailable], worst.Round(time.Millisecond))}
	t.Logf("ROW %s: %s", r.name, r.note)
	t.Logf("answers by status %v; after the last restart %v; GETs of acknowledged objects answered 404: %d; other answers the workload should not get: %d; keyed retries answered with another object: %d",
		tally.byStatus, check.byStatus, tally.lostReads, tally.badOther, tally.keyMoved)
	if keyedFound != len(tally.keyed) {
		r.violations++
		t.Errorf("the list has objects of %d of the %d acknowledged keys' names", keyedFound, len(tally.keyed))
	}
	for i, n := range downAnswers {
		if n == 0 {
			t.Errorf("restart %d: no request was answered while PostgreSQL was down", i+1)
		}
	}
	if unavailable == 0 {
		r.violations++
		r.note += "; no request was answered 503 while PostgreSQL was down"
	}
	checkRow(t, r)
}

// slicesMax is the largest duration, 0 for none.
func slicesMax(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
