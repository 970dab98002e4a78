package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// The PostgreSQL tests start one throwaway cluster for the package (on first use) and give
// each test a database of its own; see package pgtest.
func TestMain(m *testing.M) { pgtest.Main(m) }

// openPostgres opens a store on url, closed when the test ends.
func openPostgres(t testing.TB, url string) *store.PostgresStore {
	t.Helper()
	s, err := store.OpenPostgres(t.Context(), url)
	if err != nil {
		t.Fatalf("OpenPostgres = %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return s
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
	stores := make([]*store.PostgresStore, replicas)
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Go(func() { stores[i], errs[i] = store.OpenPostgres(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: OpenPostgres = %v", i, err)
			continue
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	if t.Failed() {
		return
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(t.Context(), "SELECT version FROM schema_migrations ORDER BY version")
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for v := 1; v <= store.PostgresSchemaVersion(); v++ {
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

// A database whose schema a newer build wrote is refused, not written with an older schema's
// statements.
func TestPostgresRefusesNewerSchema(t *testing.T) {
	url := pgtest.Database(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	newer := store.PostgresSchemaVersion() + 1
	if _, err := conn.Exec(t.Context(), "INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')", newer); err != nil {
		t.Fatal(err)
	}
	_, err = store.OpenPostgres(t.Context(), url)
	if err == nil || !strings.Contains(err.Error(), "newer than this build's") {
		t.Errorf("OpenPostgres of a newer schema = %v, want an error saying it is newer", err)
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
