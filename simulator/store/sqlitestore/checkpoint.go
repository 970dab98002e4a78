package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// checkpoint applies the journaled records (there are some) to the tables in one transaction,
// which also records the last row (frame) of the log it applied, and starts the log over.
// The writer checkpoints once the journal holds checkpointRecords records, so one checkpoint
// applies at most that many and a group more. lock takes the table's lock to forget what the
// tables now hold (false when the caller holds it).
func (s *Store) checkpoint(ctx context.Context, lock bool) error {
	defer func(start time.Time) { s.checkpointNanos.Add(int64(time.Since(start))) }(time.Now())
	jd := &s.jd
	cp := &s.cp
	next, err := s.nextLogRecord()
	if err != nil {
		return fmt.Errorf("sqlite: checkpoint: %w", err)
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		cp.reserve(min(jd.records, checkpointRecords))
		scanned := 0
		err := s.eachJournaled(func(records []byte) error {
			if err := scanRecords(records, cp); err != nil {
				return err
			}
			if scanned += len(records); scanned < checkpointChunk {
				return nil
			}
			scanned = 0
			err := cp.apply(ctx, tx)
			cp.clear() // it points into the frames applied, which are garbage from here on
			cp.reserve(min(jd.records, checkpointRecords))
			return err
		})
		if err != nil {
			return err
		}
		if err := cp.apply(ctx, tx); err != nil {
			return err
		}
		if err := setLogRecord(ctx, tx, next); err != nil {
			return err
		}
		return setLogRow(ctx, tx, int64(s.row))
	})
	cp.clear() // it points into the frames
	if err == nil && s.log.f != nil {
		s.logRec, s.logRecorded = next, true
	}
	if err == nil {
		err = s.log.restartWith(next.salt)
	}
	if err != nil {
		return fmt.Errorf("sqlite: checkpoint: %w", err)
	}
	s.checkpoints.Add(1)
	s.checkpointed.Add(uint64(jd.records))
	upTo := jd.last
	jd.clear()
	if lock {
		s.t.Lock()
		defer s.t.Unlock()
	}
	s.prune(upTo)
	return nil
}

// prune forgets (under t.mu) what records up to upTo kept in memory: the tables hold it now.
func (s *Store) prune(upTo uint64) {
	for id, buf := range s.events {
		rest := len(buf)
		pendingEvents(buf, func(rec uint64, _ int64, _, _ []byte, next int) bool {
			if rec > upTo {
				return false
			}
			rest = len(buf) - next
			return true
		})
		switch {
		case rest == 0:
			delete(s.events, id)
		case rest < len(buf):
			s.events[id] = append([]byte(nil), buf[len(buf)-rest:]...)
		}
	}
	for k, p := range s.keys {
		if p.rec <= upTo {
			delete(s.keys, k)
		}
	}
	// A map keeps the room it grew to: one that held a checkpoint's worth of objects (some
	// thousands) would hold that room for as long as the store lives.
	if len(s.events) == 0 {
		s.events = map[string][]byte{}
	}
	if len(s.keys) == 0 {
		s.keys = map[[2]string]pendingKey{}
	}
}

// objectEvent is an event with its object, as the events table holds it.
type objectEvent struct {
	id, tenant string
	ev         recordEvent
}

// checkpointBatch gathers what a checkpoint writes from the records' encoding (see
// scanRecords): each object's last write and its events in order, and the idempotency keys.
// Its strings and slices point into the encoding, which must not change until clear; the
// writer reuses one from a checkpoint to the next.
type checkpointBatch struct {
	reset  bool           // a reset came first: the tables empty before the rest is written
	index  map[string]int // object ID → objs
	objs   []checkpointObject
	events []chainedEvent
	keys   map[[2]string]recordKey
	newest int64         // the latest key's time
	run    []objectEvent // an object's events, while they are written
}

// checkpointObject is an object's last write in a checkpoint and its events, chained.
type checkpointObject struct {
	w           recordWrite
	first, last int // in checkpointBatch.events; -1 for none
}

type chainedEvent struct {
	objectEvent
	next int // the object's next event, -1 for none
}

// checkpointChunk is how many bytes of records a checkpoint scans before it applies them, in
// its one transaction, and goes on with the next: what it holds while it runs (the frames
// read back, which the batch points into, and the batch) is then some 6 MB at most, where a
// checkpoint of 8,192 creates held 10 MB and more, and a garbage collection in that time
// set the collector's goal (twice what is live) that much higher. An object changed in
// several chunks is written once in each, so the chunk is large enough that a checkpoint of
// accepted actions (some 3 MB of records) applies in one.
const checkpointChunk = 4 << 20

// keptCheckpoint is the most objects and events a cleared batch keeps room for: a
// checkpoint of 8,192 records needs some 3 MB of them, which as kept room would be live heap
// between checkpoints (see maxKeptJournal).
const keptCheckpoint = 256

// clear empties the batch, keeping its memory when it is small.
func (c *checkpointBatch) clear() {
	c.reset, c.newest = false, 0
	if len(c.objs) > keptCheckpoint || len(c.events) > keptCheckpoint {
		c.index, c.objs, c.events, c.run = nil, nil, nil, nil
	}
	clear(c.index)
	clear(c.objs)
	c.objs = c.objs[:0]
	clear(c.events)
	c.events = c.events[:0]
	clear(c.keys)
	clear(c.run)
	c.run = c.run[:0]
}

// reserve makes room for about n records' events (most records have one), so that they do
// not grow by doubling: while they grow, the old and the new array are both live. (How many
// objects the records change is not known: a few hundred for many records of actions.)
func (c *checkpointBatch) reserve(n int) {
	if cap(c.events) < n {
		c.events = make([]chainedEvent, 0, n)
	}
}

func (c *checkpointBatch) init() {
	if c.index == nil {
		c.index = map[string]int{}
	}
	if c.keys == nil {
		c.keys = map[[2]string]recordKey{}
	}
}

func (c *checkpointBatch) resetAll() {
	c.clear()
	c.reset = true
}

func (c *checkpointBatch) write(w *recordWrite) {
	c.init()
	i, ok := c.index[w.id]
	if !ok {
		i = len(c.objs)
		c.index[w.id] = i
		c.objs = append(c.objs, checkpointObject{first: -1, last: -1})
	}
	o := &c.objs[i]
	o.w = *w
	o.w.added = nil
	for _, ev := range w.added {
		c.events = append(c.events, chainedEvent{objectEvent{w.id, w.Tenant, ev}, -1})
		if o.last >= 0 {
			c.events[o.last].next = len(c.events) - 1
		} else {
			o.first = len(c.events) - 1
		}
		o.last = len(c.events) - 1
	}
}

func (c *checkpointBatch) key(k recordKey) {
	c.init()
	c.keys[[2]string{k.tenant, k.key}] = k
	c.newest = max(c.newest, k.at)
}

// apply writes the batch to the tables; an object written more than once is written as it
// was last, its events in one row where their numbers follow each other.
func (c *checkpointBatch) apply(ctx context.Context, tx *sql.Tx) error {
	if c.reset {
		for _, table := range []string{"objects", "events", "idempotency"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+table); err != nil {
				return fmt.Errorf("reset: %w", err)
			}
		}
	}
	upsert, err := tx.PrepareContext(ctx, `INSERT INTO objects (id, tenant, kind, parent_id, state, version, due, data, events)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET tenant = excluded.tenant,
		kind = excluded.kind, parent_id = excluded.parent_id, state = excluded.state, version = excluded.version,
		due = excluded.due, data = excluded.data, events = excluded.events`)
	if err != nil {
		return err
	}
	del, err := tx.PrepareContext(ctx, "DELETE FROM objects WHERE id = ?")
	if err != nil {
		return err
	}
	addEvent, err := tx.PrepareContext(ctx, "INSERT OR REPLACE INTO events (object_id, seq, tenant, data) VALUES (?, ?, ?, ?)")
	if err != nil {
		return err
	}
	// In key order, consecutive rows share B-tree pages.
	slices.SortFunc(c.objs, func(a, b checkpointObject) int { return strings.Compare(a.w.id, b.w.id) })
	for i := range c.objs {
		w := &c.objs[i].w
		if w.remove {
			_, err = del.ExecContext(ctx, w.id)
		} else {
			_, err = upsert.ExecContext(ctx, w.id, w.Tenant, w.Kind, w.Parent, w.State, w.Version, nullDue(w.Due), codec.Bytes(w.Data), w.Events)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w.id, err)
		}
	}
	var buf []byte // the data of a row of several events (the driver copies what it binds)
	for _, o := range c.objs {
		c.run = c.run[:0]
		for i := o.first; i >= 0; i = c.events[i].next {
			c.run = append(c.run, c.events[i].objectEvent)
		}
		for evs := c.run; len(evs) > 0; {
			n, data := eventRun(evs), evs[0].ev.data
			if n > 1 {
				buf = appendEventArray(buf[:0], evs[:n])
				data = buf
			}
			last := evs[n-1]
			if _, err := addEvent.ExecContext(ctx, last.id, last.ev.seq, last.tenant, data); err != nil {
				return fmt.Errorf("%s: events to %d: %w", last.id, last.ev.seq, err)
			}
			evs = evs[n:]
		}
	}
	if len(c.keys) > 0 {
		// Every POST of the Go client (so of the provider) carries a key: one statement for all.
		addKey, err := tx.PrepareContext(ctx, `INSERT INTO idempotency (tenant, key, object_id, body_hash, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (tenant, key) DO UPDATE SET object_id = excluded.object_id, body_hash = excluded.body_hash,
			created_at = excluded.created_at`)
		if err != nil {
			return err
		}
		for _, k := range c.keys {
			if _, err := addKey.ExecContext(ctx, k.tenant, k.key, k.id, k.hash, k.at); err != nil {
				return fmt.Errorf("idempotency key: %w", err)
			}
		}
	}
	if c.newest > 0 {
		// Keys store.KeyRetention older than the newest go (the index on created_at finds them).
		if _, err := tx.ExecContext(ctx, "DELETE FROM idempotency WHERE created_at < ?", c.newest-int64(store.KeyRetention)); err != nil {
			return fmt.Errorf("expire idempotency keys: %w", err)
		}
	}
	return nil
}

// eventRun says how many of an object's events (in order) the first row of the events table
// a checkpoint writes holds: those with consecutive numbers (see decodeEventRow).
func eventRun(events []objectEvent) int {
	n := 1
	for n < len(events) && events[n].id == events[0].id && events[n].tenant == events[0].tenant &&
		events[n].ev.seq == events[n-1].ev.seq+1 {
		n++
	}
	return n
}

// appendEventArray appends the data of a row of several events: their JSON as an array.
func appendEventArray(b []byte, events []objectEvent) []byte {
	b = append(b, '[')
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.ev.data...)
	}
	return append(b, ']')
}
