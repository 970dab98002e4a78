package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

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

// Idempotent implements store.Store.
func (s *Store) Idempotent(ctx context.Context, tenant, key string) (string, string, bool, error) {
	// A key is answered from memory before its record is durable. That is safe because the
	// engine holds the key (and the object) while the request that made it waits for its
	// commit: a retry cannot see the key before the first request is answered. (A commit
	// that would record the key again is refused whatever the engine holds: checkKey.)
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
