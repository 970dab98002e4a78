package sqlitestore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// From schema version 10 the log and the file hold each object's packed form, as the table
// does (a write encodes its object once); a file of version 9, whose rows and log frames hold
// JSON, opens with its objects as they were: the crash's frames replayed, the rows loaded.
func TestSQLiteFileOfVersion9(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "lifecyclesim.db")
	s := openSQLiteT(t, path)
	m0 := storetest.NewObject("m0", "acme", "machine")
	m0.Spec["vcpus"], m0.Status["ip"], m0.Defaulted = 2.0, "10.0.0.1", []string{"vcpus"}
	m0.Due = storetest.T0.Add(time.Minute)
	storetest.MustCreate(t, s, m0, storetest.NewEvent(m0, "DEPLOYING"))
	if err := s.Close(); err != nil { // checkpointed: m0 is a row of the objects table
		t.Fatal(err)
	}
	s = openSQLiteWait(t, path, time.Hour) // no checkpoint: the next writes stay in the log
	writeThreeChanges(t, s)
	want := map[string]*store.Object{}
	for _, id := range []string{"m0", "m1", "m2"} {
		want[id] = storetest.MustGet(t, s, "acme", id)
	}
	crashed := filepath.Join(t.TempDir(), "crashed.db")
	copyDB(t, s, crashed)

	// This version's file and log hold the packed form.
	db := openRaw(t, crashed)
	var data []byte
	if err := db.QueryRowContext(ctx, "SELECT data FROM objects WHERE id = 'm0'").Scan(&data); err != nil {
		t.Fatal(err)
	}
	if !codec.IsPacked(data) {
		t.Errorf("the file holds m0 as %q, want its packed form", data)
	}
	var logged []recordWrite
	forEachLogWrite(t, crashed+logSuffix, func(w *recordWrite) { logged = append(logged, *w) })
	if len(logged) != 3 {
		t.Fatalf("the log holds %d writes, want 3", len(logged))
	}
	for _, w := range logged {
		if !codec.IsPacked(codec.Bytes(w.Data)) {
			t.Errorf("the log holds %s as %q, want its packed form", w.id, w.Data)
		}
	}

	// The same file and log as version 9 wrote them: JSON.
	rows, err := db.QueryContext(ctx, "SELECT id, tenant, kind, parent_id, state, version, data FROM objects")
	if err != nil {
		t.Fatal(err)
	}
	asJSON := map[string][]byte{}
	for rows.Next() {
		var c codec.Columns
		if err := rows.Scan(&c.ID, &c.Tenant, &c.Kind, &c.ParentID, &c.State, &c.Version, &data); err != nil {
			t.Fatal(err)
		}
		asJSON[c.ID] = objectJSON(t, data, c)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	for id, j := range asJSON {
		if _, err := db.ExecContext(ctx, "UPDATE objects SET data = ? WHERE id = ?", string(j), id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "PRAGMA user_version = 9"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rewriteLogWith(t, crashed+logSuffix, formatBlocks, func(frame []byte) []byte {
		var out []byte
		forEachWrite(t, frame, func(w *recordWrite) {
			if !w.remove {
				w.Data = string(objectJSON(t, codec.Bytes(w.Data),
					codec.Columns{ID: w.id, Tenant: w.Tenant, Kind: w.Kind, ParentID: w.Parent, State: w.State, Version: w.Version}))
			}
			out = (&record{writes: []recordWrite{*w}}).encode(out)
		}, func(k recordKey) { out = (&record{key: &k}).encode(out) })
		return out
	})

	c := openSQLiteT(t, crashed)
	checkThreeChanges(t, c, "after a version-9 file and log were opened")
	for id, o := range want {
		if got := storetest.MustGet(t, c, "acme", id); !reflect.DeepEqual(got, o) {
			t.Errorf("%s from a version-9 file =\n%+v\nwant\n%+v", id, got, o)
		}
	}
	m0.State = "RUNNING" // Update moves it from its version to the next
	storetest.MustUpdate(t, c, m0, storetest.NewEvent(m0, "RUNNING"))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = openSQLiteT(t, crashed)
	if got := storetest.MustGet(t, c, "acme", "m0"); got.State != "RUNNING" || got.Spec["vcpus"] != 2.0 {
		t.Errorf("m0 after an update and a reopen = %s %v, want RUNNING with its spec", got.State, got.Spec)
	}
}

// objectJSON is the JSON a version-9 build kept for the object packed as data with columns c.
func objectJSON(t *testing.T, data []byte, c codec.Columns) []byte {
	t.Helper()
	o, err := codec.UnpackObject(data, c)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// forEachLogWrite calls fn with each write of the frames of the log at path.
func forEachLogWrite(t *testing.T, path string, fn func(*recordWrite)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range readFrames(b) {
		forEachWrite(t, f.data, fn, func(recordKey) {})
	}
}

// forEachWrite calls write with each write of a frame's records and key with each key.
func forEachWrite(t *testing.T, frame []byte, write func(*recordWrite), key func(recordKey)) {
	t.Helper()
	if err := scanRecords(frame, writeVisitor{write, key}); err != nil {
		t.Fatal(err)
	}
}

type writeVisitor struct {
	w func(*recordWrite)
	k func(recordKey)
}

func (writeVisitor) resetAll()              {}
func (v writeVisitor) write(w *recordWrite) { v.w(w) }
func (v writeVisitor) key(k recordKey)      { v.k(k) }
