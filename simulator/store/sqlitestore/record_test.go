package sqlitestore

import (
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/table"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// TestJournalKeyTimes: a record's idempotency key keeps its time through the journal, and a
// row written before keys had times (kind 0) still decodes, its key with no time.
func TestJournalKeyTimes(t *testing.T) {
	at := storetest.T0.UnixNano()
	r := &record{writes: []recordWrite{{id: "m1", Row: table.Row{Tenant: "acme", Kind: "machine", State: "RUNNING"}}},
		key: &recordKey{tenant: "acme", key: "k1", id: "m1", hash: "h", at: at}}
	var cp checkpointBatch
	err := scanRecords(r.encode(nil), &cp)
	if got := cp.keys[[2]string{"acme", "k1"}]; err != nil || len(cp.keys) != 1 || got != *r.key {
		t.Fatalf("scan(encode(record)) = keys %+v, %v; want its key %+v", cp.keys, err, *r.key)
	}
	cp.clear()
	err = scanRecords(kindZeroRow(r), &cp)
	want := *r.key
	want.at = 0
	if got := cp.keys[[2]string{"acme", "k1"}]; err != nil || len(cp.keys) != 1 || got != want {
		t.Fatalf("scan(old row) = keys %+v, %v; want its key %+v", cp.keys, err, want)
	}
}

// kindZeroRow is a record with a key as versions before keys had times wrote it: kind 0, and
// nothing after the key's hash.
func kindZeroRow(r *record) []byte {
	blob := r.encode(nil)
	return append([]byte{0}, blob[1:len(blob)-len(binary.AppendVarint(nil, r.key.at))]...)
}

// TestSQLiteReplaysOldJournalKeys: a journal row written before keys had times (kind 0) is
// replayed on open, and its key counts store.KeyRetention from then by the simulator's clock (the
// wall clock plus the file's offset: here two days ahead).
func TestSQLiteReplaysOldJournalKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old-journal.db")
	s := openSQLiteT(t, path)
	const offset = 48 * time.Hour
	if err := s.SetClockOffset(t.Context(), offset); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// What a crash left: a row of the journal as versions before kind 2 wrote it.
	r := &record{writes: []recordWrite{{id: "m1", Row: table.Row{Tenant: "acme", Kind: "machine", State: "RUNNING", Data: `{}`}}},
		key: &recordKey{tenant: "acme", key: "k-journal", id: "m1", hash: "h"}}
	old := kindZeroRow(r)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO journal (data) VALUES (?)", old); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s = openSQLiteT(t, path)
	if rows := journalRows(t, s); rows != 0 {
		t.Errorf("journal rows after replay = %d, want 0 (a row left would be applied again at every open)", rows)
	}
	found := func(key string) bool {
		t.Helper()
		_, _, ok, err := s.Idempotent(t.Context(), "acme", key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !found("k-journal") {
		t.Fatal("the replayed journal's key is missing")
	}
	at := time.Now().Add(offset) // the simulator's clock at the open, about
	for i, next := range []time.Time{at.Add(time.Hour), at.Add(store.KeyRetention - time.Minute), at.Add(store.KeyRetention + time.Hour)} {
		if err := s.Commit(t.Context(), store.Batch{Key: fmt.Sprint("k", i), KeyAt: next, Writes: []store.Write{{Object: storetest.NewObject(fmt.Sprint("n", i), "acme", "machine")}}}); err != nil {
			t.Fatal(err)
		}
		storetest.Checkpointed(t, s)
		if want := i < 2; found("k-journal") != want {
			t.Errorf("after a key at +%v: the replayed key found %v, want %v", next.Sub(at), !want, want)
		}
	}
}

// appendEventJSON writes what json.Marshal wrote: every field of store.Event but the three the
// columns hold decodes back as it was, strings with quotes, control characters, HTML and
// invalid UTF-8 too. A field added to store.Event and not to appendEventJSON fails here.
func TestAppendEventJSON(t *testing.T) {
	tricky := []string{"plain", "", `quote " back \ slash`, "tab\tnew\nline\x00\x1f", "<a href='x'>&amp;</a>", "bad \xff\xfe utf-8 \xe2\x82", "ünïcødé ✓ \u2028"}
	for i, str := range tricky {
		var e store.Event
		v := reflect.ValueOf(&e).Elem()
		for f := range v.NumField() {
			switch fv := v.Field(f); fv.Kind() {
			case reflect.String:
				fv.SetString(str + fmt.Sprint(f%3)) // never empty: omitempty fields are written
			case reflect.Int64:
				fv.SetInt(int64(7 + f))
			default:
				if fv.Type() != reflect.TypeFor[time.Time]() {
					t.Fatalf("Event.%s is a %s: teach appendEventJSON and this test about it", v.Type().Field(f).Name, fv.Type())
				}
				fv.Set(reflect.ValueOf(storetest.T0.Add(time.Duration(i)).In(time.FixedZone("", -(i*3600 + 1800)))))
			}
		}
		got, err := appendEventJSON([]byte("prefix"), e)
		if err != nil || !strings.HasPrefix(string(got), "prefix") {
			t.Fatalf("appendEventJSON(%q) = %q, %v", str, got, err)
		}
		var back, want store.Event
		if err := json.Unmarshal(got[len("prefix"):], &back); err != nil {
			t.Fatalf("appendEventJSON(%q) wrote %s, which does not decode: %v", str, got, err)
		}
		e.ObjectID, e.Tenant, e.Seq = "", "", 0 // the columns hold them
		old, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(old, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, want) || !back.Time.Equal(e.Time) {
			t.Errorf("appendEventJSON(%q) decodes to %+v, json.Marshal's to %+v", str, back, want)
		}
	}
	// Empty optional fields are left out, as omitempty leaves them.
	e := store.Event{Time: storetest.T0, Actor: "system", To: "RUNNING"}
	if got, _ := appendEventJSON(nil, e); string(got) != `{"time":"2025-03-14T15:09:26.535897932Z","actor":"system","to":"RUNNING"}` {
		t.Errorf("appendEventJSON(minimal event) = %s", got)
	}
	if _, err := appendEventJSON(nil, store.Event{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Error("appendEventJSON(year 10000) succeeded, want json.Marshal's error")
	}
}
