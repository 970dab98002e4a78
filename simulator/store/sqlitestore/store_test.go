package sqlitestore

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

func openSQLiteT(t testing.TB, path string) *Store {
	t.Helper()
	return openSQLiteWait(t, path, checkpointAfter)
}

// openSQLiteWait is openSQLiteT with a journal that checkpoints after wait when quiet. The
// store is closed when the test ends (closing it first is fine).
func openSQLiteWait(t testing.TB, path string, wait time.Duration) *Store {
	t.Helper()
	s, err := openStore(t.Context(), path, wait)
	if err != nil {
		t.Fatalf("Open(%q) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return s
}

func TestSQLitePragmas(t *testing.T) {
	s := openSQLiteT(t, filepath.Join(t.TempDir(), "lifecyclesim.db"))
	var mode string
	var syncMode, version int
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v, want wal", mode, err)
	}
	for name, db := range map[string]*sql.DB{"writer": s.db, "reader": s.rdb} {
		if err := db.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&syncMode); err != nil || syncMode != 2 {
			t.Errorf("%s: synchronous = %d, %v, want 2 (FULL)", name, syncMode, err)
		}
	}
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&version); err != nil || version != sqliteSchemaVersion {
		t.Errorf("user_version = %d, %v, want %d", version, err, sqliteSchemaVersion)
	}
	if _, err := s.rdb.ExecContext(t.Context(), "DELETE FROM objects"); err == nil {
		t.Errorf("the read pool accepted a write")
	}
}

func TestSQLiteOpenErrors(t *testing.T) {
	for _, path := range []string{"", "x.db?mode=ro", "file:x.db", filepath.Join(t.TempDir(), "missing", "x.db")} {
		if s, err := Open(t.Context(), path); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error", path)
		}
	}

	path := filepath.Join(t.TempDir(), "future.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(t.Context(), fmt.Sprintf("PRAGMA user_version = %d", sqliteSchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(t.Context(), path); err == nil {
		s.Close()
		t.Errorf("Open(newer schema) succeeded, want an error")
	}

	// A file that is no database is refused, and no log is left beside it.
	notDB := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(t.Context(), notDB); err == nil {
		s.Close()
		t.Errorf("Open(a text file) succeeded, want an error")
	}
	if _, err := os.Stat(notDB + logSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused open left %s (%v), want nothing beside the file", notDB+logSuffix, err)
	}
}

func TestSQLiteReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "lifecyclesim.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	m1 := storetest.NewObject("m1", "acme", "machine")
	m1.Spec = map[string]any{"memory": 2048.0, "nested": map[string]any{"a": []any{1.0, "b"}}}
	storetest.MustCreate(t, s, m1, storetest.NewEvent(m1, "DEPLOYING"))
	m1.State, m1.Due = "STARTING", storetest.T0.Add(5*time.Second+3)
	m1.Op = &store.Operation{ID: "op1", Action: "start", From: "HALTED", StartedAt: storetest.T0, PhaseStarted: storetest.T0}
	storetest.MustUpdate(t, s, m1, storetest.NewEvent(m1, "HALTED"), storetest.NewEvent(m1, "STARTING"))
	m2 := storetest.NewObject("m2", "acme", "machine")
	storetest.MustCreate(t, s, m2, storetest.NewEvent(m2, "DEPLOYING"))
	if err := storetest.DeleteObject(ctx, s, "acme", "m2", 1, []store.Event{storetest.NewEvent(m2, "DESTROYED")}); err != nil {
		t.Fatal(err)
	}
	m1.Version++
	if err := storetest.UpdateObject(ctx, s, m1, m1.Version-1, nil, "key-1"); err != nil {
		t.Fatal(err)
	}
	want := storetest.Clone(m1)
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}

	s = openSQLiteT(t, path)
	if got := storetest.MustGet(t, s, "acme", "m1"); !reflect.DeepEqual(got, want) {
		t.Errorf("Get after reopen = %+v, want %+v", got, want)
	}
	if _, err := s.Get(ctx, "acme", "m2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(deleted) after reopen = %v, want store.ErrNotFound", err)
	}
	if seqs, tos := storetest.EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2, 3}) || tos[2] != "STARTING" {
		t.Errorf("m1 events after reopen = %v %v, want [1 2 3] ending STARTING", seqs, tos)
	}
	if seqs, _ := storetest.EventSeqs(t, s, "acme", "m2"); !reflect.DeepEqual(seqs, []int64{1, 2}) {
		t.Errorf("m2 events after reopen = %v, want [1 2]", seqs)
	}
	if id, _, ok, err := s.Idempotent(ctx, "acme", "key-1"); err != nil || !ok || id != "m1" {
		t.Errorf("Idempotent after reopen = %q, %v, %v, want m1", id, ok, err)
	}
	if next, ok, err := s.NextDue(ctx); err != nil || !ok || !next.Equal(want.Due) {
		t.Errorf("NextDue after reopen = %v, %v, %v, want %v", next, ok, err, want.Due)
	}
	if got, err := s.Due(ctx, want.Due); err != nil || !reflect.DeepEqual(storetest.ScheduledIDs(got), []string{"m1"}) {
		t.Errorf("Due after reopen = %v, %v, want [m1]", storetest.ScheduledIDs(got), err)
	}
	// Writing goes on where it stopped, for an ID used again too (the store knows removed
	// objects' last event numbers without reading the file on every create).
	storetest.MustUpdate(t, s, m1, storetest.NewEvent(m1, "RUNNING"))
	if seqs, _ := storetest.EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2, 3, 4}) {
		t.Errorf("m1 events after an update past reopen = %v, want 1..4", seqs)
	}
	again := storetest.NewObject("m2", "acme", "machine")
	storetest.MustCreate(t, s, again, storetest.NewEvent(again, "DEPLOYING"))
	if seqs, _ := storetest.EventSeqs(t, s, "acme", "m2"); !reflect.DeepEqual(seqs, []int64{1, 2, 3}) {
		t.Errorf("events of an ID used again after reopen = %v, want [1 2 3]", seqs)
	}
}

func BenchmarkSQLiteUpdate(b *testing.B) {
	b.Run("file", func(b *testing.B) {
		storetest.BenchmarkUpdate(b, openSQLiteT(b, filepath.Join(b.TempDir(), "bench.db")))
	})
	b.Run("memory", func(b *testing.B) {
		storetest.BenchmarkUpdate(b, openSQLiteT(b, ":memory:"))
	})
}

// eventsTableV7 is the events table as versions before 8 made it.
var eventsTableV7 = strings.Replace(eventsTable, "\n);", "\n) WITHOUT ROWID;", 1)

// toVersion7 turns a closed file of this version into one a version-7 build wrote: its events
// in a WITHOUT ROWID table.
func toVersion7(t testing.TB, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)

	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), `ALTER TABLE events RENAME TO events_8;
		`+eventsTableV7+`
		INSERT INTO events SELECT object_id, seq, tenant, data FROM events_8;
		DROP TABLE events_8;
		PRAGMA user_version = 7;`); err != nil {
		t.Fatal(err)
	}
}

// A file of version 7 keeps its events when they move to a rowid table on open, rows of
// several events included, and the next events are numbered on from them.
func TestSQLiteMigratesEventsToARowidTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v7.db")
	s := openSQLiteWait(t, path, time.Hour) // one checkpoint, on Close: m1's three events in one row
	m1 := storetest.NewObject("m1", "acme", "machine")
	storetest.MustCreate(t, s, m1, storetest.NewEvent(m1, "DEPLOYING"))
	m1.State = "RUNNING"
	storetest.MustUpdate(t, s, m1, storetest.NewEvent(m1, "RUNNING"), storetest.NewEvent(m1, "STOPPING"))
	m2 := storetest.NewObject("m2", "acme", "machine")
	storetest.MustCreate(t, s, m2, storetest.NewEvent(m2, "DEPLOYING"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	toVersion7(t, path)

	s = openSQLiteT(t, path)
	var version int
	var ddl string
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&version); err != nil || version != sqliteSchemaVersion {
		t.Errorf("user_version after the upgrade = %d, %v, want %d", version, err, sqliteSchemaVersion)
	}
	if err := s.db.QueryRowContext(t.Context(), "SELECT sql FROM sqlite_master WHERE name = 'events'").Scan(&ddl); err != nil || strings.Contains(ddl, "WITHOUT ROWID") {
		t.Errorf("events table after the upgrade: %q, %v; want a rowid table", ddl, err)
	}
	if seqs, tos := storetest.EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2, 3}) || tos[2] != "STOPPING" {
		t.Errorf("m1's events after the upgrade = %v %v, want [1 2 3] ending STOPPING", seqs, tos)
	}
	if seqs, _ := storetest.EventSeqs(t, s, "acme", "m2"); !reflect.DeepEqual(seqs, []int64{1}) {
		t.Errorf("m2's events after the upgrade = %v, want [1]", seqs)
	}
	storetest.MustUpdate(t, s, m1, storetest.NewEvent(m1, "HALTED"))
	storetest.Checkpointed(t, s)
	if seqs, _ := storetest.EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2, 3, 4}) {
		t.Errorf("m1's events after one more = %v, want 1..4", seqs)
	}
}

// BenchmarkSQLiteCheckpointHistory measures checkpoints of 8,192 journaled updates (16 on
// each of 512 objects, an event each, as 16 clients acting on 512 machines journal them) in
// a new file and in one that holds half a million events already, with the events table of
// this version (rowid) and of versions before 8 (without-rowid): ms/checkpoint should not
// grow with the file's history. Run:
// go test -run '^$' -bench SQLiteCheckpointHistory -benchtime 20x ./simulator/store
func BenchmarkSQLiteCheckpointHistory(b *testing.B) {
	for _, layout := range []struct{ name, events string }{{"rowid", eventsTable}, {"without-rowid", eventsTableV7}} {
		for _, history := range []int{0, 500_000} {
			b.Run(fmt.Sprintf("%s/history=%d", layout.name, history), func(b *testing.B) {
				s := openSQLiteWait(b, filepath.Join(b.TempDir(), "history.db"), time.Hour)
				if _, err := s.db.ExecContext(b.Context(), "DROP TABLE events; "+layout.events); err != nil {
					b.Fatal(err)
				}
				objs := make([]*store.Object, 512)
				for i := range objs {
					objs[i] = storetest.NewObject(fmt.Sprintf("machine-%016x", i), "acme", "machine")
					objs[i].Spec = map[string]any{"memory": 2048.0, "image": "ubuntu-24.04", "cloudspace_id": "cloudspace-0000000000000001"}
					if err := storetest.CreateObject(b.Context(), s, objs[i], nil, ""); err != nil {
						b.Fatal(err)
					}
				}
				committed := len(objs)
				round := func() { // up to the next checkpointRecords records: one checkpoint
					n := checkpointRecords - committed%checkpointRecords
					for i := range n {
						committed++
						o := objs[i%len(objs)]
						to := "RUNNING"
						if o.State == to {
							to = "HALTED"
						}
						o.State = to
						ev := store.Event{ObjectID: o.ID, Tenant: o.Tenant, Time: storetest.T0, Actor: "user", Action: "stop", From: "RUNNING", To: to,
							OperationID: fmt.Sprintf("op-%016x", i), Message: "stop requested by the user"}
						expect := o.Version
						o.Version++
						// The last commit waits: then every record before it is appended too.
						last := i == n-1
						if err := s.Commit(b.Context(), store.Batch{Background: !last, Writes: []store.Write{{Object: o, Expect: expect, Events: []store.Event{ev}}}}); err != nil {
							b.Fatal(err)
						}
					}
					storetest.Checkpointed(b, s)
				}
				for range history / checkpointRecords {
					round()
				}
				j0 := s.JournalStats()
				for b.Loop() {
					round()
				}
				j := s.JournalStats()
				b.ReportMetric(float64((j.CheckpointTime-j0.CheckpointTime).Microseconds())/1000/float64(j.Checkpoints-j0.Checkpoints), "ms/checkpoint")
			})
		}
	}
}
