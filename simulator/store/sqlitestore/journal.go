package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

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
// checkpoint fails, the store refuses everything (503) until the writer, trying every second,
// checkpoints what was journaled and reloads the table (recoverFile), or lifecyclesim restarts. A read can show a
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
	// Row is the object as the table holds it after the write (Data its packed form, the JSON
	// in a log an older build wrote, nil for a removal; Events its last event number).
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
	at       int64 // when it was recorded (Unix ns)
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
	errs = append(errs, s.db.Close())
	if s.dbLock != nil {
		// After the database: the file is no longer in use. Close may be called again.
		if err := s.dbLock.Close(); !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}
