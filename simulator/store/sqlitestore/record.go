package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/table"
)

// encodeEvents encodes a batch's events as the events table holds them, into one buffer: the
// events of each write, in order.
func encodeEvents(b store.Batch) ([][][]byte, error) {
	n := 0
	for _, w := range b.Writes {
		n += len(w.Events)
	}
	evs := make([][][]byte, len(b.Writes))
	all := make([][]byte, n)
	buf := make([]byte, 0, 160*n)
	var err error
	for i, w := range b.Writes {
		evs[i], all = all[:len(w.Events):len(w.Events)], all[len(w.Events):]
		for j, e := range w.Events {
			start := len(buf)
			if buf, err = appendEventJSON(buf, e); err != nil {
				return nil, fmt.Errorf("encode an event of %s: %w", w.Object.ID, err)
			}
			// A larger buffer leaves the events before in the old one, where they stay as they are.
			evs[i][j] = buf[start:len(buf):len(buf)]
		}
	}
	return evs, nil
}

// appendEventJSON appends an event's JSON as the events table holds it: its fields as
// encoding/json writes them, but for its object ID, tenant and number, which columns hold.
// It does what json.Marshal did at a tenth of its cost (it was a few per cent of an accepted
// action's); TestAppendEventJSON checks that every field of store.Event round-trips.
func appendEventJSON(b []byte, e store.Event) ([]byte, error) {
	b = append(b, `{"time":"`...)
	b, err := e.Time.AppendText(b) // RFC 3339, as time.Time's MarshalJSON (and its errors)
	if err != nil {
		return nil, err
	}
	b = append(b, `","actor":`...)
	b = appendJSONString(b, e.Actor)
	for _, f := range [...]struct {
		name, value string
		omitEmpty   bool
	}{
		{"from", e.From, true}, {"to", e.To, false}, {"action", e.Action, true},
		{"operation_id", e.OperationID, true}, {"error", e.Error, true}, {"message", e.Message, true},
	} {
		if f.value == "" && f.omitEmpty {
			continue
		}
		b = append(append(append(b, `,"`...), f.name...), `":`...)
		b = appendJSONString(b, f.value)
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string. Each byte of invalid UTF-8 becomes U+FFFD, as
// encoding/json makes it; it leaves <, > and & as they are (encoding/json escapes them for
// HTML), which decodes the same.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	if !utf8.ValidString(s) {
		var valid strings.Builder
		for _, r := range s { // an invalid byte comes as utf8.RuneError
			valid.WriteRune(r)
		}
		s = valid.String()
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// decodeEventRow decodes a row of the events table, calling add with each event and its
// number in order: one event (a JSON object), or from schema version 6 on, an object's
// consecutive events as a JSON array, the row's seq being the last one's. A checkpoint writes
// the events an object gained over the records it applies as one row: one statement and one
// B-tree insert where there were as many as events.
func decodeEventRow(seq int64, data []byte, add func(int64, store.Event)) error {
	if len(data) == 0 || data[0] != '[' {
		var e store.Event
		if err := json.Unmarshal(data, &e); err != nil {
			return err
		}
		add(seq, e)
		return nil
	}
	var evs []store.Event
	if err := json.Unmarshal(data, &evs); err != nil {
		return err
	}
	first := seq - int64(len(evs)) + 1
	for i, e := range evs {
		add(first+int64(i), e)
	}
	return nil
}

// replay checkpoints what the journal of a file still holds (opening after a crash): the rows
// of the journal table a version before 7 left, then the frames of the log past the last row
// a checkpoint applied. Then the log starts over.
func (s *Store) replay(ctx context.Context, frames []logFrame) error {
	rows, err := s.db.QueryContext(ctx, "SELECT data FROM journal ORDER BY seq")
	if err != nil {
		return fmt.Errorf("read the journal: %w", err)
	}
	// The batch points into the rows and the frames, which live until it is applied.
	var cp checkpointBatch
	for rows.Next() {
		var blob []byte
		if err := rows.Scan(&blob); err != nil {
			rows.Close()
			return fmt.Errorf("read the journal: %w", err)
		}
		if err := scanRecords(blob, &cp); err != nil {
			rows.Close()
			return fmt.Errorf("read the journal: %w", err)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("read the journal: %w", err)
	}
	applied, err := s.logRow(ctx)
	if err != nil {
		return err
	}
	s.row = applied
	rec, recorded, err := s.readLogRecord(ctx)
	if err != nil {
		return err
	}
	if recorded && s.log.f != nil {
		frames, err = s.checkedFrames(rec, applied)
		if err != nil {
			return err
		}
	}
	_, _, headerOK := logHeader(s.log.held)
	s.log.held = nil // the frames still point into it
	for _, f := range frames {
		if f.row <= applied {
			continue
		}
		if err := scanRecords(f.data, &cp); err != nil {
			return fmt.Errorf("read the log, row %d: %w", f.row, err)
		}
		s.row = max(s.row, f.row)
	}
	if err := s.log.grow(); err != nil {
		return err
	}
	next, err := s.nextLogRecord()
	if err != nil {
		return err
	}
	if !headerOK && !recorded && s.log.f != nil {
		// A new log, or one of a database that recorded nothing whose header does not check
		// out (so nothing in it reads back): its header is written first, so the database never
		// records a salt its log does not hold yet.
		if err := s.log.restartWith(next.salt); err != nil {
			return err
		}
		next.prev = next.salt
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if err := cp.apply(ctx, tx); err != nil {
			return fmt.Errorf("replay the journal: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM journal"); err != nil {
			return err
		}
		if s.log.f != nil {
			if err := setLogRecord(ctx, tx, next); err != nil {
				return err
			}
		}
		return setLogRow(ctx, tx, int64(s.row))
	})
	if err != nil {
		return err
	}
	if s.log.f != nil {
		s.logRec, s.logRecorded = next, true
	}
	return s.log.restartWith(next.salt)
}

// checkedFrames checks the log against the database's record (checkLog) and gives the frames
// to replay. A damaged log is refused (*LogDamageError) unless the store accepts the loss,
// which it then reports (LogLoss).
func (s *Store) checkedFrames(rec logRecord, applied uint64) ([]logFrame, error) {
	c := checkLog(s.log.held, s.log.existed, rec, applied)
	if c.headerRepaired {
		s.log.salt = c.salt // the salt its frames were found by, until the new header
	}
	if c.damage == "" {
		return c.frames, nil
	}
	e := &LogDamageError{Path: s.log.f.Name(), Damage: c.damage, Applied: int(applied), Replayable: len(c.frames),
		Dropped: len(c.dropped), Changes: countChanges(c.dropped), Unknown: c.unknown}
	if !s.opts.AcceptLogLoss {
		return nil, e
	}
	s.logLoss = fmt.Sprintf("the log %s %s: opened as the last checkpoint (row %d) left it plus %d frames; %s",
		e.Path, e.Damage, applied, len(c.frames), e.loss())
	return c.frames, nil
}

// logRow reads the last row of the log a checkpoint applied (0 before any).
func (s *Store) logRow(ctx context.Context) (uint64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'log_row'").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the log's checkpointed row: %w", err)
	}
	return uint64(v), nil
}

// setLogRow records, in a checkpoint's transaction, the last row of the log it applied.
func setLogRow(ctx context.Context, tx *sql.Tx, row int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('log_row', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(row, 10))
	if err != nil {
		return fmt.Errorf("record the log's checkpointed row: %w", err)
	}
	return nil
}

// The journal's encoding of a record: a kind byte (2 changes, 1 reset; 0 changes as versions
// before keys expired wrote them), then for changes the writes (count; each: id, tenant,
// kind, parent, state, version, due (flag, value), removal flag, data, last event number,
// events (count; each: seq, data)) and the idempotency key (flag; tenant, key, object ID,
// body hash, and for kind 2 its time). Strings and byte slices are length-prefixed; numbers
// are varints.

func (r *record) encode(b []byte) []byte {
	if r.reset {
		return append(b, 1)
	}
	b = append(b, 2)
	b = binary.AppendUvarint(b, uint64(len(r.writes)))
	for _, w := range r.writes {
		for _, f := range []string{w.id, w.Tenant, w.Kind, w.Parent, w.State} {
			b = codec.AppendBytes(b, []byte(f))
		}
		b = binary.AppendVarint(b, w.Version)
		b = codec.AppendFlag(b, w.Due.Valid)
		b = binary.AppendVarint(b, w.Due.Nanos)
		b = codec.AppendFlag(b, w.remove)
		b = codec.AppendBytes(b, codec.Bytes(w.Data))
		b = binary.AppendVarint(b, w.Events)
		b = binary.AppendUvarint(b, uint64(len(w.added)))
		for _, e := range w.added {
			b = binary.AppendVarint(b, e.seq)
			b = codec.AppendBytes(b, e.data)
		}
	}
	b = codec.AppendFlag(b, r.key != nil)
	if r.key != nil {
		for _, f := range []string{r.key.tenant, r.key.key, r.key.id, r.key.hash} {
			b = codec.AppendBytes(b, []byte(f))
		}
		b = binary.AppendVarint(b, r.key.at)
	}
	return b
}

// recordVisitor takes the parts of encoded records from scanRecords, in order.
type recordVisitor interface {
	resetAll()
	// write takes a write with its events; scanRecords reuses w and w.added for the next.
	write(w *recordWrite)
	key(k recordKey)
}

// scanRecords decodes the records of one frame (or journal row) into v. The strings and byte
// slices it passes point into blob (nothing is copied): they are valid while blob does not
// change.
func scanRecords(blob []byte, v recordVisitor) error {
	d := &codec.Decoder{B: blob}
	var w recordWrite
	for len(d.B) > 0 && d.Err == nil {
		switch kind := d.Byte(); kind {
		case 1:
			v.resetAll()
		case 0, 2:
			n := d.Uvarint()
			for i := uint64(0); i < n && d.Err == nil; i++ {
				w = recordWrite{id: d.View(), Row: table.Row{Tenant: d.View(), Kind: d.View(), Parent: d.View(),
					State: d.View()}, added: w.added[:0]}
				w.Version = d.Varint()
				w.Due.Valid = d.Byte() == 1
				w.Due.Nanos = d.Varint()
				w.remove = d.Byte() == 1
				w.Data = d.View()
				w.Events = d.Varint()
				m := d.Uvarint()
				for j := uint64(0); j < m && d.Err == nil; j++ {
					w.added = append(w.added, recordEvent{seq: d.Varint(), data: d.Bytes()})
				}
				if d.Err == nil {
					v.write(&w)
				}
			}
			if d.Byte() == 1 {
				k := recordKey{tenant: d.View(), key: d.View(), id: d.View(), hash: d.View()}
				if kind == 2 {
					k.at = d.Varint()
				}
				if d.Err == nil {
					v.key(k)
				}
			}
		default:
			d.Fail()
		}
	}
	return d.Err
}
