package pgstore_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// deliveryGuard bounds the wait for a delivery of Changes: a guard against a hang only. A
// notification or a listener's return takes milliseconds; a loaded machine under -race
// stretches that to seconds (a 1.5 s bound on Lost after a kill was a wall-clock assertion).
const deliveryGuard = 30 * time.Second

// nextChanges waits for a delivery of ch that want accepts, skipping Poll-only deliveries.
func nextChanges(t *testing.T, ch <-chan store.Changes, within time.Duration, want func(store.Changes) bool) store.Changes {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatal("Changes closed its channel")
			}
			if want(c) {
				return c
			}
		case <-deadline:
			t.Fatalf("no wanted delivery within %s", within)
		}
	}
}

// listening opens two stores on url, a listening for changes (until cancel, or the test's end).
func listening(t *testing.T, url string) (a, b *pgstore.Store, ch <-chan store.Changes, cancel func()) {
	t.Helper()
	a, b = openPostgres(t, url), openPostgres(t, url)
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	ch, err := a.Changes(ctx)
	if err != nil {
		t.Fatalf("Changes = %v", err)
	}
	return a, b, ch, cancel
}

func hasObject(id string) func(store.Changes) bool {
	return func(c store.Changes) bool {
		return slices.Contains(c.Objects, store.ChangedObject{Tenant: "acme", ID: id})
	}
}

// A store hears the commits, clock advances and resets of another store over the same
// database, not its own; when its listening connection is killed it connects again and
// reports Lost.
func TestPostgresChanges(t *testing.T) {
	url := pgtest.Database(t)
	a, b, ch, cancel := listening(t, url)
	ctx := t.Context()

	mine := storetest.NewObject("m-mine", "acme", "machine")
	if err := a.Commit(ctx, store.Batch{Writes: []store.Write{{Object: mine}}}); err != nil {
		t.Fatalf("Commit = %v", err)
	}
	theirs := storetest.NewObject("m-theirs", "acme", "machine")
	if err := b.Commit(ctx, store.Batch{Writes: []store.Write{{Object: theirs}}}); err != nil {
		t.Fatalf("Commit = %v", err)
	}
	c := nextChanges(t, ch, deliveryGuard, func(c store.Changes) bool { return len(c.Objects) > 0 })
	if !slices.Equal(c.Objects, []store.ChangedObject{{Tenant: "acme", ID: "m-theirs"}}) {
		t.Errorf("Changes delivered %v, want only the other store's m-theirs", c.Objects)
	}

	if _, ok, err := b.AdvanceClockOffset(ctx, time.Hour, 24*time.Hour); err != nil || !ok {
		t.Fatalf("AdvanceClockOffset = %v, %v", ok, err)
	}
	nextChanges(t, ch, deliveryGuard, func(c store.Changes) bool { return c.Clock })

	// Kill the listening connection: Lost comes once it is back, and changes flow again.
	admin := connect(t, url)
	var killed int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'lifecyclesim listen' AND datname = current_database()`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("killed %d listening connections (%v), want 1", killed, err)
	}
	nextChanges(t, ch, deliveryGuard, func(c store.Changes) bool { return c.Lost })
	again := storetest.NewObject("m-again", "acme", "machine")
	if err := b.Commit(ctx, store.Batch{Writes: []store.Write{{Object: again}}}); err != nil {
		t.Fatalf("Commit = %v", err)
	}
	nextChanges(t, ch, deliveryGuard, hasObject("m-again"))

	if err := b.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	nextChanges(t, ch, deliveryGuard, func(c store.Changes) bool { return c.Lost })

	cancel()
	for range ch { // closed once ctx ends
	}
}

// dueObject is a new object of tenant due at due.
func dueObject(id, tenant string, due time.Time) *store.Object {
	o := storetest.NewObject(id, tenant, "machine")
	o.Due = due
	return o
}

func ids(due []store.Scheduled) []string {
	var out []string
	for _, d := range due {
		out = append(out, d.ID)
	}
	return out
}

// ClaimDue hands each replica the due objects its own commits started, in tenant turns,
// earliest first, each as last committed, without writing a row; a write by another replica
// makes the object the writer's, and a landing refused as stale drops it; once a replica's
// lease lapses, another takes its objects over, and of the two only one lands each.
func TestPostgresClaimDue(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openPostgres(t, url), openPostgres(t, url)
	ctx := t.Context()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var writes []store.Write
	for i := range 8 {
		writes = append(writes, store.Write{Object: dueObject("a"+string(rune('1'+i)), "ta", t0.Add(time.Duration(i)*time.Second))})
	}
	writes = append(writes, store.Write{Object: dueObject("b1", "tb", t0.Add(10*time.Second))},
		store.Write{Object: dueObject("b2", "tb", t0.Add(11*time.Second))},
		store.Write{Object: dueObject("later", "tb", t0.Add(time.Hour))})
	for _, w := range writes {
		if err := a.Commit(ctx, store.Batch{Writes: []store.Write{w}}); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(time.Minute)
	claim := func(s *pgstore.Store, n int, ttl time.Duration) []store.Scheduled {
		t.Helper()
		got, err := s.ClaimDue(ctx, now, n, 2, ttl)
		if err != nil {
			t.Fatalf("ClaimDue = %v", err)
		}
		return got
	}
	// A claim writes no row (a row version would be a dead tuple per phase).
	db := connect(t, url)
	rowVersion := func() string {
		var xmin string
		if err := db.QueryRow(ctx, "SELECT xmin::text FROM objects WHERE id = 'a1'").Scan(&xmin); err != nil {
			t.Fatal(err)
		}
		return xmin
	}
	before := rowVersion()
	// Batches of 2 in tenant turns: ta's first 2 and tb's first 2 come before ta's next.
	if got, want := ids(claim(a, 4, time.Minute)), []string{"a1", "a2", "b1", "b2"}; !slices.Equal(got, want) {
		t.Errorf("A claims %v, want %v", got, want)
	}
	if after := rowVersion(); after != before {
		t.Errorf("claiming a1 wrote its row (xmin %s, then %s)", before, after)
	}
	if got := ids(claim(b, 100, time.Minute)); len(got) != 0 {
		t.Errorf("B claims %v, want none (A's commits started them all, and A's lease holds)", got)
	}
	all := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "b1", "b2"}
	got := claim(a, 100, time.Minute)
	if !slices.Equal(ids(got), all) {
		t.Errorf("A claims again %v, want %v (earliest first, not the one due later)", ids(got), all)
	}
	for _, d := range got {
		if d.Object == nil || d.Object.ID != d.ID || d.Object.Tenant != d.Tenant || d.Object.Kind != d.Kind || d.Object.Version != 1 {
			t.Errorf("claimed %s comes with %+v, want the object as committed", d.ID, d.Object)
		}
	}

	// B writes a1, still due: a1 is B's, at its new version.
	a1 := storetest.MustGet(t, b, "ta", "a1")
	storetest.MustUpdate(t, b, a1)
	if got := claim(b, 100, time.Minute); len(got) != 1 || got[0].ID != "a1" || got[0].Object.Version != a1.Version {
		t.Errorf("B claims %v after its write of a1, want a1 at version %d", got, a1.Version)
	}
	// A, which has not heard of B's write (no notifications here), lands a1 from its stale
	// copy: refused, and then A no longer claims it.
	stale := claim(a, 1, time.Minute)[0].Object
	stale.Version++
	if err := a.Commit(ctx, store.Batch{Writes: []store.Write{{Object: stale, Expect: stale.Version - 1}}, Background: true}); !errors.Is(err, store.ErrVersion) {
		t.Fatalf("A's landing of a1 from its stale copy = %v, want ErrVersion", err)
	}
	if got, want := ids(claim(a, 100, time.Minute)), all[1:]; !slices.Equal(got, want) {
		t.Errorf("A claims %v after its landing of a1 was refused, want %v", got, want)
	}

	// A's lease lapses (its worker stopped claiming): a replica that starts then takes A's
	// objects over, the one due later included.
	claim(a, 100, time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	c := openPostgres(t, url)
	if got, want := ids(claim(c, 100, time.Minute)), all[1:]; !slices.Equal(got, want) {
		t.Errorf("C claims %v once A's lease lapsed, want %v", got, want)
	}
	var owners []string
	rows, err := db.Query(ctx, "SELECT DISTINCT owner FROM objects WHERE due IS NOT NULL ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	if owners, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if want := slices.Sorted(slices.Values([]string{pgstore.Name(b), pgstore.Name(c)})); !slices.Equal(owners, want) {
		t.Errorf("owners %v, want B (a1) and C (the rest): %v", owners, want)
	}
	// A, still holding its copies, and C land a2 at once: one of them does.
	var landed, refused int
	for _, s := range []*pgstore.Store{a, c} {
		var o *store.Object
		for _, d := range claim(s, 100, time.Minute) {
			if d.ID == "a2" {
				o = d.Object
			}
		}
		if o == nil {
			t.Fatalf("a2 is not among what %s holds", pgstore.Name(s))
		}
		o.Version++
		o.Due = time.Time{}
		switch err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o, Expect: o.Version - 1}}, Background: true}); {
		case err == nil:
			landed++
		case errors.Is(err, store.ErrVersion):
			refused++
		default:
			t.Fatal(err)
		}
	}
	if landed != 1 || refused != 1 {
		t.Errorf("a2 landed %d times (%d refused), want once", landed, refused)
	}
}

// A replica that closes gives up its lease: another takes over the phases it started at its
// next claim, not once the lease would have lapsed.
func TestPostgresClosedReplicaHandsOver(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openPostgres(t, url), openPostgres(t, url)
	ctx := t.Context()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const ttl = 40 * time.Millisecond // B renews its lease, and looks at the others', every 10 ms
	if got, err := b.ClaimDue(ctx, t0, 10, 10, ttl); err != nil || len(got) != 0 {
		t.Fatalf("B's first claim = %v, %v; want none", got, err)
	}
	for _, id := range []string{"m1", "m2"} {
		if err := a.Commit(ctx, store.Batch{Writes: []store.Write{{Object: dueObject(id, "acme", t0)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	closed := time.Now()
	simtest.Eventually(t, 30*time.Second, "B takes over the phases A started", func() bool {
		got, err := b.ClaimDue(ctx, t0, 10, 10, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Equal(ids(got), []string{"m1", "m2"})
	})
	if took := time.Since(closed); took > 2*time.Second {
		t.Errorf("B took A's phases over %s after A closed, want well within the lease A had (5 s)", took.Round(time.Millisecond))
	}
}

// Two stores advancing the shared clock at once both count, up to the limit.
func TestPostgresAdvanceClockOffset(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openPostgres(t, url), openPostgres(t, url)
	ctx := t.Context()
	done := make(chan error, 2)
	for _, s := range []*pgstore.Store{a, b} {
		go func() {
			for range 10 {
				if _, ok, err := s.AdvanceClockOffset(ctx, time.Minute, 24*time.Hour); err != nil || !ok {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got, err := b.ClockOffset(ctx); err != nil || got != 20*time.Minute {
		t.Errorf("ClockOffset = %v, %v; want 20m", got, err)
	}
	got, ok, err := a.AdvanceClockOffset(ctx, 24*time.Hour, 24*time.Hour)
	if err != nil || ok || got != 20*time.Minute {
		t.Errorf("AdvanceClockOffset past the limit = %v, %v, %v; want 20m, false, nil", got, ok, err)
	}
}

// Fault rules are the database's: IDs unique across stores, at most the limit per tenant even
// when stores add at once, and a rule of count 5 fired from two stores at once fires 5 times.
// The other store hears of every change to them, and of saved settings.
func TestPostgresFaultRulesAndConfig(t *testing.T) {
	a, b, ch, _ := listening(t, pgtest.Database(t))
	ctx := t.Context()
	const limit = 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	added := 0
	for _, s := range []*pgstore.Store{a, b} {
		wg.Go(func() {
			for range limit {
				r, ok, err := s.AddFaultRule(ctx, store.FaultRule{Tenant: "acme", Rule: []byte(`{}`), Count: 5}, limit)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if ok {
					added++
					if seen[r.ID] {
						t.Errorf("ID %s given twice", r.ID)
					}
					seen[r.ID] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	rules, err := a.FaultRules(ctx)
	if err != nil || added != limit || len(rules) != limit {
		t.Fatalf("%d rules added, %d stored (%v), want the limit %d", added, len(rules), err, limit)
	}
	// a hears b's changes to the rules (not its own). b may have added none of them (a's adds
	// can all come first on a loaded machine): b's delete is a change it always sends.
	if err := b.DeleteFaultRule(ctx, "acme", rules[limit-1].ID); err != nil {
		t.Fatal(err)
	}
	nextChanges(t, ch, deliveryGuard, func(c store.Changes) bool { return c.Faults })

	var fired atomic.Int64
	for _, s := range []*pgstore.Store{a, b} {
		for range 4 {
			wg.Go(func() {
				for range 5 {
					_, ok, err := s.FireFaultRule(ctx, "acme", rules[0].ID)
					if err != nil {
						t.Error(err)
					}
					if ok {
						fired.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	if got := fired.Load(); got != 5 {
		t.Errorf("a count-5 rule fired %d times from two stores at once, want 5", got)
	}
	if _, ok, err := a.FireFaultRule(ctx, "globex", rules[1].ID); ok || err != nil {
		t.Errorf("another tenant fired acme's rule: %v, %v", ok, err)
	}
	if err := b.DeleteFaultRule(ctx, "acme", rules[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteFaultRule(ctx, "acme", rules[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting a deleted rule = %v, want ErrNotFound", err)
	}

	if _, ok, err := a.Config(ctx); ok || err != nil {
		t.Errorf("Config of a new database = %v, %v; want none", ok, err)
	}
	want := store.Config{TimeScale: 0.5, HealAfter: 7 * time.Minute}
	if err := b.SetConfig(ctx, want); err != nil {
		t.Fatal(err)
	}
	nextChanges(t, ch, deliveryGuard, func(c store.Changes) bool { return c.Config })
	if got, ok, err := a.Config(ctx); !ok || err != nil || got != want {
		t.Errorf("Config = %+v, %v, %v; want %+v", got, ok, err, want)
	}
}

// Dashboard sessions: a session stored by one store is read by another until it expires, is
// extended by use, and a tenant keeps at most the limit.
func TestPostgresSessions(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openPostgres(t, url), openPostgres(t, url)
	ctx := t.Context()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const ttl = time.Hour
	s := store.Session{Key: []byte("k1"), Tenant: "\x00admin", TokenHash: []byte{0, 1}, CSRF: "c", Expires: now.Add(ttl)}
	if err := a.CreateSession(ctx, s, now, 3); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.Session(ctx, []byte("k1"), now.Add(ttl/2), ttl)
	if err != nil || !ok || got.Tenant != s.Tenant || !slices.Equal(got.TokenHash, s.TokenHash) || got.CSRF != "c" || !got.Expires.Equal(now.Add(ttl/2+ttl)) {
		t.Fatalf("Session = %+v, %v, %v; want %+v extended to %s", got, ok, err, s, now.Add(ttl/2+ttl))
	}
	if _, ok, _ := b.Session(ctx, []byte("k1"), now.Add(ttl+ttl/2-time.Nanosecond), ttl); !ok {
		t.Error("a session used within its TTL expired")
	}
	if _, ok, _ := b.Session(ctx, []byte("k1"), now.Add(5*ttl), ttl); ok {
		t.Error("a session unused past its TTL is still valid")
	}
	for i := range 5 {
		k := []byte{'t', byte('0' + i)}
		if err := a.CreateSession(ctx, store.Session{Key: k, Tenant: "acme", Expires: now.Add(ttl + time.Duration(i))}, now, 3); err != nil {
			t.Fatal(err)
		}
	}
	live := 0
	for i := range 5 {
		if _, ok, _ := b.Session(ctx, []byte{'t', byte('0' + i)}, now, ttl); ok {
			live++
		}
	}
	if live != 3 {
		t.Errorf("acme holds %d sessions, want the limit 3", live)
	}
	if err := b.EndSession(ctx, []byte{'t', '4'}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Session(ctx, []byte{'t', '4'}, now, ttl); ok {
		t.Error("an ended session is still valid")
	}
}

// GetLineage reads an object and its ancestors, nearest first, within the tenant and up to
// the depth asked; an object that is not there (or another tenant's) is not found.
func TestPostgresGetLineage(t *testing.T) {
	s := openPostgres(t, pgtest.Database(t))
	ctx := t.Context()
	acct := storetest.NewObject("acct", "t", "account")
	cs := storetest.NewObject("cs", "t", "cloudspace")
	cs.ParentID = acct.ID
	vm := storetest.NewObject("vm", "t", "machine")
	vm.ParentID = cs.ID
	other := storetest.NewObject("other", "u", "machine")
	other.ParentID = cs.ID // names a parent of another tenant: not its ancestor
	for _, o := range []*store.Object{acct, cs, vm, other} {
		if err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		tenant, id string
		depth      int
		want       []string
	}{
		{"t", "vm", 0, []string{"vm"}},
		{"t", "vm", 1, []string{"vm", "cs"}},
		{"t", "vm", 2, []string{"vm", "cs", "acct"}},
		{"t", "vm", 5, []string{"vm", "cs", "acct"}},
		{"t", "cs", 3, []string{"cs", "acct"}},
		{"u", "other", 3, []string{"other"}},
	} {
		objs, err := s.GetLineage(ctx, tc.tenant, tc.id, tc.depth)
		if err != nil {
			t.Fatalf("GetLineage(%s, %s, %d) = %v", tc.tenant, tc.id, tc.depth, err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("GetLineage(%s, %s, %d) = %v, want %v", tc.tenant, tc.id, tc.depth, got, tc.want)
		}
	}
	for _, tc := range [][2]string{{"t", "missing"}, {"u", "vm"}} {
		if _, err := s.GetLineage(ctx, tc[0], tc[1], 2); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetLineage(%s, %s) = %v, want ErrNotFound", tc[0], tc[1], err)
		}
	}
}

// Every commit path keeps an object's due time and owner (schema 8) in its row: a write with a
// due time schedules it at that time for the writing replica, one without or a removal takes
// it off;
// and the events the writes carry are numbered on from the object's last, due time or not.
// With a set read the commit locks first and writes after (applyWrite); without, each write
// is one statement (writeObject).
func TestPostgresSchedule(t *testing.T) {
	for _, tt := range []struct {
		name string
		sets []store.SetRead
	}{
		{name: "fused writes"},
		{name: "writes after a set read", sets: []store.SetRead{{Tenant: "acme", Filter: store.Filter{Kind: "disk"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := pgtest.Database(t)
			s := openPostgres(t, url)
			ctx := t.Context()
			t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			o := dueObject("m1", "acme", t0)
			commit := func(remove bool, due time.Time, events int) {
				t.Helper()
				w := store.Write{Object: o, Expect: o.Version, Remove: remove}
				if o.Version == 0 {
					o.Version = 1
					w.Expect = 0
				} else {
					o.Version++
				}
				o.Due = due
				for range events {
					w.Events = append(w.Events, storetest.NewEvent(o, o.State))
				}
				if err := s.Commit(ctx, store.Batch{Writes: []store.Write{w}, Sets: tt.sets}); err != nil {
					t.Fatalf("Commit = %v", err)
				}
			}
			db := connect(t, url)
			check := func(what string, wantDue time.Time, wantEvents int) {
				t.Helper()
				// The row holds the due time and who lands it (schema 8), or neither.
				var rowDue *int64
				var rowOwner *string
				err := db.QueryRow(ctx, "SELECT due, owner FROM objects WHERE id = 'm1'").Scan(&rowDue, &rowOwner)
				switch {
				case errors.Is(err, pgx.ErrNoRows) && wantEvents == 0:
				case err != nil:
					t.Fatalf("%s: %v", what, err)
				case wantDue.IsZero() && (rowDue != nil || rowOwner != nil):
					t.Errorf("%s: due %v owner %v, want neither", what, rowDue, rowOwner)
				case !wantDue.IsZero() && (rowDue == nil || *rowDue != wantDue.UnixNano() || rowOwner == nil || *rowOwner != pgstore.Name(s)):
					t.Errorf("%s: due %v owner %v, want %d and %s", what, rowDue, rowOwner, wantDue.UnixNano(), pgstore.Name(s))
				}
				next, ok, err := s.NextDue(ctx)
				if err != nil || ok != !wantDue.IsZero() || ok && !next.Equal(wantDue) {
					t.Errorf("%s: NextDue = %v, %v, %v; want %v", what, next, ok, err, wantDue)
				}
				due, err := s.Due(ctx, t0.Add(time.Hour))
				if err != nil || len(due) != 0 != !wantDue.IsZero() {
					t.Errorf("%s: Due = %v, %v; want m1 listed: %v", what, due, err, !wantDue.IsZero())
				}
				if wantEvents == 0 {
					return
				}
				evs, err := s.Events(ctx, "acme", "m1")
				if err != nil || len(evs) != wantEvents {
					t.Fatalf("%s: Events = %d events, %v; want %d", what, len(evs), err, wantEvents)
				}
				for i, e := range evs {
					if e.Seq != int64(i+1) {
						t.Errorf("%s: event %d has seq %d, want %d", what, i, e.Seq, i+1)
					}
				}
			}
			o.Version = 0
			commit(false, t0, 1)
			check("inserted due", t0, 1)
			commit(false, t0.Add(time.Minute), 2)
			check("moved", t0.Add(time.Minute), 3)
			commit(false, t0.Add(time.Minute), 1) // the same due time
			if got, err := s.ClaimDue(ctx, t0.Add(time.Hour), 10, 10, time.Hour); err != nil || len(got) != 1 || got[0].Object.Version != o.Version {
				t.Fatalf("ClaimDue = %v, %v; want m1 at version %d", got, err, o.Version)
			}
			commit(false, time.Time{}, 1)
			check("landed", time.Time{}, 5)
			commit(false, t0, 0)
			check("due again", t0, 5)
			commit(true, time.Time{}, 1)
			check("removed", time.Time{}, 0)
		})
	}
}

// The decision cache (GetLineageCached) answers from what the store last committed or read of
// an object and its ancestors; another store's commit drops the object's entry once its
// notification arrives, and the next call reads it (and holds it again).
func TestPostgresDecisionCache(t *testing.T) {
	a, b, ch, _ := listening(t, pgtest.Database(t))
	ctx := t.Context()
	cs := storetest.NewObject("cs", "acme", "cloudspace")
	vm := storetest.NewObject("vm", "acme", "machine")
	vm.ParentID = cs.ID
	for _, o := range []*store.Object{cs, vm} {
		if err := a.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o}}}); err != nil {
			t.Fatal(err)
		}
	}
	lineage := func(tenant string, depth int, wantCached bool, want ...string) []*store.Object {
		t.Helper()
		objs, cached, err := a.GetLineageCached(ctx, tenant, "vm", depth)
		if err != nil {
			t.Fatalf("GetLineageCached(%s, vm, %d) = %v", tenant, depth, err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.ID)
		}
		if cached != wantCached || !slices.Equal(got, want) {
			t.Fatalf("GetLineageCached(%s, vm, %d) = %v, cached %v; want %v, cached %v", tenant, depth, got, cached, want, wantCached)
		}
		return objs
	}
	lineage("acme", 1, true, "vm", "cs") // as committed

	changed := storetest.MustGet(t, b, "acme", "vm")
	changed.State = "STOPPING"
	storetest.MustUpdate(t, b, changed)
	nextChanges(t, ch, deliveryGuard, hasObject("vm"))
	if got := lineage("acme", 1, false, "vm", "cs")[0]; got.State != "STOPPING" || got.Version != 2 {
		t.Errorf("after another store's commit: %s at version %d, want STOPPING at 2", got.State, got.Version)
	}
	lineage("acme", 1, true, "vm", "cs") // held again
	if _, _, err := a.GetLineageCached(ctx, "other", "vm", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLineageCached of another tenant's object = %v, want ErrNotFound", err)
	}
}
