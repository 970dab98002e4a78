package simulator

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Regression tests of issue 14: one per limit that a careless or hostile client hit.

// 1. A client that drips its body is cut off at the request deadline; a long-poll longer than
// that deadline is not.
func TestHardenDeadlines(t *testing.T) {
	h := newTestServer(t, harnessOptions{httpServer: true, requestDeadline: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", h.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // the test's own bound
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("a dripped body got %d, want an error or a closed connection", resp.StatusCode)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server still holds a connection whose body never came: %v", err)
	}

	_, cs := h.openvcloud()
	m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID})
	done := make(chan *response, 1)
	go func() {
		r, _ := h.request(http.MethodGet, objPath("machines", m.ID)+"?wait=static&timeout=1s", nil)
		done <- r
	}()
	if r := <-done; r == nil || r.Status != http.StatusOK {
		t.Errorf("a 1s long-poll under a 200ms request deadline = %v, want 200", r)
	}
	// An action that waits on its own request gets its second line after 1s too.
	r, err := h.request(http.MethodPost, objPath("cloudspaces", cs.ID)+"/actions/disable?wait=static&timeout=1s", nil)
	if err != nil || r.Status != http.StatusAccepted || bytes.Count(r.Body, []byte("\n")) != 2 {
		t.Errorf("a 1s waiting action under a 200ms request deadline = %v, %v; want 202 and two lines", r, err)
	}
	// A wait asked for in the query string does not hold a dripped body open.
	drip, err := net.Dial("tcp", h.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer drip.Close()
	fmt.Fprintf(drip, "POST /v1/accounts?wait=static&timeout=60s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	_ = drip.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(drip), nil); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("a dripped body with ?wait=static got %d, want an error or a closed connection", resp.StatusCode)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("?wait=static kept a connection whose body never came: %v", err)
	}
}

// 1. The connection cap: a new connection closes the longest idle keep-alive one and is
// served; it waits only while every connection serves a request, until one ends.
func TestHardenConnectionCap(t *testing.T) {
	h := newTestServer(t, harnessOptions{httpServer: true, maxConns: 2})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", h.srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // a guard against a hang only
		return c
	}
	third := func() chan error {
		got := make(chan error, 1)
		go func() {
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
			resp, err := c.Get(h.srv.URL + "/healthz")
			if err == nil {
				resp.Body.Close()
			}
			got <- err
		}()
		return got
	}

	var idle []net.Conn
	for range 2 {
		c := dial()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("healthz on a held connection = %v, %v", resp, err)
		}
		resp.Body.Close()
		idle = append(idle, c) // kept open: idle keep-alives
	}
	if err := <-third(); err != nil {
		t.Fatalf("a third client beside two idle keep-alives: %v, want served", err)
	}
	// The server marks a keep-alive idle after it has written the answer, so on a loaded
	// machine the second may be marked idle first: one of the two is closed, the other kept.
	closed := make(chan int, 2)
	for i, c := range idle {
		go func() {
			if _, err := c.Read(make([]byte, 1)); err == io.EOF {
				closed <- i
			}
		}()
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second): // a guard against a hang only
		t.Errorf("no idle keep-alive was closed for the third client, want the longest idle one")
	}
	for _, c := range idle {
		c.Close()
	}
	// The server holds a closed keep-alive's slot until it reads the close: one it has not read
	// yet would be the longest idle, closed to make room for the third below.
	simtest.Eventually(t, 30*time.Second, "the server let go of the closed connections", func() bool { return h.sim.Conns.Open() == 0 })

	// Two connections serving long-polls on an object that stays busy (no worker).
	acct := h.create("accounts", client.CreateRequest{Name: "a"})
	cs := h.create("cloudspaces", client.CreateRequest{Name: "cs", ParentID: acct.ID})
	var polls []net.Conn
	for range 2 {
		c := dial()
		fmt.Fprintf(c, "GET /v1/cloudspaces/%s?wait=static&timeout=30s HTTP/1.1\r\nHost: x\r\n\r\n", cs.ID)
		polls = append(polls, c)
	}
	// Both requests read (no connection pending): a connection whose request the server is
	// still reading is not idle, but not yet marked active either.
	simtest.Eventually(t, 30*time.Second, "the long-polls' requests read", func() bool {
		return h.sim.Conns.Open() == 2 && h.sim.Conns.Pending() == 0
	})
	// A third connection waits: the long-polls are served.
	got := third()
	select {
	case err := <-got:
		t.Fatalf("a third connection was served past a cap of 2 serving long-polls (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	polls[0].Close()
	if err := <-got; err != nil {
		t.Errorf("after a long-poll's connection closed, the waiting client got %v", err)
	}
}

// 2. Made-up methods and paths add no metric series.
func TestHardenMetricLabels(t *testing.T) {
	h := newTestServer(t, harnessOptions{metrics: true})
	for i := range 200 {
		h.do(fmt.Sprintf("M%d", i), fmt.Sprintf("/junk/%d", i), nil)
		h.do(http.MethodGet, fmt.Sprintf("/v1/nothing%d/x/y/z", i), nil)
	}
	body := string(h.do(http.MethodGet, "/metrics", nil).Body)
	n := strings.Count(body, "lifecyclesim_http_request_duration_seconds_count{")
	if n > 10 {
		t.Errorf("%d request series after 400 made-up requests, want a handful", n)
	}
	if !strings.Contains(body, `method="OTHER",route="unmatched"`) {
		t.Errorf("no OTHER/unmatched series in\n%s", body)
	}
}

// 3. The clock advance is bounded and the clock never goes backwards; 4. so are the time
// scale and the slow factor, and durations saturate instead of overflowing.
func TestHardenClockAndScaleBounds(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	for range 2 {
		d := wantAPIError(t, h.do(http.MethodPost, "/v1/sim/clock", client.ClockAdvance{Advance: "2000000h"}), http.StatusBadRequest, client.CodeInvalid)
		if !strings.Contains(d.Message, "at most") {
			t.Errorf("message %q does not name the bound", d.Message)
		}
	}
	if now := h.engine.Clock().Now(); !now.Equal(harnessT0) {
		t.Errorf("clock after refused advances = %v, want %v", now, harnessT0)
	}
	sc := engine.NewSimClock()
	e := engine.New(memstore.New(), h.engine.Registry(), sc, engine.Options{})
	before := sc.Now()
	for range 10 {
		_ = e.AdvanceClock(context.Background(), engine.MaxClockAdvance)
	}
	if off := sc.Offset(); off > engine.MaxClockOffset {
		t.Errorf("offset %v is past the bound %v", off, engine.MaxClockOffset)
	}
	if now := sc.Now(); now.Before(before) {
		t.Errorf("the clock went backwards: %v → %v", before, now)
	}

	for _, bad := range []string{`{"time_scale": 1e308}`, `{"time_scale": 1e-300}`, `{"heal_after": "2000000h"}`} {
		d := wantAPIError(t, h.do(http.MethodPut, "/v1/sim/config", bad), http.StatusBadRequest, client.CodeInvalid)
		if !strings.Contains(d.Message, "at most") && !strings.Contains(d.Message, "from") {
			t.Errorf("PUT config %s: message %q does not name the bound", bad, d.Message)
		}
	}
	wantAPIError(t, h.do(http.MethodPost, "/v1/sim/faults", `{"mode":"slow","factor":1e300}`), http.StatusBadRequest, client.CodeInvalid)
}

// 5. A tenant reset removes everything, also objects the worker moves meanwhile.
func TestHardenResetRemovesEverything(t *testing.T) {
	store, _ := openTestSQLite(t)
	h := newTestServer(t, harnessOptions{store: store, worker: true, timeScale: 0.001,
		tokens: map[string]string{"t1": "acme", "t2": "other"}}).as("t1")
	a := h.create("accounts", client.CreateRequest{Name: "acme"})
	for i := range 60 {
		h.create("cloudspaces", client.CreateRequest{Name: fmt.Sprint("cs", i), ParentID: a.ID})
	}
	other := h.as("t2").create("accounts", client.CreateRequest{Name: "keep"})
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/reset", nil), "reset", http.StatusNoContent)
	if n, err := store.CountObjects(context.Background(), "acme"); err != nil || n != 0 {
		t.Errorf("objects left after reset = %d, %v, want 0", n, err)
	}
	wantStatus(t, h.as("t2").do(http.MethodGet, objPath("accounts", other.ID), nil), "other tenant's object", http.StatusOK)
}

// 6. A request whose client went away is not a 500.
func TestHardenCanceledRequest(t *testing.T) {
	store, _ := openTestSQLite(t)
	h := newTestServer(t, harnessOptions{store: store, metrics: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/machines", nil)
	rec := httptest.NewRecorder()
	h.server.ServeHTTP(rec, req)
	if rec.Code != client.StatusClientClosedRequest {
		t.Errorf("cancelled list = %d %s, want 499", rec.Code, rec.Body)
	}
	body := string(h.do(http.MethodGet, "/metrics", nil).Body)
	if strings.Contains(body, `code="500"`) || !strings.Contains(body, `code="499"`) {
		t.Errorf("metrics count the cancelled request wrongly:\n%s", body)
	}
}

// 7. Bodies and fields are bounded, with the bound named.
func TestHardenBodyAndFieldLimits(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	big := `{"name":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`
	wantAPIError(t, h.do(http.MethodPost, "/v1/accounts", big), http.StatusRequestEntityTooLarge, client.CodeTooLarge)
	d := wantAPIError(t, h.do(http.MethodPost, "/v1/accounts", client.CreateRequest{Name: strings.Repeat("n", engine.MaxNameBytes+1)}), http.StatusBadRequest, client.CodeInvalid)
	if !strings.Contains(d.Message, fmt.Sprint(engine.MaxNameBytes)) {
		t.Errorf("message %q does not name the bound", d.Message)
	}
	spec := map[string]any{"blob": strings.Repeat("s", engine.MaxSpecBytes)}
	wantAPIError(t, h.do(http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "a", Spec: spec}), http.StatusBadRequest, client.CodeInvalid)
	wantAPIError(t, h.do(http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "a"}, "Idempotency-Key", strings.Repeat("k", engine.MaxKeyBytes+1)),
		http.StatusBadRequest, client.CodeInvalid)
}

// 8. Idempotency keys are scoped to the operation and its target, and bound to the body.
func TestHardenIdempotencyKeys(t *testing.T) {
	for name, store := range map[string]func(t *testing.T) store.Store{
		"memory": func(*testing.T) store.Store { return memstore.New() },
		"sqlite": func(t *testing.T) store.Store { s, _ := openTestSQLite(t); return s },
	} {
		t.Run(name, func(t *testing.T) {
			h := newTestServer(t, harnessOptions{store: store(t)})
			a := h.create("accounts", client.CreateRequest{Name: "acme"})
			r1 := h.do(http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "cs", ParentID: a.ID}, "Idempotency-Key", "k1")
			wantStatus(t, r1, "create", http.StatusAccepted)
			cs := decodeAs[client.Object](t, r1)
			r2 := h.do(http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "cs", ParentID: a.ID}, "Idempotency-Key", "k1")
			if o := decodeAs[client.Object](t, r2); o.ID != cs.ID {
				t.Errorf("retry made %s, want %s", o.ID, cs.ID)
			}
			wantAPIError(t, h.do(http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "other", ParentID: a.ID}, "Idempotency-Key", "k1"),
				http.StatusUnprocessableEntity, client.CodeKeyReused)
			// The same key for another kind, or for an action, is another operation.
			r3 := h.do(http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "b"}, "Idempotency-Key", "k1")
			if o := decodeAs[client.Object](t, r3); o.ID == cs.ID || o.Kind != "account" {
				t.Errorf("key k1 on accounts answered %+v", o)
			}
			h.settle("cloudspaces", cs.ID)
			// Before, an action's key k9 and a create's key act:k9 were one record.
			wantStatus(t, h.do(http.MethodPost, objPath("cloudspaces", cs.ID)+"/actions/disable", nil, "Idempotency-Key", "k9"), "disable", http.StatusAccepted)
			r4 := h.do(http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "cs2", ParentID: a.ID}, "Idempotency-Key", "act:k9")
			if o := decodeAs[client.Object](t, r4); r4.Status != http.StatusAccepted || o.ID == cs.ID {
				t.Errorf("create with key act:k9 = %s, want a new cloudspace", r4)
			}
		})
	}
}

// Also seen: the clock offset survives a restart (SQLite, schema 3, migrated from 2).
func TestHardenClockOffsetPersisted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sim.db")
	s, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	// Make it a schema 2 file, as an older build left it.
	if _, err := db.ExecContext(ctx, `DROP TABLE meta; ALTER TABLE idempotency DROP COLUMN body_hash;
		DROP INDEX idempotency_created; ALTER TABLE idempotency DROP COLUMN created_at;
		ALTER TABLE objects DROP COLUMN events; DROP TABLE journal; PRAGMA user_version = 2`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for i := range 2 {
		s, err := sqlitestore.Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		clock := engine.NewSimClock()
		e := engine.New(s, nil, clock, engine.Options{})
		if err := e.RestoreClock(ctx); err != nil {
			t.Fatal(err)
		}
		if want := time.Duration(i) * 2 * time.Hour; clock.Offset() != want {
			t.Errorf("start %d: offset %v, want %v", i, clock.Offset(), want)
		}
		if err := e.AdvanceClock(ctx, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	m := memstore.New()
	_ = m.SetClockOffset(ctx, time.Hour)
	_ = m.Reset(ctx)
	if d, _ := m.ClockOffset(ctx); d != time.Hour {
		t.Errorf("MemStore offset after reset = %v, want 1h", d)
	}
}

// Also seen: lowering heal_after releases an operation that already hangs.
func TestHardenHealAfterAppliesToRunning(t *testing.T) {
	h := newTestServer(t, harnessOptions{healAfter: time.Hour})
	_, cs := h.openvcloud()
	h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "machine", Mode: wire.FaultHang})
	m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID})
	wantStatus(t, h.do(http.MethodPut, "/v1/sim/config", client.SimConfig{HealAfter: "1m"}), "lower heal_after", http.StatusOK)
	h.advance(61 * time.Second)
	if o := h.get("machines", m.ID); o.Operation != nil {
		t.Errorf("machine still in %s after the lowered heal_after passed", o.State)
	}
}

// Also: a per-tenant object quota.
func TestHardenObjectQuota(t *testing.T) {
	h := newTestServer(t, harnessOptions{maxObjects: 2, tokens: map[string]string{"t1": "a", "t2": "b"}}).as("t1")
	h.create("accounts", client.CreateRequest{Name: "1"})
	h.create("accounts", client.CreateRequest{Name: "2"})
	d := wantAPIError(t, h.do(http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "3"}), http.StatusForbidden, client.CodeForbidden)
	if !strings.Contains(d.Message, "max_objects 2") {
		t.Errorf("message %q does not name the quota", d.Message)
	}
	h.as("t2").create("accounts", client.CreateRequest{Name: "1"})
}

// Issue 32: the quota counts everything a request makes (an MCI's VMs, a scale-out's), and the
// refusal names the quota, the count asked for and what is left.
func TestQuotaCountsWhatARequestMakes(t *testing.T) {
	forEachStore(t, func(t *testing.T, opt harnessOptions) {
		opt.maxObjects = 5
		h := newTestServer(t, opt)
		r := h.do(http.MethodPost, "/v1/mcis", client.CreateRequest{Name: "big", Spec: mciSpec(subgroup("web", 100, "aws", "us-east-1"))})
		d := wantAPIError(t, r, http.StatusForbidden, client.CodeForbidden)
		for _, want := range []string{"max_objects 5", "makes 101", "5 are left"} {
			if !strings.Contains(d.Message, want) {
				t.Errorf("message %q does not say %q", d.Message, want)
			}
		}
		mci := h.create("mcis", client.CreateRequest{Name: "small", Spec: mciSpec(subgroup("web", 2, "aws", "us-east-1"))})
		h.mustSettle("mcis", mci.ID, "Running")
		r = h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: mciSpec(subgroup("web", 50, "aws", "us-east-1"))})
		d = wantAPIError(t, r, http.StatusForbidden, client.CodeForbidden)
		if !strings.Contains(d.Message, "makes 48") || !strings.Contains(d.Message, "2 are left") {
			t.Errorf("scale-out refusal %q does not count the VMs it makes", d.Message)
		}
		if n := len(h.children("vms", mci.ID)); n != 2 {
			t.Errorf("after a refused scale-out the MCI has %d VMs, want 2", n)
		}
		// Up to the quota exactly is fine.
		r = h.do(http.MethodPatch, objPath("mcis", mci.ID), client.PatchRequest{Spec: mciSpec(subgroup("web", 4, "aws", "us-east-1"))})
		wantStatus(t, r, "scale to the quota", http.StatusAccepted)
	})
}

// Also: simulator-wide controls need the admin token when tokens are configured.
func TestHardenAdminToken(t *testing.T) {
	h := newTestServer(t, harnessOptions{tokens: map[string]string{"t1": "a"}, adminToken: "root"})
	adv := client.ClockAdvance{Advance: "1h"}
	wantAPIError(t, h.as("t1").do(http.MethodPost, "/v1/sim/clock", adv), http.StatusForbidden, client.CodeForbidden)
	wantAPIError(t, h.as("t1").do(http.MethodPut, "/v1/sim/config", client.SimConfig{TimeScale: 2}), http.StatusForbidden, client.CodeForbidden)
	wantAPIError(t, h.as("nope").do(http.MethodPost, "/v1/sim/clock", adv), http.StatusUnauthorized, client.CodeUnauthorized)
	wantStatus(t, h.as("root").do(http.MethodPost, "/v1/sim/clock", adv), "admin advance", http.StatusOK)
	wantStatus(t, h.as("t1").do(http.MethodGet, "/v1/sim/clock", nil), "tenant reads the clock", http.StatusOK)
	// The admin token reads what it changes; objects belong to tenants.
	wantStatus(t, h.as("root").do(http.MethodGet, "/v1/sim/clock", nil), "admin reads the clock", http.StatusOK)
	wantStatus(t, h.as("root").do(http.MethodGet, "/v1/sim/config", nil), "admin reads the config", http.StatusOK)
	wantAPIError(t, h.as("root").do(http.MethodGet, "/v1/accounts", nil), http.StatusForbidden, client.CodeForbidden)
	if now := h.engine.Clock().Now(); !now.Equal(harnessT0.Add(time.Hour)) {
		t.Errorf("clock = %v", now)
	}
	noAdmin := newTestServer(t, harnessOptions{tokens: map[string]string{"t1": "a"}})
	wantAPIError(t, noAdmin.as("t1").do(http.MethodPost, "/v1/sim/clock", adv), http.StatusForbidden, client.CodeForbidden)
}
