package pgstore

import (
	"cmp"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The schedule is a queue: every accepted action writes its object's row in and the landing
// deletes it (schema 6), so each action leaves dead row versions in the table and dead
// entries at the front of its index on due times, which every claim and NextDue walk through
// before the first live row. Autovacuum visits a table at most once a minute
// (autovacuum_naptime), and a minute of actions at a replica's pace left ten thousand dead
// entries: a claim cost 2.6 ms where it costs 0.55 ms on a schedule vacuumed each second, and
// the whole action 16% more CPU (a 40-second run at 16 clients on one replica: 535 µs per
// action against 463).
//
// So a replica whose commits or claims wrote schedule rows vacuums the schedule itself, at
// most once per pgVacuumEvery, on the worker's connections and off its path: a few hundred
// pages at most, a millisecond or two. SKIP_LOCKED passes when another replica's (or
// autovacuum's) vacuum of it is under way. TRUNCATE false keeps the table's empty pages (the
// next second's rows fill them): giving them back takes a lock that holds up every commit
// that writes the schedule meanwhile. A role that does not own the table gets a warning
// from PostgreSQL instead, and autovacuum alone, as before.

// pgVacuumEvery is how often a replica vacuums the schedule while it writes to it.
const pgVacuumEvery = time.Second

// pgVacuumTimeout bounds one vacuum (a server that stopped answering).
const pgVacuumTimeout = 30 * time.Second

// pgVacuum is a store's vacuuming of the schedule.
type pgVacuum struct {
	// writes counts the objects committed and claimed since the last vacuum began (each may
	// have left a dead schedule row); runs counts the vacuums done.
	writes, runs atomic.Int64

	mu sync.Mutex
	// every is pgVacuumEvery; tests shorten it (SetVacuumEvery).
	every time.Duration
	// last is when the last vacuum began. running says one is under way, stopped that the
	// store closed (none starts after).
	last             time.Time
	running, stopped bool
	wg               sync.WaitGroup
}

// stop waits for a vacuum under way, and starts none after.
func (v *pgVacuum) stop() {
	v.mu.Lock()
	v.stopped = true
	v.mu.Unlock()
	v.wg.Wait()
}

// wrote counts n objects committed or claimed.
func (v *pgVacuum) wrote(n int) { v.writes.Add(int64(n)) }

// maybeVacuum starts a vacuum of the schedule when rows were written since the last one and
// every has passed since it began, unless one is under way.
func (s *Store) maybeVacuum() {
	v := &s.vacuum
	if v.writes.Load() == 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.running || v.stopped || time.Since(v.last) < cmp.Or(v.every, pgVacuumEvery) {
		return
	}
	v.running, v.last = true, time.Now()
	v.writes.Store(0)
	v.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), pgVacuumTimeout)
		defer cancel()
		// VACUUM runs outside a transaction: sent as a simple query, not prepared. An error
		// (the connection, a closed store) waits for the next turn.
		if _, err := s.work.Exec(ctx, "VACUUM (SKIP_LOCKED, TRUNCATE false) schedule", pgx.QueryExecModeSimpleProtocol); err == nil {
			v.runs.Add(1)
		}
		v.mu.Lock()
		v.running = false
		v.mu.Unlock()
	})
}
