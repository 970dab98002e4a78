package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

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
		wait := s.checkpointWait
		if s.isBroken() {
			// Commits are refused meanwhile: try to bring the file back in line every so often
			// (a full disk freed, a file system back).
			if err := s.recoverFile(ctx); err == nil {
				s.recoveries.Add(1)
			} else {
				wait = min(wait, recoverEvery)
			}
		}
		rs, closed := s.j.take(wait)
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
			if !s.isBroken() {
				// A failure leaves the record open: the next open checks the log.
				_ = s.closeLogRecord(ctx)
			}
			return
		}
	}
}

// journaledFrames is what the log holds but the tables do not yet (the writer's). A log in a
// file holds its frames, and a checkpoint reads them back from there (changeLog.readBack):
// kept in memory too, they were the largest thing a store held after its objects, some 6 MB
// at 8,192 records, twice over once the garbage collector's headroom is counted, and for as
// long as the store lived (the buffer was kept for the next checkpoint). A database in memory
// has no log file: its frames are kept here, in one buffer, until a checkpoint applies them.
type journaledFrames struct {
	buf      []byte      // the frame being appended; for a database in memory, every frame
	frames   []frameSpan // for a database in memory: where their records are in buf
	appended int         // frames appended since the last checkpoint
	records  int         // the records the frames hold
	last     uint64      // the journal number (seq) of the last of them
}

// frameSpan is where a frame's records (after its head) are in journaledFrames.buf.
type frameSpan struct{ start, end int }

// maxKeptJournal bounds the buffer the writer keeps for the frames it encodes (a reset, or a
// batch of many objects, can make one much larger than usual).
const maxKeptJournal = 256 << 10

// clear forgets the frames (a checkpoint applied them).
func (jd *journaledFrames) clear() {
	jd.frames, jd.records, jd.appended = jd.frames[:0], 0, 0
	jd.buf = jd.buf[:0]
	if cap(jd.buf) > maxKeptJournal {
		jd.buf = nil
	}
}

// appendGroup appends records to the log as one frame, synced, and counts the frame among the
// journaled ones.
func (s *Store) appendGroup(rs []*record) error {
	// The frame is encoded at the end of the buffer and written from there. A record's parts
	// are never changed once it is queued.
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
	if s.log.f != nil {
		jd.buf = jd.buf[:head] // the file holds it
		if cap(jd.buf) > maxKeptJournal {
			jd.buf = nil
		}
	} else {
		jd.frames = append(jd.frames, frameSpan{start: head + frameHeadSize, end: len(jd.buf)})
	}
	jd.appended++
	jd.records += len(rs)
	jd.last = rs[len(rs)-1].seq
	return nil
}

// eachJournaled calls fn with the records' encoding of each journaled frame, in order: read
// back from the log's file, or for a database in memory, from the buffer. An error of fn stops
// it.
func (s *Store) eachJournaled(fn func(records []byte) error) error {
	jd := &s.jd
	if s.log.f == nil {
		for _, f := range jd.frames {
			if err := fn(jd.buf[f.start:f.end]); err != nil {
				return err
			}
		}
		return nil
	}
	return s.log.readBackEach(jd.appended, func(f logFrame) error { return fn(f.data) })
}

// failGroup handles a failed append: the group and everything queued since (checked against
// it) fail, what the journal already holds is checkpointed, and the table goes back to what
// the file holds.
func (s *Store) failGroup(ctx context.Context, rs []*record, err error) {
	s.t.Lock()
	defer s.t.Unlock()
	more, _ := s.j.takeQueued()
	rs = append(rs, more...)
	answer(rs, store.Unavailable(err)) // a write of the file failed (a full disk): not the requests' fault
	// The log starts over once what it held is in the tables (the checkpoint starts it
	// over): the failed frame, whatever part of it reached the file, must never be replayed.
	var cerr error
	if s.jd.appended > 0 {
		cerr = s.checkpoint(ctx, false)
	} else {
		cerr = s.startLogOver(ctx)
	}
	s.clearPending()
	if lerr := errors.Join(cerr, s.load(ctx)); lerr != nil {
		s.broken = store.Unavailable(fmt.Errorf("sqlite: the file could not be written (%w) nor read back (%w): %s", err, lerr, brokenAdvice))
	}
}

// startLogOver starts the log over when it holds nothing to checkpoint: the database records
// the new log first (logcheck.go).
func (s *Store) startLogOver(ctx context.Context) error {
	next, err := s.nextLogRecord()
	if err != nil {
		return err
	}
	if s.log.f != nil {
		if err := s.tx(ctx, func(tx *sql.Tx) error { return setLogRecord(ctx, tx, next) }); err != nil {
			return fmt.Errorf("start the log over: %w", err)
		}
		s.logRec, s.logRecorded = next, true
	}
	return s.log.restartWith(next.salt)
}

// FailWrites makes every append to the journal fail with err from now on, as a full disk
// fails them (ENOSPC), until it is called with nil: for reliability tests of a failing disk.
// The commits it fails are answered store.ErrUnavailable (503 with Retry-After); nothing
// acknowledged is lost, and the store serves again once writes succeed.
func (s *Store) FailWrites(err error) {
	if err == nil {
		s.log.refuse.Store(nil)
		return
	}
	s.log.refuse.Store(&err)
}

// markBroken refuses everything from now on: a checkpoint failed, so what the file holds is
// not what the table holds.
func (s *Store) markBroken(err error) {
	s.t.Lock()
	defer s.t.Unlock()
	if s.broken == nil {
		s.broken = store.Unavailable(fmt.Errorf("%w: %s", err, brokenAdvice))
	}
}

// brokenAdvice ends a broken store's error.
const brokenAdvice = "the store retries every second and serves again once the file takes writes (free the disk), or restart lifecyclesim"

// recoverEvery is how often a broken store tries to bring the file back in line.
const recoverEvery = time.Second

func (s *Store) isBroken() bool {
	s.t.RLock()
	defer s.t.RUnlock()
	return s.broken != nil
}

// recoverFile brings a broken store's file back in line with what was acknowledged, as the
// failed write left it: the journaled frames (all acknowledged) are checkpointed, or the log
// starts over when there are none, and the table is loaded again from the file. Commits were
// refused meanwhile, so the frames hold every change the table had taken.
func (s *Store) recoverFile(ctx context.Context) error {
	s.t.Lock()
	defer s.t.Unlock()
	var err error
	if s.jd.records > 0 {
		err = s.checkpoint(ctx, false)
	} else {
		err = s.startLogOver(ctx)
	}
	if err != nil {
		return err
	}
	s.clearPending()
	if err := s.load(ctx); err != nil {
		return err
	}
	s.broken = nil
	return nil
}
