package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Replicas share what a simulator is told at run time: fault rules and their firing counts,
// the time scale and heal limit, dashboard sessions; and a change-feed position one replica
// gave is never taken by another as its own.

// settled waits until no object of the database is due (every phase landed).
func settled(t *testing.T, s store.Store) {
	t.Helper()
	simtest.Eventually(t, 60*time.Second, "every object static", func() bool {
		due, err := s.Due(t.Context(), store.MaxDue)
		if err != nil {
			t.Fatal(err)
		}
		return len(due) == 0
	})
}

// firedOn lists sim's fault rules and returns the firings of the one of ID id.
func firedOn(t *testing.T, sim *simtest.Sim, id string) int {
	t.Helper()
	rules, err := sim.Client.Faults(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if r.ID == id {
			return r.Fired
		}
	}
	t.Fatalf("%s does not list fault rule %s: %+v", sim.URL, id, rules)
	return 0
}

// A fail rule of count 1 added on replica A fires exactly once while creates go to A and B
// alternately and the workers of B and C (not A's: A has none) land them; every replica lists
// it with its one firing. Rule IDs are unique across replicas, and a rule deleted on one is
// gone on all.
func TestReplicasShareFaultRules(t *testing.T) {
	stores, url := openReplicaStores(t, 3)
	const scaleFactor = 0.001
	a := simtest.Start(t, simtest.WithStore(stores[0]), simtest.WithoutWorker(), simtest.WithTimeScale(scaleFactor))
	b := simtest.Start(t, simtest.WithStore(stores[1]), simtest.WithTimeScale(scaleFactor))
	c := simtest.Start(t, simtest.WithStore(stores[2]), simtest.WithTimeScale(scaleFactor))
	waitListening(t, url, 3)
	account := createAccount(t, a)

	rule, err := a.Client.AddFault(t.Context(), client.FaultRule{Kind: "cloudspace", Mode: wire.FaultFail, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	// B and C hear of the rule from A's notification; wait until their workers would use it.
	heard := simtest.Eventually(t, 30*time.Second, "B and C load A's rule", func() bool {
		return loaded(b, rule.ID) && loaded(c, rule.ID)
	})
	t.Logf("replicas B and C loaded the rule added on A %s later", heard.Round(time.Millisecond))

	n := scale(20, 60)
	ids := make([]string, n)
	for i := range n {
		ids[i] = createBusy(t, []*simtest.Sim{a, b}[i%2], account, "cs")
	}
	settled(t, stores[0])
	failed := 0
	for _, id := range ids {
		o, err := stores[0].Get(t.Context(), "", id)
		if err != nil {
			t.Fatal(err)
		}
		if o.State != "DEPLOYED" {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d of %d cloudspaces failed their deploy, want exactly 1 (a count-1 rule)", failed, n)
	}
	for _, sim := range []*simtest.Sim{a, b, c} {
		if got := firedOn(t, sim, rule.ID); got != 1 {
			t.Errorf("%s lists the rule as fired %d times, want 1", sim.URL, got)
		}
	}

	other, err := b.Client.AddFault(t.Context(), client.FaultRule{Kind: "account", Mode: wire.FaultHang})
	if err != nil {
		t.Fatal(err)
	}
	if other.ID == rule.ID {
		t.Errorf("rules added on A and B share the ID %s", other.ID)
	}
	if err := b.Client.DeleteFault(t.Context(), rule.ID); err != nil {
		t.Fatalf("B deletes A's rule: %v", err)
	}
	rules, err := a.Client.Faults(t.Context())
	if err != nil || len(rules) != 1 || rules[0].ID != other.ID {
		t.Errorf("A lists %+v (%v) after B deleted %s, want only %s", rules, err, rule.ID, other.ID)
	}
	simtest.Eventually(t, 30*time.Second, "C drops the deleted rule", func() bool { return !loaded(c, rule.ID) })
	for _, id := range []string{"%00", "%ff", strings.Repeat("x", 300)} {
		if st, body, err := call(http.MethodDelete, a.URL+"/v1/sim/faults/"+id, nil); err != nil || st != http.StatusNotFound {
			t.Errorf("DELETE /v1/sim/faults/%.20s = %d %s %v, want 404", id, st, body, err)
		}
	}
}

// loaded reports whether sim's engine holds fault rule id in force, without asking the store
// (List would load the rules itself).
func loaded(sim *simtest.Sim, id string) bool {
	return slices.ContainsFunc(sim.Engine.Faults().InForce(""), func(r wire.FaultRule) bool { return r.ID == id })
}

// An http_error rule of count 2 added on replica A answers a request on replica B (which hears
// of it by notification alone), then one more request on A or B, and no other.
func TestReplicasShareHTTPFaults(t *testing.T) {
	stores, url := openReplicaStores(t, 2)
	a := simtest.Start(t, simtest.WithStore(stores[0]), simtest.WithoutWorker())
	b := simtest.Start(t, simtest.WithStore(stores[1]), simtest.WithoutWorker())
	waitListening(t, url, 2)
	if _, err := a.Client.AddFault(t.Context(), client.FaultRule{Kind: "account", Mode: wire.FaultHTTPError, HTTPStatus: http.StatusTeapot, Count: 2}); err != nil {
		t.Fatal(err)
	}
	list := func(sim *simtest.Sim) int {
		st, body, err := call(http.MethodGet, sim.URL+"/v1/accounts", nil)
		if err != nil || (st != http.StatusOK && st != http.StatusTeapot) {
			t.Fatalf("GET /v1/accounts = %d %s %v", st, body, err)
		}
		return st
	}
	took := simtest.Eventually(t, 30*time.Second, "replica B answers with A's injected error", func() bool { return list(b) == http.StatusTeapot })
	t.Logf("replica B injected the error of a rule added on A %s after it was added", took.Round(time.Millisecond))
	errs := 0
	for i := range 20 {
		if list([]*simtest.Sim{a, b}[i%2]) == http.StatusTeapot {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("%d more injected errors after B's, want 1 (a count-2 rule)", errs)
	}
}

// A time scale and heal limit set on replica A govern replica B's phases: a phase B starts
// is due when the same phase A starts is, after the new scale, and B reports the settings.
func TestReplicasShareConfig(t *testing.T) {
	stores, url := openReplicaStores(t, 2)
	a, b := startStill(t, stores[0]), startStill(t, stores[1])
	waitListening(t, url, 2)
	account := createAccount(t, a)
	dueIn := func(sim *simtest.Sim) time.Duration {
		id := createBusy(t, sim, account, "cs")
		o, err := stores[0].Get(t.Context(), "", id)
		if err != nil {
			t.Fatal(err)
		}
		return o.Due.Sub(stillT0)
	}
	before := dueIn(b)

	if _, err := a.Client.SetConfig(t.Context(), client.SimConfig{TimeScale: 0.25, HealAfter: "7m"}); err != nil {
		t.Fatal(err)
	}
	took := simtest.Eventually(t, 30*time.Second, "B takes A's settings", func() bool {
		scale, heal := b.Engine.Config()
		return scale == 0.25 && heal == 7*time.Minute
	})
	t.Logf("replica B took the settings set on A %s later", took.Round(time.Millisecond))
	if onA, onB := dueIn(a), dueIn(b); onB != onA || onB != before/4 {
		t.Errorf("a phase started on B is due in %s, on A in %s; want both %s (a quarter of %s)", onB, onA, before/4, before)
	}
	cfg, err := b.Client.SimConfig(t.Context())
	if err != nil || cfg.TimeScale != 0.25 || cfg.HealAfter != "7m0s" {
		t.Errorf("B's /v1/sim/config = %+v, %v; want time_scale 0.25, heal_after 7m0s", cfg, err)
	}

	// A replica started later takes the saved settings before its first request.
	c := startStill(t, stores[0])
	if scale, heal := c.Engine.Config(); scale != 0.25 || heal != 7*time.Minute {
		t.Errorf("a replica started after the change has time scale %v and heal limit %s, want 0.25 and 7m", scale, heal)
	}
}

// A browser signed in to the dashboard through replica A is signed in on replica B: it reads
// its snapshot there and changes objects through B with the CSRF token A gave. Signing out on
// B signs it out on A. The database holds neither the cookie nor the token.
func TestReplicasShareDashboardSessions(t *testing.T) {
	stores, dbURL := openReplicaStores(t, 2)
	tokens := map[string]string{"tok-acme": "acme"}
	a := simtest.Start(t, simtest.WithStore(stores[0]), simtest.WithoutWorker(), simtest.WithTokens(tokens))
	b := simtest.Start(t, simtest.WithStore(stores[1]), simtest.WithoutWorker(), simtest.WithTokens(tokens))
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	// One cookie jar, two hosts: the load balancer's address is one, so the cookie set by A
	// is sent to B.
	do := func(sim *simtest.Sim, method, path, body string, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, sim.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		lb, _ := url.Parse("http://lb.test/")
		for _, c := range jar.Cookies(lb) {
			req.AddCookie(c)
		}
		res, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		jar.SetCookies(lb, res.Cookies())
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(res.Body)
		return res.StatusCode, buf.String()
	}
	st, body := do(a, http.MethodPost, "/ui/session", `{"token":"tok-acme"}`, nil)
	var info struct {
		SignedIn bool   `json:"signed_in"`
		Tenant   string `json:"tenant"`
		CSRF     string `json:"csrf"`
	}
	if err := json.Unmarshal([]byte(body), &info); st != http.StatusOK || err != nil || info.CSRF == "" {
		t.Fatalf("sign-in on A = %d %s", st, body)
	}
	if st, body := do(b, http.MethodGet, "/ui/session", "", nil); st != http.StatusOK || !strings.Contains(body, `"signed_in":true`) ||
		!strings.Contains(body, `"tenant":"acme"`) || !strings.Contains(body, info.CSRF) {
		t.Errorf("B's /ui/session for A's browser = %d %s, want signed in as acme with A's CSRF token", st, body)
	}
	if st, body := do(b, http.MethodGet, "/ui/snapshot", "", nil); st != http.StatusOK {
		t.Errorf("B's /ui/snapshot for A's browser = %d %s", st, body)
	}
	csrf := map[string]string{"X-CSRF-Token": info.CSRF, "Content-Type": "application/json"}
	if st, body := do(b, http.MethodPost, "/ui/api/v1/accounts", `{"name":"via-b"}`, csrf); st != http.StatusCreated {
		t.Errorf("a create through B's dashboard proxy = %d %s, want 201", st, body)
	}
	objs, err := stores[0].List(t.Context(), "acme", store.Filter{})
	if err != nil || len(objs) != 1 {
		t.Errorf("acme holds %d objects (%v), want the one made through B", len(objs), err)
	}

	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var dump string
	if err := conn.QueryRow(t.Context(), "SELECT coalesce(string_agg(encode(key, 'escape') || encode(token_hash, 'escape') || csrf, ' '), '') FROM dashboard_sessions").Scan(&dump); err != nil {
		t.Fatal(err)
	}
	lb, _ := url.Parse("http://lb.test/")
	for _, c := range jar.Cookies(lb) {
		if strings.Contains(dump, c.Value) {
			t.Error("the database holds the session cookie")
		}
	}
	if strings.Contains(dump, "tok-acme") {
		t.Error("the database holds the token")
	}

	kept := jar.Cookies(lb) // a copy the browser keeps after signing out
	if st, body := do(b, http.MethodDelete, "/ui/session", "", csrf); st != http.StatusNoContent {
		t.Fatalf("sign-out on B = %d %s", st, body)
	}
	jar.SetCookies(lb, kept)
	if st, body := do(a, http.MethodGet, "/ui/session", "", nil); st != http.StatusOK || !strings.Contains(body, `"signed_in":false`) {
		t.Errorf("A's /ui/session after the sign-out on B = %d %s, want signed out", st, body)
	}
}

// A change-feed position replica A gave, presented to replica B, gets a resync from B (the
// reader reloads), never the changes B counted after a number that means something else to
// it: here B's counter has passed A's position, and answering from it would skip ten changes.
func TestReplicasChangeFeedPositionsResync(t *testing.T) {
	stores, dbURL := openReplicaStores(t, 2)
	a := simtest.Start(t, simtest.WithStore(stores[0]), simtest.WithoutWorker())
	account := createAccount(t, a)
	for range 9 {
		createBusy(t, a, account, "before-b")
	}
	pos := a.Engine.ChangePosition("") // A counted 10 changes; B, started now, none
	b := simtest.Start(t, simtest.WithStore(stores[1]), simtest.WithoutWorker())
	waitListening(t, dbURL, 2)
	var made []string
	for range 11 {
		made = append(made, createBusy(t, b, account, "after"))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a guard against a hang only
	defer cancel()
	ids, next, resync, err := b.Engine.Changes(ctx, "", pos)
	if err != nil || (!resync && !containsAll(ids, made)) {
		t.Errorf("B's changes after A's position %s = %v, %v (resync %v); want a resync or all %d changes", pos, ids, err, resync, len(made))
	}
	if !resync || next == pos {
		t.Errorf("B's answer to A's position = resync %v, next %q; want a resync and a position of B's", resync, next)
	}

	// Through the dashboard: a snapshot's position from A, streamed from B, resyncs first.
	if st, body := dashGet(t, b, "/ui/stream?after="+url.QueryEscape(pos)); st != http.StatusOK || body != "resync" {
		t.Errorf("B's stream after A's position = %d, first event %q; want a resync", st, body)
	}
}

func containsAll(have, want []string) bool {
	for _, id := range want {
		if !slices.Contains(have, id) {
			return false
		}
	}
	return true
}

// dashGet opens an open (tokenless) dashboard session on sim, GETs path with it and returns
// the status and, for an event stream, the name of its first event.
func dashGet(t *testing.T, sim *simtest.Sim, path string) (int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	if res, err := hc.Get(sim.URL + "/ui/session"); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, sim.URL+path, nil)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	ev, _, _ := simtest.NextEvent(bufio.NewScanner(res.Body))
	return res.StatusCode, ev
}
