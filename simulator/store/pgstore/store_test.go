package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// The PostgreSQL tests start one throwaway cluster for the package (on first use) and give
// each test a database of its own; see package pgtest.
func TestMain(m *testing.M) { pgtest.Main(m) }

// openPostgres opens a store on url, closed when the test ends.
func openPostgres(t testing.TB, url string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return s
}

// connect opens a connection of the test's own to the database at url, closed when the test
// ends.
func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func TestPostgresStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openPostgres(t, pgtest.Database(t)) })
}

// Replicas that start together over a new database each bring the schema up to date, under
// the advisory lock: one creates it, the others find it made, and every migration is
// recorded once.
func TestPostgresMigrationRace(t *testing.T) {
	url := pgtest.EmptyDatabase(t)
	const replicas = 8
	var wg sync.WaitGroup
	stores := make([]*pgstore.Store, replicas)
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Go(func() { stores[i], errs[i] = pgstore.Open(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: Open = %v", i, err)
			continue
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	if t.Failed() {
		return
	}
	conn := connect(t, url)
	rows, _ := conn.Query(t.Context(), "SELECT version FROM schema_migrations ORDER BY version")
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for v := 1; v <= pgstore.SchemaVersion(); v++ {
		want = append(want, v)
	}
	if !slices.Equal(versions, want) {
		t.Errorf("schema_migrations = %v, want %v", versions, want)
	}
	// Every replica serves the one schema.
	o := storetest.NewObject("m1", "acme", "machine")
	if err := stores[0].Commit(t.Context(), store.Batch{Writes: []store.Write{{Object: o}}}); err != nil {
		t.Fatalf("Commit = %v", err)
	}
	for i, s := range stores {
		if _, err := s.Get(t.Context(), "acme", "m1"); err != nil {
			t.Errorf("replica %d: Get = %v", i, err)
		}
	}
}

// Databases that earlier builds made are brought up to date: one at schema 1 as it was
// released (without the commit's check function, which builds after it had in migration 1
// until migration 4 took it over), one whose builds made the function in migration 1
// already, and one at schema 5 holding an object in a phase, claimed by a worker (its due
// time moves to the schedule of schema 6, and the claim goes: a claim only lapses). Each then
// commits, and refuses a commit whose check fails.
func TestPostgresUpgradesEarlierSchemas(t *testing.T) {
	// applySchema runs the migration files 1 to n as the builds that made them did.
	applySchema := func(t *testing.T, conn *pgx.Conn, n int) {
		t.Helper()
		if _, err := conn.Exec(t.Context(), "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
			t.Fatal(err)
		}
		files, err := filepath.Glob("schema/*.sql")
		if err != nil || len(files) < n {
			t.Fatalf("schema files %v (%v), want %d or more", files, err, n)
		}
		for i, f := range files[:n] {
			sql, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(f), ".sql")
			if _, err := conn.Exec(t.Context(), string(sql)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, err := conn.Exec(t.Context(), "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", i+1, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	due := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, conn *pgx.Conn)
		// due is an object the database holds in a phase due at the time due.
		due bool
	}{
		{name: "released schema 1", setup: func(t *testing.T, conn *pgx.Conn) { applySchema(t, conn, 1) }},
		{name: "schema 3 with the function", setup: func(t *testing.T, conn *pgx.Conn) {
			applySchema(t, conn, 3)
			function, err := os.ReadFile("schema/0004_check_function.sql")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(t.Context(), string(function)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "released schema 5 with a claimed object in a phase", due: true, setup: func(t *testing.T, conn *pgx.Conn) {
			applySchema(t, conn, 5)
			o := storetest.NewObject("m0", "acme", "machine")
			o.State, o.Due = "STOPPING", due
			data, err := json.Marshal(o) // the object's JSON, as builds before schema 7 wrote it
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(t.Context(), `INSERT INTO objects (id, tenant, kind, parent_id, state, version, due, links, events, data)
				VALUES ('m0', 'acme', 'machine', '', 'STOPPING', 1, $1, '{}', 0, $2)`, codec.DueOf(due).Nanos, data); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(t.Context(), `INSERT INTO claims (id, owner, version, until) VALUES ('m0', 'gone', 1, now() + interval '1 hour')`); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := pgtest.EmptyDatabase(t)
			conn := connect(t, url)
			tt.setup(t, conn)
			s := openPostgres(t, url)
			ctx := t.Context()
			o := storetest.NewObject("m1", "acme", "machine")
			if err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o}}}); err != nil {
				t.Fatalf("Commit = %v", err)
			}
			if err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o}}}); !errors.Is(err, store.ErrExists) {
				t.Errorf("a second insert of m1 = %v, want ErrExists (the check function refusing it)", err)
			}
			var v int
			if err := conn.QueryRow(ctx, "SELECT max(version) FROM schema_migrations").Scan(&v); err != nil || v != pgstore.SchemaVersion() {
				t.Errorf("schema version = %d (%v), want %d", v, err, pgstore.SchemaVersion())
			}
			if !tt.due {
				return
			}
			// The worker's first claim takes over what no live replica owns, as the migrations
			// leave it.
			got, err := s.ClaimDue(ctx, due.Add(time.Minute), 10, 10, time.Minute)
			if err != nil || len(got) != 1 || got[0].ID != "m0" || got[0].Object == nil || got[0].Object.State != "STOPPING" {
				t.Fatalf("ClaimDue = %+v, %v; want m0 in STOPPING (its old claim gone)", got, err)
			}
			if next, ok, err := s.NextDue(ctx); err != nil || !ok || !next.Equal(due) {
				t.Errorf("NextDue = %v, %v, %v; want m0's %v", next, ok, err, due)
			}
		})
	}
}

// A database holding objects as JSON (as builds before schema 7 wrote them) reads them back
// exactly through every read of data (Get, GetLineage and the decision cache, List, ClaimDue);
// the next write of an object stores it packed, and the objects it did not write stay JSON.
func TestPostgresReadsJSONRows(t *testing.T) {
	url := pgtest.Database(t)
	s := openPostgres(t, url)
	ctx := t.Context()
	conn := connect(t, url)
	due := storetest.T0.Add(time.Minute)
	cs := storetest.NewObject("cs1", "acme", "cloudspace")
	cs.State, cs.Due, cs.Members = "DEPLOYING", due, map[string]int{"RUNNING": 1}
	cs.Op = &store.Operation{ID: "op-1", Action: "deploy", From: "VIRTUAL", StartedAt: storetest.T0, PhaseStarted: storetest.T0}
	m := storetest.NewObject("m1", "acme", "machine")
	m.ParentID, m.State, m.Defaulted = "cs1", "RUNNING", []string{"memory"}
	m.Spec = map[string]any{"image": "ubuntu", "memory": 2048.0, "disks": []any{"d1"}}
	m.Status = map[string]any{"ip": "10.0.0.2"}
	// The JSON an earlier build wrote (json.Marshal of the object), and the rows around it.
	jsons := make([][]byte, 2)
	for i, o := range []*store.Object{cs, m} {
		var err error
		if jsons[i], err = json.Marshal(o); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO objects (id, tenant, kind, parent_id, state, version, links, events, data)
			VALUES ($1, $2, $3, $4, $5, $6, '{}', 0, $7)`, o.ID, o.Tenant, o.Kind, o.ParentID, o.State, o.Version, jsons[i]); err != nil {
			t.Fatal(err)
		}
	}
	// cs1 is due, with no owner, as schema 8's migration leaves an object in a phase.
	if _, err := conn.Exec(ctx, `UPDATE objects SET due = $1 WHERE id = 'cs1'`, codec.DueOf(due).Nanos); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO tenants (tenant, objects) VALUES ('acme', 2)`); err != nil {
		t.Fatal(err)
	}
	check := func(what string, got []*store.Object, want ...*store.Object) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s = %d objects, want %d", what, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: object %d =\n%+v\nwant\n%+v", what, i, got[i], want[i])
			}
		}
	}
	check("Get(m1)", []*store.Object{storetest.MustGet(t, s, "acme", "m1")}, m)
	lineage, err := s.GetLineage(ctx, "acme", "m1", 1)
	if err != nil {
		t.Fatal(err)
	}
	check("GetLineage(m1, 1)", lineage, m, cs)
	cached, hit, err := s.GetLineageCached(ctx, "acme", "m1", 1)
	if err != nil || !hit {
		t.Fatalf("GetLineageCached(m1, 1) = %v, hit %v; want a hit", err, hit)
	}
	check("GetLineageCached(m1, 1)", cached, m, cs)
	list, err := s.List(ctx, "acme", store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	check("List", list, cs, m)
	claimed, err := s.ClaimDue(ctx, due, 10, 10, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %+v, %v; want cs1", claimed, err)
	}
	check("ClaimDue", []*store.Object{claimed[0].Object}, cs)

	// m1's next version is written packed; cs1, not written, stays as it was.
	next := storetest.Clone(m)
	next.State, next.Spec["memory"] = "HALTED", 4096.0
	storetest.MustUpdate(t, s, next)
	stored := func(id string) []byte {
		var data []byte
		if err := conn.QueryRow(ctx, "SELECT data FROM objects WHERE id = $1", id).Scan(&data); err != nil {
			t.Fatal(err)
		}
		return data
	}
	if data := stored("m1"); !codec.IsPacked(data) {
		t.Errorf("m1's data after a write = %q, want its packed form", data)
	}
	if data := stored("cs1"); string(data) != string(jsons[0]) {
		t.Errorf("cs1's data = %q, want its JSON as written (%q)", data, jsons[0])
	}
	check("Get(m1) after a write", []*store.Object{storetest.MustGet(t, s, "acme", "m1")}, next)
	cached, hit, err = s.GetLineageCached(ctx, "acme", "m1", 1)
	if err != nil || !hit {
		t.Fatalf("GetLineageCached(m1, 1) after a write = %v, hit %v; want a hit", err, hit)
	}
	check("GetLineageCached(m1, 1) after a write", cached, next, cs)
	lineage, err = s.GetLineage(ctx, "acme", "m1", 1)
	if err != nil {
		t.Fatal(err)
	}
	check("GetLineage(m1, 1) after a write", lineage, next, cs)
}

// A database whose schema a newer build wrote is refused, not written with an older schema's
// statements.
func TestPostgresRefusesNewerSchema(t *testing.T) {
	url := pgtest.Database(t)
	conn := connect(t, url)
	newer := pgstore.SchemaVersion() + 1
	if _, err := conn.Exec(t.Context(), "INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')", newer); err != nil {
		t.Fatal(err)
	}
	_, err := pgstore.Open(t.Context(), url)
	if err == nil || !strings.Contains(err.Error(), "newer than this build's") {
		t.Errorf("Open of a newer schema = %v, want an error saying it is newer", err)
	}
}

// Link values are compared byte for byte, NUL bytes included (which a jsonb string cannot
// hold), and only string fields link.
func TestPostgresLinkValues(t *testing.T) {
	s := openPostgres(t, pgtest.Database(t))
	ctx := t.Context()
	values := map[string]any{"d1": "m\x00", "d2": "m\x01\x02", "d3": "m", "d4": "m\x01", "d5": 7.0, "d6": "\x00"}
	for id, v := range values {
		o := storetest.NewObject(id, "acme", "disk")
		o.Spec = map[string]any{"machine_id": v}
		if err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o}}}); err != nil {
			t.Fatalf("Commit(%s) = %v", id, err)
		}
	}
	for _, tt := range []struct {
		give string
		want []string
	}{
		{"m\x00", []string{"d1"}},
		{"m\x01\x02", []string{"d2"}},
		{"m", []string{"d3"}},
		{"m\x01", []string{"d4"}},
		{"7", nil},
		{"\x00", []string{"d6"}},
	} {
		got, err := s.List(ctx, "acme", store.Filter{Link: [2]string{"machine_id", tt.give}})
		if err != nil {
			t.Fatalf("List(%q) = %v", tt.give, err)
		}
		var ids []string
		for _, o := range got {
			ids = append(ids, o.ID)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("List(link %q) = %v, want %v", tt.give, ids, tt.want)
		}
	}
}

// Racing commits over one tenant's quota, each in its own transaction: exactly as many land as
// the quota leaves room for.
func TestPostgresQuotaUnderRace(t *testing.T) {
	s := openPostgres(t, pgtest.Database(t))
	const quota, racers = 10, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	landed, refused := 0, 0
	for i := range racers {
		wg.Go(func() {
			o := storetest.NewObject("o"+strings.Repeat("x", i), "acme", "machine")
			err := s.Commit(t.Context(), store.Batch{MaxObjects: quota, Writes: []store.Write{{Object: o}}})
			var qe *store.QuotaError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				landed++
			case errors.As(err, &qe):
				refused++
			default:
				t.Errorf("Commit = %v", err)
			}
		})
	}
	wg.Wait()
	if landed != quota || refused != racers-quota {
		t.Errorf("%d landed and %d were refused, want %d and %d", landed, refused, quota, racers-quota)
	}
	if n, err := s.CountObjects(t.Context(), "acme"); err != nil || n != quota {
		t.Errorf("CountObjects = %d, %v, want %d", n, err, quota)
	}
}

// Batches that write the same objects, named in opposite orders, lock them in ID order: they
// wait for each other, never deadlock, and every object's versions and events stay gapless.
func TestPostgresLockOrder(t *testing.T) {
	s := openPostgres(t, pgtest.Database(t))
	ctx := t.Context()
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		if err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: storetest.NewObject(id, "acme", "machine")}}}); err != nil {
			t.Fatal(err)
		}
	}
	const workers, rounds = 6, 30
	var wg sync.WaitGroup
	var landed sync.Map
	for w := range workers {
		wg.Go(func() {
			order := slices.Clone(ids)
			if w%2 == 1 {
				slices.Reverse(order)
			}
			for r := range rounds {
				var b store.Batch
				b.Background = r%3 == 0
				for _, id := range order {
					o, err := s.Get(ctx, "acme", id)
					if err != nil {
						t.Error(err)
						return
					}
					expect := o.Version
					o.Version++
					b.Writes = append(b.Writes, store.Write{Object: o, Expect: expect, Events: []store.Event{storetest.NewEvent(o, "S")}})
				}
				switch err := s.Commit(ctx, b); {
				case err == nil:
					landed.Store([2]int{w, r}, true)
				case !errors.Is(err, store.ErrVersion):
					t.Errorf("worker %d: Commit = %v, want nil or ErrVersion", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	n := 0
	landed.Range(func(any, any) bool { n++; return true })
	for _, id := range ids {
		o, evs := mustRead(t, s, "acme", id)
		if o.Version != int64(n+1) || len(evs) != n || evs[len(evs)-1].Seq != int64(n) {
			t.Errorf("%s: version %d with %d events (last %d) after %d batches landed, want version %d and %d events",
				id, o.Version, len(evs), evs[len(evs)-1].Seq, n, n+1, n)
		}
	}
}

// A parent's delete that counted its children (a SetRead) races creates of children that read
// the parent as Ready: whichever commits first, no child is made that the delete did not count.
func TestPostgresSetReadRace(t *testing.T) {
	s := openPostgres(t, pgtest.Database(t))
	ctx := t.Context()
	for round := range 20 {
		pid := "p" + strings.Repeat("0", round)
		parent := storetest.NewObject(pid, "acme", "cloudlet")
		parent.State = "Ready"
		if err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: parent}}}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				kid := storetest.NewObject(pid+"-k"+strings.Repeat("x", i), "acme", "cluster_inst")
				kid.ParentID = pid
				err := s.Commit(ctx, store.Batch{Reads: []store.Read{{Tenant: "acme", ID: pid, State: "Ready"}},
					Writes: []store.Write{{Object: kid}}})
				if err != nil && !errors.Is(err, store.ErrVersion) {
					t.Errorf("create child = %v", err)
				}
			})
		}
		var counted []string
		wg.Go(func() {
			for {
				kids, err := s.List(ctx, "acme", store.Filter{ParentID: pid})
				if err != nil {
					t.Error(err)
					return
				}
				ids := []string{}
				for _, k := range kids {
					ids = append(ids, k.ID)
				}
				p, err := s.Get(ctx, "acme", pid)
				if err != nil {
					t.Error(err)
					return
				}
				expect := p.Version
				p.State, p.Version = "DeleteRequested", p.Version+1
				err = s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: p, Expect: expect}},
					Sets: []store.SetRead{{Tenant: "acme", Filter: store.Filter{ParentID: pid}, IDs: ids}}})
				if err == nil {
					counted = ids
					return
				}
				if !errors.Is(err, store.ErrVersion) {
					t.Errorf("delete parent = %v", err)
					return
				}
			}
		})
		wg.Wait()
		kids, err := s.List(ctx, "acme", store.Filter{ParentID: pid})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, k := range kids {
			ids = append(ids, k.ID)
		}
		if len(ids) != len(counted) || !slices.Equal(ids, counted) {
			t.Errorf("round %d: the delete counted %v, the parent has %v", round, counted, ids)
		}
	}
}

// Ping answers for /readyz: nil while the database serves, an error once it is gone.
func TestPostgresPing(t *testing.T) {
	c := pgtest.Shared(t)
	name, err := c.CreateDatabase(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	s := openPostgres(t, c.URL(name))
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping = %v", err)
	}
	if got := s.String(); !strings.Contains(got, "/"+name) || strings.Contains(got, "password") {
		t.Errorf("String = %q, want the database named and no password", got)
	}
	if err := c.DropDatabase(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping with the database dropped = nil, want an error")
	}
	// A read the database cannot serve is an outage (answered 503), not the request's fault.
	if _, err := s.Get(t.Context(), "acme", "m1"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Get with the database dropped = %v, want store.ErrUnavailable", err)
	}
}

// Requests that commit while the connections are busy wait together and go in one round trip
// (group.go); each learns its own outcome: a commit that fails a check, or makes an ID taken,
// rolls back alone and the others of its group commit, with their events.
func TestPostgresGroupCommit(t *testing.T) {
	url := pgtest.Database(t)
	s := openPostgres(t, url+"&pool_max_conns=1")
	ctx := t.Context()
	const n = 24
	objs := make([]*store.Object, n)
	for i := range objs {
		objs[i] = storetest.NewObject(fmt.Sprintf("o%02d", i), "t", "machine")
		if err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: objs[i], Events: []store.Event{storetest.NewEvent(objs[i], "CREATED")}}}}); err != nil {
			t.Fatal(err)
		}
	}
	// Another connection holds o00's row: the store's one connection waits on it with the
	// first commit, and the others pile up behind.
	tx := holdRow(t, url, "o00")
	before := pgstore.GroupTrips(s)
	update := func(i int, expect int64) error {
		o := *objs[i]
		o.State, o.Version = "RUNNING", expect+1
		return s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: &o, Expect: expect, Events: []store.Event{storetest.NewEvent(&o, "RUNNING")}}}})
	}
	errs := make([]error, n+2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); errs[0] = update(0, 1) }()
	// Watched from a connection of its own: within a transaction (hold's), PostgreSQL answers
	// pg_stat_activity from what it read first.
	watch := connect(t, url)
	simtest.Eventually(t, 30*time.Second, "the first commit waits on the held row", func() bool {
		var waiting bool
		err := watch.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock')").Scan(&waiting)
		return err == nil && waiting
	})
	for i := 1; i < n; i++ {
		// Odd ones expect a version the object is not at.
		expect := int64(1)
		if i%2 == 1 {
			expect = 7
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = update(i, expect) }()
	}
	for i := n; i < n+2; i++ { // two inserts of one new ID: one makes it
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := storetest.NewObject("dup", "t", "machine")
			errs[i] = s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o}}})
		}()
	}
	simtest.Eventually(t, 30*time.Second, "the other commits wait for the connection", func() bool {
		return pgstore.PendingCommits(s) == n+1
	})
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if trips := pgstore.GroupTrips(s) - before; trips != 2 {
		t.Errorf("%d commits went in %d round trips, want 2 (the first, then the rest together)", n+2, trips)
	}
	for i := range n {
		o, evs := mustRead(t, s, "t", objs[i].ID)
		wantVersion, wantEvents, wantErr := int64(2), 2, error(nil)
		if i%2 == 1 {
			wantVersion, wantEvents, wantErr = 1, 1, store.ErrVersion
		}
		if !errors.Is(errs[i], wantErr) || o.Version != wantVersion || len(evs) != wantEvents {
			t.Errorf("%s: commit = %v, version %d with %d events; want %v, version %d with %d events",
				o.ID, errs[i], o.Version, len(evs), wantErr, wantVersion, wantEvents)
		}
	}
	if made := errs[n] == nil || errs[n+1] == nil; !made || (errs[n] == nil) == (errs[n+1] == nil) ||
		!errors.Is(errors.Join(errs[n], errs[n+1]), store.ErrExists) {
		t.Errorf("two inserts of one ID in a group = %v, %v; want one made and one ErrExists", errs[n], errs[n+1])
	}
}

// A machine's action, decided from its cloudspace's state (a guarded read), races the
// cloudspace's change of state on another replica: whichever commit takes the cloudspace
// first, the other waits for it, and the action never lands with the new state refusing it.
// A third connection holds a row the first commit writes last, so that it is in flight (its
// locks taken, its changes made) while the second is sent; the parent's ID sorts before the
// child's in one case and after it in the other.
func TestPostgresGuardedReadRace(t *testing.T) {
	for _, tt := range []struct {
		name, parent string
		// actionFirst: the action is in flight when the parent's change is sent, not the
		// other way round.
		actionFirst bool
	}{
		{name: "parent changes first", parent: "a-space"},
		{name: "parent changes first, parent's ID after the child's", parent: "x-space"},
		{name: "action first", parent: "a-space", actionFirst: true},
		{name: "action first, parent's ID after the child's", parent: "x-space", actionFirst: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // a database each
			url := pgtest.Database(t)
			replica, other := openPostgres(t, url), openPostgres(t, url)
			ctx := t.Context()
			parent := storetest.NewObject(tt.parent, "acme", "cloudspace")
			parent.State = "DEPLOYED"
			child := storetest.NewObject("m-vm", "acme", "machine")
			child.ParentID, child.State = tt.parent, "RUNNING"
			held := storetest.NewObject("z-held", "acme", "machine") // sorts after both
			for _, o := range []*store.Object{parent, child, held} {
				storetest.MustCreate(t, replica, o)
			}
			// changed is a write of o into state at the next version; with held, a write of
			// held too, which waits while the test holds its row.
			changed := func(o *store.Object, state string, withHeld bool) []store.Write {
				c := *o
				c.State, c.Version = state, o.Version+1
				ws := []store.Write{{Object: &c, Expect: o.Version, Events: []store.Event{storetest.NewEvent(&c, state)}}}
				if withHeld {
					h := *held
					h.Version++
					ws = append(ws, store.Write{Object: &h, Expect: held.Version})
				}
				return ws
			}
			action := store.Batch{Reads: []store.Read{{Tenant: "acme", ID: tt.parent, State: "DEPLOYED"}},
				Writes: changed(child, "STOPPING", tt.actionFirst)}
			disable := store.Batch{Writes: changed(parent, "DISABLED", !tt.actionFirst)}
			first, second, firstStore, secondStore := disable, action, other, replica
			if tt.actionFirst {
				first, second, firstStore, secondStore = action, disable, replica, other
			}

			tx := holdRow(t, url, held.ID)
			// Watched from a connection of its own: within a transaction (hold's), PostgreSQL
			// answers pg_stat_activity from what it read first.
			watch := connect(t, url)
			waiting := func(n int) func() bool {
				return func() bool {
					var got int
					err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&got)
					return err == nil && got >= n
				}
			}
			firstErr, secondErr := make(chan error, 1), make(chan error, 1)
			go func() { firstErr <- firstStore.Commit(ctx, first) }()
			simtest.Eventually(t, 30*time.Second, "the first commit waits on the held row", func() bool {
				select {
				case err := <-firstErr:
					t.Fatalf("the first commit returned %v before the held row was let go", err)
				default:
				}
				return waiting(1)()
			})
			go func() { secondErr <- secondStore.Commit(ctx, second) }()
			// The second waits for the first; a guard that does not make it wait lets it
			// return at once (and the outcome below tells).
			var early error
			returned := false
			simtest.Eventually(t, 30*time.Second, "the second commit waits for the first, or returns", func() bool {
				select {
				case early = <-secondErr:
					returned = true
					return true
				default:
					return waiting(2)()
				}
			})
			if returned {
				t.Errorf("the second commit returned %v while the first was in flight, want it to wait for the first", early)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-firstErr; err != nil {
				t.Fatalf("the first commit = %v, want nil", err)
			}
			if !returned {
				early = <-secondErr
			}
			// After the parent's change, the action read a state that is gone: refused. After
			// the action, the parent's change does not depend on the child: it lands.
			var want error
			if !tt.actionFirst {
				want = store.ErrVersion
			}
			if !errors.Is(early, want) {
				t.Errorf("the second commit = %v, want %v", early, want)
			}
			got, err := replica.Get(ctx, "acme", child.ID)
			if err != nil {
				t.Fatal(err)
			}
			if wantState := map[bool]string{false: "RUNNING", true: "STOPPING"}[tt.actionFirst]; got.State != wantState {
				t.Errorf("the child is %s, want %s", got.State, wantState)
			}
		})
	}
}

// holdRow locks an object's row on a connection of its own, in a transaction the test ends
// (rolled back at the test's end otherwise).
// mustRead reads a tenant's object with its events, failing the test on an error.
func mustRead(t *testing.T, s *pgstore.Store, tenant, id string) (*store.Object, []store.Event) {
	t.Helper()
	o, err := s.Get(t.Context(), tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(t.Context(), tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return o, evs
}

func holdRow(t *testing.T, url, id string) pgx.Tx {
	t.Helper()
	tx, err := connect(t, url).Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(t.Context(), "SELECT FROM objects WHERE id = $1 FOR UPDATE", id); err != nil {
		t.Fatal(err)
	}
	return tx
}
