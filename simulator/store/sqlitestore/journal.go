package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/table"
)

// The SQLite store's write path. Reads never touch the file (the in-memory table serves them);
// writes go through a journal:
//
//   - Commit checks its compare-and-sets, applies the batch to the table and numbers its events
//     under the table's lock, and queues a record of it in the same order; then it waits until
//     the record is durable (a Background commit does not wait).
//   - One writer goroutine appends everything queued since its last append to the log
//     (log.go) as one frame, with one write and one sync: concurrent requests share the
//     sync (group commit). Then it answers the records' commits, and keeps the frame's bytes
//     (journaledFrames); the records are garbage from then on.
//   - Between appends, once the journal holds checkpointRecords records or is quiet, the writer
//     checkpoints them into the objects, events and idempotency tables in one transaction,
//     decoding the frames where they are: an object changed many times in the batch is written
//     once, and its events in one row. The same transaction records the last frame it applied.
//     Until then, what only the journal holds (events, idempotency keys, event numbers of
//     removed objects) is also kept in memory for reads.
//   - Opening a file checkpoints whatever its log (or the journal table of a version before 7)
//     still holds (a crash between an append and its checkpoint), then loads the objects.
//
// The file always holds a prefix of the changes in the order they were applied. If appending
// fails, every change applied up to then fails and the table is reloaded from the file; if a
// checkpoint fails, the store refuses everything until lifecyclesim restarts. A read can show a
// change up to one append (about a millisecond) before it is durable: a crash can take back a
// change nobody was answered for (a phase the worker completed, which it completes again after
// the restart), never one that was acknowledged.

const (
	// checkpointRecords is how many journaled records make a checkpoint, and about how many
	// one checkpoint transaction applies. A checkpoint costs about an upsert, a row of events
	// and a few pages per object it writes, however many records changed the object: at 16
	// clients acting on 512 objects, checkpoints every 2048 records (that, or every 500 ms)
	// cost about 27 µs of CPU per accepted action, every 8192 records about 10 µs (CPU profiles
	// of lifecyclesim under benchcompare). Appends queued meanwhile wait for it (some 40 ms of
	// CPU at that load), and the records wait in memory (a kilobyte or so each).
	checkpointRecords = 8192
	// checkpointAfter is how long journaled records wait for their checkpoint once the journal
	// is quiet (nothing was appended for that long).
	checkpointAfter = 500 * time.Millisecond
)

// record is one Commit (or a Reset) as the journal holds it.
type record struct {
	writes []recordWrite
	key    *recordKey
	reset  bool
	seq    uint64     // journal order, from 1
	done   chan error // nil for background commits
}

type recordWrite struct {
	id string
	// Row is the object as the table holds it after the write (Data nil for a removal; Events
	// its last event number).
	table.Row
	remove bool
	added  []recordEvent // the write's events
}

type recordEvent struct {
	seq  int64
	data []byte // JSON without the object ID, seq and tenant (columns hold them)
}

type recordKey struct {
	tenant, key, id, hash string
	at                    int64 // Unix ns; 0 in journals written before keys expired
}

type pendingKey struct {
	id, hash string
	rec      uint64
}

// clearPending forgets what only the journal held (after a checkpoint of everything, a reset
// or a reload).
func (s *Store) clearPending() {
	s.keys = map[[2]string]pendingKey{}
	s.events = map[string][]byte{}
}

// appendPendingEvent appends an event to an object's pending events (Store.events): the
// number of its record, its own number, its tenant and its data. An object's pending events
// are one buffer without pointers, not a slice of structs holding strings and slices: the
// garbage collector marks one object per object, not three or four per event.
func appendPendingEvent(b []byte, rec uint64, seq int64, tenant string, data []byte) []byte {
	b = binary.AppendUvarint(b, rec)
	b = binary.AppendVarint(b, seq)
	b = codec.AppendBytes(b, []byte(tenant))
	return codec.AppendBytes(b, data)
}

// pendingEvents calls fn with each event of an object's pending events, in order, and the
// offset of the next one; fn returns false to stop.
func pendingEvents(b []byte, fn func(rec uint64, seq int64, tenant, data []byte, next int) bool) {
	d := &codec.Decoder{B: b}
	for len(d.B) > 0 {
		rec, seq, tenant, data := d.Uvarint(), d.Varint(), d.Bytes(), d.Bytes()
		if d.Err != nil || !fn(rec, seq, tenant, data, len(b)-len(d.B)) {
			return
		}
	}
}

// Commit implements Store.
func (s *Store) Commit(_ context.Context, b store.Batch) error {
	datas, err := codec.EncodeWrites(b)
	if err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	evs, err := encodeEvents(b)
	if err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	r := &record{writes: make([]recordWrite, len(b.Writes))}
	if !b.Background {
		r.done = make(chan error, 1)
	}
	s.t.Lock()
	err = s.applyLocked(b, datas, evs, r)
	s.t.Unlock()
	if err != nil || r.done == nil {
		return err
	}
	// Not bounded by ctx: the change is applied and every reader sees it; whether the client
	// is still there does not change whether it must reach the file.
	return <-r.done
}

// applyLocked checks a batch's compare-and-sets, applies it to the table with its events
// numbered on from each object's last (the table's, or for an ID used again the one its
// removal left), fills in its record and queues it: under the table's lock, so the journal
// gets the changes in the order they applied.
func (s *Store) applyLocked(b store.Batch, datas [][]byte, evs [][][]byte, r *record) error {
	if s.broken != nil {
		return s.broken
	}
	if err := s.t.Check(b); err != nil {
		return err
	}
	r.seq = s.j.next()
	for i, w := range b.Writes {
		o := w.Object
		last := s.gone[o.ID]
		if e, ok := s.t.Lookup(o.ID); ok {
			last = e.Events
		}
		e := s.t.NewEntry(o, datas[i])
		e.Events = last + int64(len(evs[i]))
		rw := recordWrite{id: o.ID, Row: e.Row, remove: w.Remove}
		if len(evs[i]) > 0 {
			rw.added = make([]recordEvent, len(evs[i]))
			pending := s.events[o.ID]
			for j, data := range evs[i] {
				rw.added[j] = recordEvent{seq: last + int64(j) + 1, data: data}
				pending = appendPendingEvent(pending, r.seq, last+int64(j)+1, o.Tenant, data)
			}
			s.events[o.ID] = pending
		}
		r.writes[i] = rw
		if w.Remove {
			s.t.Remove(o.ID)
			s.gone[o.ID] = e.Events
			continue
		}
		delete(s.gone, o.ID)
		s.t.Set(e)
	}
	if b.Key != "" && len(b.Writes) > 0 {
		o := b.Writes[0].Object
		r.key = &recordKey{tenant: o.Tenant, key: b.Key, id: o.ID, hash: b.KeyHash, at: b.KeyAt.UnixNano()}
		s.keys[[2]string{o.Tenant, b.Key}] = pendingKey{id: o.ID, hash: b.KeyHash, rec: r.seq}
	}
	s.j.push(r)
	return nil
}

// journal queues records for the writer goroutine.
type journal struct {
	mu      sync.Mutex
	pending []*record
	// waiting counts the pending records whose commits wait for them (not Background ones);
	// while fill holds a group back, want is how many it waits for (0 otherwise), and a push
	// wakes the writer only once they are queued.
	waiting, want int
	seq           uint64
	closed        bool
	wake          chan struct{}
}

func (j *journal) init() { j.wake = make(chan struct{}, 1) }

// next numbers the next record (the caller holds the table's lock, so numbers follow the
// order records are pushed in).
func (j *journal) next() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	return j.seq
}

func (j *journal) push(r *record) {
	j.mu.Lock()
	j.pending = append(j.pending, r)
	if r.done != nil {
		j.waiting++
	}
	wake := j.waiting >= j.want
	j.mu.Unlock()
	if wake {
		j.signal()
	}
}

// signal wakes the writer if it waits (a wake-up is kept until it looks).
func (j *journal) signal() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// take waits up to wait for queued records and takes them all; closed reports that the
// journal is closed and empty.
func (j *journal) take(wait time.Duration) (rs []*record, closed bool) {
	if rs, closed = j.takeQueued(); len(rs) > 0 || closed {
		return rs, closed && len(rs) == 0
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-j.wake:
		case <-timer.C:
			return nil, false
		}
		if rs, closed = j.takeQueued(); len(rs) > 0 || closed {
			return rs, closed && len(rs) == 0
		}
	}
}

// takeQueued takes what is queued, and reports whether the journal is closed.
func (j *journal) takeQueued() (rs []*record, closed bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rs, j.pending, j.waiting = j.pending, nil, 0
	return rs, j.closed
}

// fill holds a group back, up to groupWait, until want commits wait for it, and returns it
// with what was queued meanwhile. want is about the most commits that waited for one group
// lately (see write): clients that commit at about the same time, 16 clients acting in a loop
// say, come back within a sync or two of each other, and one sync for all of them costs less
// CPU than one for each part of them (a sync took 60 to 100 µs of CPU here, most of it the
// kernel's: about what an action's own work takes). Holding the group back takes no CPU from
// those requests. At one client want is one: its commits never wait, and the worker's
// Background records wait (at most groupWait) for its next one instead of a sync of their own.
func (j *journal) fill(rs []*record, want int) []*record {
	have := waiting(rs)
	if have >= want {
		return rs
	}
	j.mu.Lock()
	j.want = want - have
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.want = 0
		j.mu.Unlock()
	}()
	timer := time.NewTimer(groupWait)
	defer timer.Stop()
	for have < want {
		select {
		case <-j.wake:
		case <-timer.C:
			more, _ := j.takeQueued()
			return append(rs, more...)
		}
		more, closed := j.takeQueued()
		rs = append(rs, more...)
		have += waiting(more)
		if closed {
			break // Close writes what is queued without waiting for more
		}
		j.mu.Lock()
		j.want = want - have
		j.mu.Unlock()
	}
	return rs
}

// groupWait bounds how long fill holds a group back: a few syncs' time (one takes about
// 0.2 ms on the disks measured), so that a request that comes alone after a busy spell waits
// little more than it would have anyway. Measured with lifecyclesim on one CPU (benchcompare,
// actions on 512 objects, 12 rounds): at 16 clients 11.5 commits a sync instead of 7 and 8%
// less CPU per accepted action; at one client, whose every action the worker's landing
// followed with a sync of its own, 37% more actions a second at 24% less CPU each.
const groupWait = time.Millisecond

// waiting counts the records whose commits wait for them (not Background ones).
func waiting(rs []*record) int {
	n := 0
	for _, r := range rs {
		if r.done != nil {
			n++
		}
	}
	return n
}

// gather lets the goroutines that can run reach their commits before a group is written, and
// adds what they queue. The writer waits for its sync inside a system call, and a goroutine in
// a system call keeps its P until the runtime's monitor takes it back, up to 10 ms later after
// a quiet spell: with one P (one CPU) nothing else runs meanwhile, and what was not queued
// before the sync began waits for the next one. Yielding costs nothing when no one else can
// run; it stops once a yield brings nothing.
func (j *journal) gather(rs []*record) []*record {
	for range gatherYields {
		runtime.Gosched()
		more, _ := j.takeQueued()
		if len(more) == 0 {
			break
		}
		rs = append(rs, more...)
	}
	return rs
}

// gatherYields bounds the yields of one gather, so a steady stream of commits cannot hold a
// group back.
const gatherYields = 4

func (j *journal) close() {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	j.signal()
}

// answer tells the records' waiters how their commit ended.
func answer(rs []*record, err error) {
	for _, r := range rs {
		if r.done != nil {
			r.done <- err
		}
	}
}

// write is the writer goroutine: it appends queued records to the log, one frame and one sync
// per group, and checkpoints between appends, until the journal is closed and everything is
// checkpointed.
func (s *Store) write() {
	defer close(s.flushed)
	ctx := context.Background()
	// many is about the most commits that waited for one group lately (how many clients commit
	// at about the same time): it follows a larger group at once and decays by one a group.
	many := 0
	for {
		rs, closed := s.j.take(s.checkpointWait)
		if len(rs) > 0 {
			rs = s.j.gather(rs)
			rs = s.j.fill(rs, many)
			many = max(waiting(rs), many-1)
			if err := s.appendGroup(rs); err != nil {
				s.failGroup(ctx, rs, err)
				continue
			}
			s.groups.Add(1)
			s.records.Add(uint64(len(rs)))
			var resets, others []*record
			for _, r := range rs {
				if r.reset {
					resets = append(resets, r)
				} else {
					others = append(others, r)
				}
			}
			answer(others, nil)
			if len(resets) > 0 {
				// A reset is answered once the tables are empty too (reads of events and keys
				// go to them).
				err := s.checkpoint(ctx, true)
				if err != nil {
					s.markBroken(err)
				}
				answer(resets, err)
			}
		}
		// take came back empty-handed: the journal was quiet for checkpointWait.
		quiet := len(rs) == 0
		if s.jd.records > 0 && (closed || quiet || s.jd.records >= checkpointRecords) {
			if err := s.checkpoint(ctx, true); err != nil {
				s.markBroken(err)
				if closed {
					return // what is journaled stays in the log for the next open
				}
			}
		}
		if closed && s.jd.records == 0 {
			return
		}
	}
}

// journaledFrames is what the log holds but the tables do not yet (the writer's): the frames
// as they were written, in one buffer, until a checkpoint applies them. Kept as their bytes,
// the records are a few large blocks without pointers for the garbage collector, where as Go
// values (strings, slices, events) they were about a dozen objects each, some 100k objects to
// mark at every collection at 8,192 records; and the records themselves are garbage as soon
// as they are appended.
type journaledFrames struct {
	buf     []byte      // frames one after another, each with its head
	frames  []frameSpan // where their records are in buf
	records int         // the records the frames hold
	last    uint64      // the journal number (seq) of the last of them
}

// frameSpan is where a frame's records (after its head) are in journaledFrames.buf.
type frameSpan struct{ start, end int }

// maxKeptJournal bounds the buffer the writer keeps for the frames of the next checkpoint (a
// reset, or a batch of many objects, can make them much larger than usual).
const maxKeptJournal = 64 << 20

// clear forgets the frames (a checkpoint applied them).
func (jd *journaledFrames) clear() {
	jd.frames, jd.records = jd.frames[:0], 0
	jd.buf = jd.buf[:0]
	if cap(jd.buf) > maxKeptJournal {
		jd.buf = nil
	}
}

// appendGroup appends records to the log as one frame, synced, and keeps the frame among the
// journaled ones.
func (s *Store) appendGroup(rs []*record) error {
	// The frame is encoded at the end of the journaled frames' buffer and written from there.
	// A record's parts are never changed once it is queued.
	jd := &s.jd
	head := len(jd.buf)
	jd.buf = append(jd.buf, make([]byte, frameHeadSize)...)
	for _, r := range rs {
		jd.buf = r.encode(jd.buf)
	}
	frame := jd.buf[head:]
	if len(frame)-frameHeadSize > maxFrame {
		jd.buf = jd.buf[:head]
		return fmt.Errorf("sqlite: commit: a group of %d bytes is more than the log takes", len(frame))
	}
	row := s.row + 1
	if err := s.log.append(row, frame); err != nil {
		jd.buf = jd.buf[:head]
		return fmt.Errorf("sqlite: commit: append to the log: %w", err)
	}
	s.row = row
	jd.frames = append(jd.frames, frameSpan{start: head + frameHeadSize, end: len(jd.buf)})
	jd.records += len(rs)
	jd.last = rs[len(rs)-1].seq
	return nil
}

// failGroup handles a failed append: the group and everything queued since (checked against
// it) fail, what the journal already holds is checkpointed, and the table goes back to what
// the file holds.
func (s *Store) failGroup(ctx context.Context, rs []*record, err error) {
	s.t.Lock()
	defer s.t.Unlock()
	more, _ := s.j.takeQueued()
	rs = append(rs, more...)
	answer(rs, err)
	// The log starts over once what it held is in the tables (the checkpoint starts it
	// over): the failed frame, whatever part of it reached the file, must never be replayed.
	var cerr error
	if len(s.jd.frames) > 0 {
		cerr = s.checkpoint(ctx, false)
	} else {
		cerr = s.log.restart()
	}
	s.clearPending()
	if lerr := errors.Join(cerr, s.load(ctx)); lerr != nil {
		s.broken = fmt.Errorf("sqlite: the file could not be written (%w) nor read back (%w): restart lifecyclesim", err, lerr)
	}
}

// markBroken refuses everything from now on: a checkpoint failed, so what the file holds is
// not what the table holds.
func (s *Store) markBroken(err error) {
	s.t.Lock()
	defer s.t.Unlock()
	if s.broken == nil {
		s.broken = fmt.Errorf("%w: restart lifecyclesim", err)
	}
}

// checkpoint applies the journaled records (there are some) to the tables in one transaction,
// which also records the last row (frame) of the log it applied, and starts the log over.
// The writer checkpoints once the journal holds checkpointRecords records, so one checkpoint
// applies at most that many and a group more. lock takes the table's lock to forget what the
// tables now hold (false when the caller holds it).
func (s *Store) checkpoint(ctx context.Context, lock bool) error {
	defer func(start time.Time) { s.checkpointNanos.Add(int64(time.Since(start))) }(time.Now())
	jd := &s.jd
	cp := &s.cp
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, f := range jd.frames {
			if err := scanRecords(jd.buf[f.start:f.end], cp); err != nil {
				return err
			}
		}
		if err := cp.apply(ctx, tx); err != nil {
			return err
		}
		return setLogRow(ctx, tx, int64(s.row))
	})
	cp.clear() // it points into jd.buf
	if err == nil {
		err = s.log.restart()
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

// clear empties the batch, keeping its memory.
func (c *checkpointBatch) clear() {
	c.reset, c.newest = false, 0
	clear(c.index)
	clear(c.objs)
	c.objs = c.objs[:0]
	clear(c.events)
	c.events = c.events[:0]
	clear(c.keys)
	clear(c.run)
	c.run = c.run[:0]
}

func (c *checkpointBatch) init() {
	if c.index == nil {
		c.index, c.keys = map[string]int{}, map[[2]string]recordKey{}
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
			_, err = upsert.ExecContext(ctx, w.id, w.Tenant, w.Kind, w.Parent, w.State, w.Version, nullDue(w.Due), w.Data, w.Events)
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
	for _, f := range frames {
		if f.row <= applied {
			continue
		}
		if err := scanRecords(f.data, &cp); err != nil {
			return fmt.Errorf("read the log, row %d: %w", f.row, err)
		}
		s.row = max(s.row, f.row)
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if err := cp.apply(ctx, tx); err != nil {
			return fmt.Errorf("replay the journal: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM journal"); err != nil {
			return err
		}
		return setLogRow(ctx, tx, int64(s.row))
	})
	if err != nil {
		return err
	}
	return s.log.restart()
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
		b = codec.AppendBytes(b, w.Data)
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
				w.Data = d.Bytes()
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

// Events implements store.Store: the file's events of the object, then those only the journal
// holds yet.
func (s *Store) Events(ctx context.Context, tenant, id string) ([]store.Event, error) {
	// Pending first: a checkpoint between the two reads moves events from the first to the
	// second, which the seq numbers sort out; the other order could miss them.
	s.t.RLock()
	pending := s.events[id] // appends never change what is there; a prune replaces it
	pending = pending[:len(pending):len(pending)]
	s.t.RUnlock()
	rows, err := s.rdb.QueryContext(ctx, "SELECT seq, data FROM events WHERE object_id = ? AND tenant = ? ORDER BY seq", id, tenant)
	if err != nil {
		return nil, fmt.Errorf("sqlite: events %s: %w", id, err)
	}
	defer rows.Close()
	var out []store.Event
	// add keeps events in seq order, once each: the pending events go on from the file's, and
	// a file whose journal a version before 6 left with a group half checkpointed holds that
	// group's first events twice once it is replayed (in their own rows and in the group's).
	add := func(seq int64, e store.Event) {
		if len(out) == 0 || seq > out[len(out)-1].Seq {
			// Files before version 4 also kept these in data; the columns are authoritative.
			e.ObjectID, e.Seq, e.Tenant = id, seq, tenant
			out = append(out, e)
		}
	}
	for rows.Next() {
		var data []byte
		var seq int64
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, fmt.Errorf("sqlite: events %s: %w", id, err)
		}
		if err := decodeEventRow(seq, data, add); err != nil {
			return nil, fmt.Errorf("sqlite: events %s: decode: %w", id, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: events %s: %w", id, err)
	}
	pendingEvents(pending, func(_ uint64, seq int64, t, data []byte, _ int) bool {
		if string(t) == tenant {
			err = decodeEventRow(seq, data, add)
		}
		return err == nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: events %s: decode: %w", id, err)
	}
	if len(out) == 0 {
		return nil, store.ErrNotFound
	}
	return out, nil
}

// Idempotent implements Store.
func (s *Store) Idempotent(ctx context.Context, tenant, key string) (string, string, bool, error) {
	// A key is answered from memory before its record is durable. That is safe because the
	// engine holds the key (and the object) while the request that made it waits for its
	// commit: a retry cannot see the key before the first request is answered.
	s.t.RLock()
	p, ok := s.keys[[2]string{tenant, key}]
	s.t.RUnlock()
	if ok {
		return p.id, p.hash, true, nil
	}
	var id, hash string
	err := s.rdb.QueryRowContext(ctx, "SELECT object_id, body_hash FROM idempotency WHERE tenant = ? AND key = ?", tenant, key).Scan(&id, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("sqlite: idempotency key: %w", err)
	}
	return id, hash, true, nil
}

// JournalStats counts what the journal did.
type JournalStats struct {
	// Transactions appended to the journal, the Commits they carried (Commits/Transactions is
	// the mean group size), Checkpoints into the tables and the commits they applied
	// (Commits - Checkpointed is what only the journal holds yet).
	Transactions, Commits, Checkpoints, Checkpointed uint64
	// CheckpointTime is the time those checkpoints took, the failed ones too.
	CheckpointTime time.Duration
}

// JournalStats reports what the journal did so far.
func (s *Store) JournalStats() JournalStats {
	return JournalStats{Transactions: s.groups.Load(), Commits: s.records.Load(), Checkpoints: s.checkpoints.Load(),
		Checkpointed: s.checkpointed.Load(), CheckpointTime: time.Duration(s.checkpointNanos.Load())}
}

// WaitCheckpointed implements storetest.Checkpointer: it returns once every commit made before
// the call is checkpointed into the tables (a reader of the file sees them), or with ctx's
// error.
func (s *Store) WaitCheckpointed(ctx context.Context) error {
	want := s.records.Load()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for s.checkpointed.Load() < want {
		select {
		case <-ctx.Done():
			return fmt.Errorf("sqlite: wait for the checkpoint: %w", ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// Reset implements store.Store: the table empties at once, the file before Reset returns.
func (s *Store) Reset(context.Context) error {
	s.t.Lock()
	if s.broken != nil {
		s.t.Unlock()
		return s.broken
	}
	r := &record{reset: true, done: make(chan error, 1)}
	r.seq = s.j.next()
	s.t.Clear()
	s.clearPending()
	clear(s.gone)
	s.j.push(r)
	s.t.Unlock()
	return sqliteErr("reset", "", <-r.done)
}

// Ping implements store.Store: the store is not broken, the writer connection is free within ctx
// and the file can be read.
func (s *Store) Ping(ctx context.Context) error {
	s.t.RLock()
	broken := s.broken
	s.t.RUnlock()
	if broken != nil {
		return broken
	}
	if err := s.db.PingContext(ctx); err != nil {
		return sqliteErr("ping", "", err)
	}
	var n int
	if err := s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM objects LIMIT 1)").Scan(&n); err != nil {
		return sqliteErr("ping", "", err)
	}
	return nil
}

// Close implements store.Store: it writes and checkpoints what the journal holds, then closes the
// file.
func (s *Store) Close() error {
	s.j.close()
	<-s.flushed
	errs := []error{s.log.close()}
	if s.rdb != s.db {
		errs = append(errs, s.rdb.Close())
	}
	if err := errors.Join(append(errs, s.db.Close())...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}
