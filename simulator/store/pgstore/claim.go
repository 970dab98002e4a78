package pgstore

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/btree"
	"github.com/jackc/pgx/v5"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

var (
	_ store.Claimer       = (*Store)(nil)
	_ store.ClockAdvancer = (*Store)(nil)
)

// The due work of replicas (schema 8). A commit that leaves an object due (a phase started, a
// timer set) records its due time in the object's row with the committing replica as its
// owner, and that replica keeps the object in memory (pgOwned) and lands it: a phase costs no
// schedule row to insert, claim and delete, and no statement to find it. Every other write of
// the object sets the owner again (the writer's, or none when nothing is due), so the replica
// that started the latest phase lands it; a replica that wrote an object another one holds
// makes the holder read it again (the notification of the write, or a landing refused as
// stale), and drop it.
//
// A replica holds a lease (the replicas table), renewed by its worker's claims. When a lease
// lapses (a replica killed, or stopped for longer than the lease), the others take over what
// it owned: the first replica to see it lapsed updates the objects' owner to itself (sweep).
// The sweep also takes objects no live replica owns (as migration 8 and an import leave them)
// and reads again every object the replica owns, so it also repairs what the replica's memory
// may have missed (a commit whose outcome was unknown, notifications lost). It runs when the
// replica starts, when its worker finds a lease lapsed (its own included: another replica may
// have taken its objects meanwhile), after notifications were lost, and every pgSweepEvery.
// Landing is a compare-and-set commit of the object's version, so two replicas that both hold
// an object (a lease that lapsed under a slow replica) never land it twice.

const (
	// pgLeaseTTL is how long a replica's lease lasts from Open until its worker's first claim
	// renews it (with the claim's ttl).
	pgLeaseTTL = 5 * time.Second
	// pgSweepEvery is how often a replica takes over the objects no live replica owns and reads
	// its own again, when nothing made it do so earlier.
	pgSweepEvery = 30 * time.Second
)

// pgOwned is the due work a replica owns, in memory: by ID, and for each tenant in a tree by
// due time (as the SQLite store's table keeps its due objects), so that a round reads the
// objects it lands, not what is due or held (a replica may hold many timers far ahead, and a
// backlog of thousands of landings), and the next due time is each tenant's first.
type pgOwned struct {
	mu      sync.Mutex
	objs    map[string]*pgOwnedObject
	tenants map[string]*btree.BTreeG[*pgOwnedObject]
	// gen counts the changes to objs; a sweep or a refresh that read the database before a
	// change does not undo it.
	gen uint64
	// stale are objects to read again before the next claim (a commit of them failed, or
	// another replica wrote them).
	stale map[string]bool
	// sweepAt is when the next sweep is due (zero: at the next claim); renewedAt is when the
	// lease was last renewed (zero: by Open only).
	sweepAt, renewedAt time.Time
}

// pgOwnedObject is an object a replica owns: its due time and its row as last committed or read.
type pgOwnedObject struct {
	due int64
	row pgRow
	gen uint64
}

// compare orders owned objects by due time, then ID.
func (o pgOwnedObject) compare(p pgOwnedObject) int {
	return cmp.Or(cmp.Compare(o.due, p.due), strings.Compare(o.row.cols.ID, p.row.cols.ID))
}

// pgOwnedDegree is the degree of the tenants' trees of due work.
const pgOwnedDegree = 16

// lessOwned orders a tenant's tree of due work: by due time, then ID.
func lessOwned(a, b *pgOwnedObject) bool { return a.compare(*b) < 0 }

// put records an object's row as a commit or a read saw it, with its due time (none: the
// replica no longer owns it), unless the replica holds a later version of it.
func (w *pgOwned) put(row pgRow, due codec.Due) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.putLocked(row, due)
}

func (w *pgOwned) putLocked(row pgRow, due codec.Due) {
	id := row.cols.ID
	if old := w.objs[id]; old != nil && old.row.cols.Version > row.cols.Version {
		return
	}
	w.gen++
	delete(w.stale, id)
	w.dropLocked(id)
	if !due.Valid {
		return
	}
	if w.objs == nil {
		w.objs, w.tenants = map[string]*pgOwnedObject{}, map[string]*btree.BTreeG[*pgOwnedObject]{}
	}
	o := &pgOwnedObject{due: due.Nanos, row: row, gen: w.gen}
	w.objs[id] = o
	tree := w.tenants[row.cols.Tenant]
	if tree == nil {
		tree = btree.NewG(pgOwnedDegree, lessOwned)
		w.tenants[row.cols.Tenant] = tree
	}
	tree.ReplaceOrInsert(o)
}

// dropLocked forgets an object.
func (w *pgOwned) dropLocked(id string) {
	o := w.objs[id]
	if o == nil {
		return
	}
	tree := w.tenants[o.row.cols.Tenant]
	tree.Delete(o)
	if tree.Len() == 0 {
		delete(w.tenants, o.row.cols.Tenant)
	}
	delete(w.objs, id)
}

// remove forgets a removed object.
func (w *pgOwned) remove(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	w.dropLocked(id)
	delete(w.stale, id)
}

// doubt marks objects to read again before the next claim: all of ids (a commit of them
// failed, and may have made them the replica's), or when onlyHeld those the replica holds
// (another replica wrote them).
func (w *pgOwned) doubt(onlyHeld bool, ids ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if _, ok := w.objs[id]; ok || !onlyHeld {
			if w.stale == nil {
				w.stale = map[string]bool{}
			}
			w.stale[id] = true
		}
	}
}

// sweepSoon makes the next claim sweep.
func (w *pgOwned) sweepSoon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sweepAt = time.Time{}
}

// clear forgets everything (a reset), and sweeps at the next claim.
func (w *pgOwned) clear() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	w.objs, w.tenants, w.stale, w.sweepAt = nil, nil, nil, time.Time{}
}

// replace sets what the replica owns among ids (every object when ids is nil) to what a read
// begun at gen0 found (rows, with their due times), keeping what changed since.
func (w *pgOwned) replace(ids []string, gen0 uint64, rows []pgOwnedObject) {
	w.mu.Lock()
	defer w.mu.Unlock()
	found := make(map[string]bool, len(rows))
	for _, r := range rows {
		found[r.row.cols.ID] = true
		if old := w.objs[r.row.cols.ID]; old != nil && old.gen > gen0 {
			continue
		}
		w.putLocked(r.row, codec.Due{Nanos: r.due, Valid: true})
	}
	drop := func(id string) {
		if old := w.objs[id]; old != nil && old.gen <= gen0 && !found[id] {
			w.gen++
			w.dropLocked(id)
		}
		delete(w.stale, id)
	}
	if ids == nil {
		ids = make([]string, 0, len(w.objs))
		for id := range w.objs {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		drop(id)
	}
}

// due picks up to n of the objects due by now, in turns over tenants of batch objects each,
// and returns them earliest first.
func (w *pgOwned) due(now int64, n, batch int) []pgOwnedObject {
	w.mu.Lock()
	tenants := make([][]pgOwnedObject, 0, len(w.tenants))
	for _, tree := range w.tenants {
		var due []pgOwnedObject
		tree.Ascend(func(o *pgOwnedObject) bool {
			if o.due > now || len(due) == n {
				return false
			}
			due = append(due, *o)
			return true
		})
		if len(due) > 0 {
			tenants = append(tenants, due)
		}
	}
	w.mu.Unlock()
	return codec.InTurns(tenants, n, batch, pgOwnedObject.compare)
}

// next is the earliest due time of what the replica owns: the earliest of the tenants' first.
func (w *pgOwned) next() (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first int64
	found := false
	for _, tree := range w.tenants {
		if o, ok := tree.Min(); ok && (!found || o.due < first) {
			first, found = o.due, true
		}
	}
	return first, found
}

// ClaimDue implements store.Claimer from the replica's memory: the objects it owns whose due
// time has come, each with its row as last committed or read. Before that it renews its lease
// every quarter of ttl, reads again the objects it doubts, and sweeps when due.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, n, batch int, ttl time.Duration) ([]store.Scheduled, error) {
	if n <= 0 {
		return nil, nil
	}
	if err := s.keepOwned(ctx, ttl); err != nil {
		return nil, pgErr("claim due", err)
	}
	picked := s.owned.due(codec.DueOf(now).Nanos, n, max(batch, 1))
	due := make([]store.Scheduled, len(picked))
	for i, o := range picked {
		obj, err := o.row.object()
		if err != nil {
			return nil, pgErr("claim due", err)
		}
		due[i] = store.Scheduled{ID: obj.ID, Tenant: obj.Tenant, Kind: obj.Kind, Object: obj}
	}
	return due, nil
}

// keepOwned renews the lease, reads the doubted objects again and sweeps, as each is due.
func (s *Store) keepOwned(ctx context.Context, ttl time.Duration) error {
	w := &s.owned
	w.mu.Lock()
	renew := w.renewedAt.IsZero() || time.Since(w.renewedAt) >= ttl/4
	sweep := w.sweepAt.IsZero() || !time.Now().Before(w.sweepAt)
	stale := make([]string, 0, len(w.stale))
	for id := range w.stale {
		stale = append(stale, id)
	}
	gen0 := w.gen
	w.mu.Unlock()
	if renew {
		lapsed, err := s.renewLease(ctx, ttl)
		if err != nil {
			return err
		}
		sweep = sweep || lapsed
		w.mu.Lock()
		w.renewedAt = time.Now()
		w.mu.Unlock()
	}
	if sweep {
		return s.sweep(ctx)
	}
	if len(stale) > 0 {
		rows, err := s.ownedRows(ctx, stale)
		if err != nil {
			return err
		}
		w.replace(stale, gen0, rows)
	}
	return nil
}

// renewLease extends the replica's lease by ttl; lapsed says a sweep is due: a lease has
// lapsed (the replica's own too, or it was taken over and removed).
func (s *Store) renewLease(ctx context.Context, ttl time.Duration) (lapsed bool, err error) {
	var own *time.Time
	var others bool
	err = s.work.QueryRow(ctx, `WITH prev AS (SELECT until FROM replicas WHERE name = $1),
			renewed AS (INSERT INTO replicas (name, until) VALUES ($1, clock_timestamp() + $2 * interval '1 microsecond')
				ON CONFLICT (name) DO UPDATE SET until = excluded.until)
		SELECT (SELECT until FROM prev WHERE until < clock_timestamp()),
			EXISTS (SELECT FROM replicas WHERE name <> $1 AND until < clock_timestamp())`,
		s.notes.from, ttl.Microseconds()).Scan(&own, &others)
	return own != nil || others, err
}

// pgOwnedSQL reads the objects a replica owns ($1 its name): the row, then its due time.
const pgOwnedSQL = "SELECT " + pgRowColumns + ", due FROM objects WHERE owner = $1 AND due IS NOT NULL"

// ownedRows reads the objects among ids the replica owns.
func (s *Store) ownedRows(ctx context.Context, ids []string) ([]pgOwnedObject, error) {
	rows, err := s.work.Query(ctx, pgOwnedSQL+" AND id = ANY ($2)", s.notes.from, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanOwned)
}

// scanOwned scans a row of pgOwnedSQL.
func scanOwned(row pgx.CollectableRow) (pgOwnedObject, error) {
	var o pgOwnedObject
	err := row.Scan(append(o.row.dest(), &o.due)...)
	return o, err
}

// sweep takes over the due objects no live replica owns, removes the lapsed leases, and reads
// every object the replica owns again. Both statements scan the objects table (the due time
// is in no index, so that a phase's writes stay HOT): a sweep costs as much as the objects
// are many, and runs rarely.
func (s *Store) sweep(ctx context.Context) error {
	w := &s.owned
	w.mu.Lock()
	gen0 := w.gen
	w.mu.Unlock()
	b := &pgx.Batch{}
	// One transaction whose statements scan the table (Open turns that off for the worker's
	// other statements, which find rows by key).
	b.Queue("SELECT set_config('enable_seqscan', 'on', true)")
	// An object a commit holds is left to it (SKIP LOCKED): the commit sets its owner.
	b.Queue(`WITH lapsed AS (DELETE FROM replicas WHERE name <> $1 AND until < clock_timestamp()),
			orphans AS (SELECT id FROM objects WHERE due IS NOT NULL AND owner IS DISTINCT FROM $1
				AND (owner IS NULL OR owner NOT IN (SELECT name FROM replicas WHERE until >= clock_timestamp()))
				ORDER BY id FOR UPDATE SKIP LOCKED)
		UPDATE objects o SET owner = $1 FROM orphans WHERE o.id = orphans.id`, s.notes.from)
	b.Queue(pgOwnedSQL, s.notes.from)
	br := s.work.SendBatch(ctx, b)
	defer br.Close()
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	owned, err := pgx.CollectRows(rows, scanOwned)
	if err != nil {
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	w.replace(nil, gen0, owned)
	w.mu.Lock()
	w.sweepAt = time.Now().Add(pgSweepEvery)
	w.mu.Unlock()
	return nil
}

// AdvanceClockOffset implements store.ClockAdvancer: one statement adds d to the saved offset (or
// saves d when there is none), so replicas advancing the clock at once both count.
func (s *Store) AdvanceClockOffset(ctx context.Context, d, limit time.Duration) (time.Duration, bool, error) {
	var v string
	err := s.pool.QueryRow(ctx, `INSERT INTO settings AS s (key, value) SELECT $1, $2::bigint::text WHERE $2::bigint <= $3::bigint
		ON CONFLICT (key) DO UPDATE SET value = (s.value::bigint + $2::bigint)::text WHERE s.value::bigint + $2::bigint <= $3::bigint
		RETURNING value`, clockOffsetKey, int64(d), int64(limit)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		cur, err := s.ClockOffset(ctx)
		return cur, false, err
	}
	if err != nil {
		return 0, false, pgErr("advance clock offset", err)
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, pgErr("advance clock offset", err)
	}
	s.notes.add(nil, pgFlags{Clock: true})
	return time.Duration(ns), true, nil
}
