package sqlitestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// A checkpoint writes the events an object gained over the records it applies as one row of
// the events table (a JSON array keyed by the last one's number); they read back in order,
// after a reopen too, beside rows of one event.
func TestSQLiteCheckpointWritesAnObjectsEventsInOneRow(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "lifecyclesim.db")
	s := openSQLiteWait(t, path, time.Hour) // one checkpoint, at Close
	m1 := storetest.NewObject("m1", "acme", "machine")
	storetest.MustCreate(t, s, m1, storetest.NewEvent(m1, "DEPLOYING"))
	for _, to := range []string{"RUNNING", "STOPPING", "HALTED"} {
		m1.State = to
		storetest.MustUpdate(t, s, m1, storetest.NewEvent(m1, to))
	}
	m2 := storetest.NewObject("m2", "acme", "machine")
	storetest.MustCreate(t, s, m2, storetest.NewEvent(m2, "DEPLOYING"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openSQLiteWait(t, path, time.Hour)
	if got, want := eventRowShapes(t, s), "m1:4[ m2:1{"; got != want {
		t.Errorf("event rows = %s, want %s (object:seq, then the data's first byte)", got, want)
	}
	if seqs, tos := storetest.EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2, 3, 4}) ||
		!reflect.DeepEqual(tos, []string{"DEPLOYING", "RUNNING", "STOPPING", "HALTED"}) {
		t.Errorf("m1 events = %v %v, want 1..4 DEPLOYING RUNNING STOPPING HALTED", seqs, tos)
	}
	m1.State = "STARTING"
	storetest.MustUpdate(t, s, m1, storetest.NewEvent(m1, "STARTING"), storetest.NewEvent(m1, "STARTING"))
	// Pending (journaled) events go on from the file's.
	if seqs, _ := storetest.EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2, 3, 4, 5, 6}) {
		t.Errorf("m1 events with two pending = %v, want 1..6", seqs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openSQLiteT(t, path)
	if got, want := eventRowShapes(t, s), "m1:4[ m1:6[ m2:1{"; got != want {
		t.Errorf("event rows after a second checkpoint = %s, want %s", got, want)
	}
	if seqs, tos := storetest.EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2, 3, 4, 5, 6}) || tos[5] != "STARTING" {
		t.Errorf("m1 events after reopen = %v %v, want 1..6 ending STARTING", seqs, tos)
	}
	if _, err := s.Events(ctx, "other", "m1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events(other tenant) = %v, want store.ErrNotFound", err)
	}
}

// eventRowShapes lists a file's event rows as object:seq and the first byte of their data.
func eventRowShapes(t *testing.T, s *Store) string {
	t.Helper()
	rows, err := s.rdb.QueryContext(t.Context(), "SELECT object_id, seq, substr(data, 1, 1) FROM events ORDER BY object_id, seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, first string
		var seq int64
		if err := rows.Scan(&id, &seq, &first); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s:%d%s", id, seq, first))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// A version before 6 could checkpoint part of a group; replaying the rest after a crash writes
// that group's events again, in one row with the ones it had written in their own: each event
// reads back once.
func TestSQLiteEventsReadOverlappingRows(t *testing.T) {
	ctx := t.Context()
	s := openSQLiteT(t, filepath.Join(t.TempDir(), "lifecyclesim.db"))
	m1 := storetest.NewObject("m1", "acme", "machine")
	storetest.MustCreate(t, s, m1, storetest.NewEvent(m1, "DEPLOYING"))
	storetest.Checkpointed(t, s)
	event := func(to string) string {
		b, err := json.Marshal(store.Event{Time: storetest.T0, Actor: "user", To: to})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, row := range []struct {
		seq  int
		data string
	}{
		{2, event("RUNNING")},
		{3, "[" + event("RUNNING") + "," + event("STOPPING") + "]"},
	} {
		if _, err := s.db.ExecContext(ctx, "INSERT INTO events (object_id, seq, tenant, data) VALUES ('m1', ?, 'acme', ?)", row.seq, row.data); err != nil {
			t.Fatal(err)
		}
	}
	if seqs, tos := storetest.EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2, 3}) ||
		!reflect.DeepEqual(tos, []string{"DEPLOYING", "RUNNING", "STOPPING"}) {
		t.Errorf("events = %v %v, want 1..3 DEPLOYING RUNNING STOPPING", seqs, tos)
	}
}

// A checkpoint forgets only the pending events and keys of the records it applied: those
// applied to the table and not yet appended stay.
func TestCheckpointPrunesWhatItApplied(t *testing.T) {
	s := &Store{}
	s.clearPending()
	for rec := uint64(1); rec <= 3; rec++ {
		s.events["m1"] = appendPendingEvent(s.events["m1"], rec, int64(rec), "acme", []byte(fmt.Sprint(rec)))
		s.keys[[2]string{"acme", fmt.Sprint("k", rec)}] = pendingKey{id: "m1", rec: rec}
	}
	s.events["m2"] = appendPendingEvent(nil, 2, 1, "acme", []byte(`{}`))
	s.prune(2)
	var left []int64
	pendingEvents(s.events["m1"], func(rec uint64, seq int64, tenant, data []byte, _ int) bool {
		left = append(left, seq)
		return true
	})
	if _, ok := s.events["m2"]; ok || !reflect.DeepEqual(left, []int64{3}) || len(s.keys) != 1 {
		t.Errorf("after prune(2): m1's events %v, m2 kept %v, %d keys; want [3], false, 1", left, ok, len(s.keys))
	}
}

// A checkpoint of more records than checkpointChunk bytes applies them a chunk at a time in its
// one transaction (so that it holds no more than a chunk of frames): an object changed in
// several chunks ends as it was last written, its events in a row per chunk that read back
// once each and in order, after a reopen too.
func TestSQLiteCheckpointInChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lifecyclesim.db")
	s := openSQLiteWait(t, path, time.Hour) // one checkpoint, at Close
	note := strings.Repeat("n", 64<<10)
	const objects, rounds = 16, 8 // 128 records of 64 KB: 2 chunks
	ms := make([]*store.Object, objects)
	for i := range ms {
		ms[i] = storetest.NewObject(fmt.Sprintf("m%02d", i), "acme", "machine")
		ms[i].Spec["note"] = note
		storetest.MustCreate(t, s, ms[i], storetest.NewEvent(ms[i], "DEPLOYING"))
	}
	for r := 1; r < rounds; r++ {
		for _, m := range ms {
			m.State, m.Spec["round"] = fmt.Sprint("S", r), float64(r)
			storetest.MustUpdate(t, s, m, storetest.NewEvent(m, m.State))
		}
	}
	if s.jd.records*len(note) < 2*checkpointChunk {
		t.Fatalf("%d records of some %d bytes: fewer than two chunks", s.jd.records, len(note))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openSQLiteT(t, path)
	wantTos := []string{"DEPLOYING"}
	for r := 1; r < rounds; r++ {
		wantTos = append(wantTos, fmt.Sprint("S", r))
	}
	for _, m := range ms {
		got := storetest.MustGet(t, s, "acme", m.ID)
		if got.State != m.State || got.Version != m.Version || got.Spec["round"] != float64(rounds-1) || got.Spec["note"] != note {
			t.Errorf("%s after the checkpoint = %s v%d round %v, want %s v%d round %d", m.ID, got.State, got.Version, got.Spec["round"], m.State, m.Version, rounds-1)
		}
		seqs, tos := storetest.EventSeqs(t, s, "acme", m.ID)
		if len(seqs) != rounds || seqs[0] != 1 || seqs[rounds-1] != rounds || !reflect.DeepEqual(tos, wantTos) {
			t.Errorf("%s's events = %v %v, want 1..%d %v", m.ID, seqs, tos, rounds, wantTos)
		}
	}
	if rows, want := strings.Count(eventRowShapes(t, s), "m"), objects; rows <= want {
		t.Errorf("%d event rows for %d objects: one checkpoint of %d MB applied in one piece", rows, want, objects*rounds*len(note)>>20)
	}
}
