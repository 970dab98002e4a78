package pgstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

var (
	_ store.Claimer       = (*Store)(nil)
	_ store.ClockAdvancer = (*Store)(nil)
)

// ClaimDue implements store.Claimer in one statement (in a short transaction of its own, on
// the worker's connections): it ranks the due objects that are free (no claim, a claim
// lapsed, or owner's) within their tenant, by a scan of the schedule's index on due times
// (schema 6), picks the first n in tenant turns of batch, and records a claim on each in its
// schedule row. Two replicas claiming one object at once meet on that row: the second skips
// it while the first's claim is under way (SKIP LOCKED: claims never wait for each other, nor
// deadlock) and finds it claimed after. A commit that writes the object ends the claim (it
// writes the schedule row too): the next phase is up for any replica to take. Each claimed
// object comes back whole (its data, as the claim's statement began), so the worker lands it
// without a read of its own; nothing of the object's row is written.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, owner string, n, batch int, ttl time.Duration) ([]store.Scheduled, error) {
	if n <= 0 {
		return nil, nil
	}
	batch = max(batch, 1)
	s.maybeVacuum()
	// One implicit transaction (one Sync) of two statements: the claim does not wait for its
	// WAL record to be flushed. A claim a crash of the server takes back only frees the object
	// again, as a lapsed claim does. Like every statement of the worker's sessions, it never
	// scans a table whole (Open): a sequential scan of the schedule would read every row
	// version since the last vacuum, where the index on due skips the ones marked dead by an
	// earlier scan.
	b := &pgx.Batch{}
	b.Queue("SELECT set_config('synchronous_commit', 'off', true)")
	b.Queue(pgClaimSQL, codec.DueOf(now).Nanos, owner, int64(batch), n, ttl.Microseconds())
	br := s.work.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, pgErr("claim due", err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, pgErr("claim due", err)
	}
	type claimed struct {
		store.Scheduled
		due int64
		row pgRow
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (claimed, error) {
		var c claimed
		err := row.Scan(append([]any{&c.due}, c.row.dest()...)...)
		c.ID, c.Tenant, c.Kind = c.row.cols.ID, c.row.cols.Tenant, c.row.cols.Kind
		return c, err
	})
	if err != nil {
		return nil, pgErr("claim due", err)
	}
	if err := br.Close(); err != nil {
		return nil, pgErr("claim due", err)
	}
	s.vacuum.wrote(len(out))
	slices.SortFunc(out, func(a, b claimed) int { return cmp.Or(cmp.Compare(a.due, b.due), cmp.Compare(a.ID, b.ID)) })
	due := make([]store.Scheduled, len(out))
	for i, c := range out {
		// The object as claimed: the worker lands it without reading it again, one round trip
		// fewer per landing.
		if c.Object, err = c.row.object(); err != nil {
			return nil, pgErr("claim due", err)
		}
		due[i] = c.Scheduled
	}
	return due, nil
}

// pgClaimSQL is ClaimDue's statement: $1 the due time, $2 the owner, $3 the batch, $4 how many,
// $5 the claim's time to live in microseconds.
//
// The picked rows are locked and updated by their key, and each claimed object is read by its
// key (a LATERAL subquery the planner cannot flatten into a join). Joined as tables, the
// planner (its statistics stale: Open) read every object by the primary key's index to
// hash a handful, and every schedule row to update a few (auto_explain under make
// bench-replicas): a claim cost as much as the objects were many.
var pgClaimSQL = `WITH ranked AS (
		SELECT id, due, row_number() OVER (PARTITION BY tenant ORDER BY due, id) AS r
		FROM schedule WHERE due <= $1 AND (owner IS NULL OR until < clock_timestamp() OR owner = $2)
	), picked AS (
		SELECT id FROM ranked ORDER BY (r - 1) / $3, due, id LIMIT $4
	), locked AS (
		SELECT s.id FROM schedule s WHERE s.id = ANY (ARRAY(SELECT id FROM picked))
			AND s.due <= $1 AND (s.owner IS NULL OR s.until < clock_timestamp() OR s.owner = $2)
		ORDER BY s.id FOR UPDATE OF s SKIP LOCKED
	), claimed AS (
		UPDATE schedule s SET owner = $2, until = clock_timestamp() + $5 * interval '1 microsecond'
		WHERE s.id = ANY (ARRAY(SELECT id FROM locked)) RETURNING s.id, s.due
	)
	SELECT c.due, ` + pgRowColumnsOf("o") + ` FROM claimed c
		CROSS JOIN LATERAL (SELECT ` + pgRowColumns + ` FROM objects WHERE id = c.id LIMIT 1) o`

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
