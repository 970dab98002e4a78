package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// The merged write: the commits that only update objects and read others (an accepted
// action, a batch of one tenant's landings: nearly every commit) go as one statement, however
// many of them there are. A group's (group.go) is one statement and one transaction instead
// of one transaction of two or three statements per request, and a batch of landings one
// statement instead of one per object: PostgreSQL's cost is its statements and transactions
// more than its rows. A commit alone of one object goes as its own statements (commit.go),
// which cost both sides less than the merged write's 24 arrays and larger plan.
//
// The statement does what the separate ones do (commit.go), for every commit at once:
//
//  1. It locks every object it names in ID order, in one pass: FOR NO KEY UPDATE each one a
//     commit updates, FOR SHARE each one a commit only reads. As every commit locks in ID
//     order, no two wait for each other in a cycle. (The locks are subqueries LATERAL to the
//     list of IDs, so PostgreSQL runs them in a nested loop over it, in its order.)
//  2. It compares each locked object with what the commits that name it expect: an update's
//     tenant and version (else not_found or version) and the state of what it read (else
//     version).
//  3. It updates the objects of the commits whose every comparison held, with their events
//     (numbered on from the object's last), and returns each comparison that failed. A
//     commit fails for the reason of its object first in ID order, as the separate
//     statements, which stop at the first, would; it changed nothing, and the others commit.
//
// Two commits of one statement must not name an object one of them updates (pgMerge.add):
// their comparisons would both read the object as it was before the statement. Such a
// commit goes as a transaction of its own after it.

// pgMergeSQL is the merged write. Its parameters: the objects to lock ($1, in ID order) and
// whether each is updated ($2); the updates ($3–$17: the commit's number, then the object's
// ID, tenant and version expected, the tenant and state its commit read it in or NULL, then
// the new row's columns and how many events it adds); the reads of objects not updated
// ($18–$21: the commit's number, the ID, tenant and state read); the events ($22–$24: the
// object's ID, the event's number among the object's new ones, its data).
const pgMergeSQL = `WITH l AS MATERIALIZED (
	SELECT x.id, coalesce(w.tenant, r.tenant) AS tenant, coalesce(w.state, r.state) AS state, w.version
	FROM unnest($1::text[], $2::bool[]) AS x(id, write)
	LEFT JOIN LATERAL (SELECT tenant, state, version FROM objects WHERE id = x.id AND x.write FOR NO KEY UPDATE) w ON true
	LEFT JOIN LATERAL (SELECT tenant, state FROM objects WHERE id = x.id AND NOT x.write FOR SHARE) r ON true),
t AS (SELECT * FROM unnest($3::int[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[],
	$11::text[], $12::bigint[], $13::text[], $14::bytea[], $15::bigint[], $16::text[], $17::int[])
	AS t(ord, id, tenant, expect, read_tenant, read_state, kind, parent_id, state, version, links, data, due, owner, events)),
f AS (SELECT t.ord, t.id, CASE WHEN l.tenant IS DISTINCT FROM t.tenant THEN 'not_found' ELSE 'version' END AS reason
	FROM t JOIN l ON l.id = t.id
	WHERE l.tenant IS DISTINCT FROM t.tenant OR l.version <> t.expect
		OR t.read_tenant IS NOT NULL AND (l.tenant <> t.read_tenant OR l.state <> t.read_state)
	UNION ALL
	SELECT r.ord, r.id, 'version' FROM unnest($18::int[], $19::text[], $20::text[], $21::text[]) AS r(ord, id, tenant, state)
	JOIN l ON l.id = r.id
	WHERE l.tenant IS DISTINCT FROM r.tenant OR l.state IS DISTINCT FROM r.state),
u AS (UPDATE objects o SET kind = t.kind, parent_id = t.parent_id, state = t.state, version = t.version,
		links = t.links::jsonb, data = t.data, due = t.due, owner = t.owner, events = o.events + t.events
	FROM t WHERE o.id = t.id AND NOT EXISTS (SELECT FROM f WHERE f.ord = t.ord)
	RETURNING o.id, o.tenant, o.events, t.events AS added),
e AS (INSERT INTO events (object_id, seq, tenant, data)
	SELECT u.id, u.events - u.added + v.i, u.tenant, v.data
	FROM u JOIN unnest($22::text[], $23::int[], $24::bytea[]) AS v(id, i, data) ON v.id = u.id)
SELECT ord, id, reason FROM f`

// mergeable says whether a batch, planned as p, can go in the merged write: it updates
// objects (no insert, no removal, nothing without a write), with no idempotency key and no
// lists to count again, and no two reads of one object expecting different states.
func mergeable(b store.Batch, p *pgPlan) bool {
	if b.Key != "" || len(b.Sets) > 0 || len(b.Writes) == 0 {
		return false
	}
	for _, o := range p.objects {
		if w := o.write; w != nil && (w.Expect == 0 || w.Remove) {
			return false
		}
		if _, _, ok := o.readExpect(); !ok {
			return false
		}
	}
	return true
}

// pgMerge is the commits of one merged write, as its parameters.
type pgMerge struct {
	n       int32           // commits added
	updated map[string]bool // each object named: whether a commit updates it

	ord                               []int32
	id, tenant                        []string
	expect                            []int64
	readTenant, readState             []*string
	kind, parent, state, links        []string
	version                           []int64
	data                              [][]byte
	due                               []*int64
	owner                             []*string
	events                            []int32
	readOrd                           []int32
	readID, readTenantOf, readStateOf []string
	eventID                           []string
	eventI                            []int32
	eventData                         [][]byte
}

// add adds the commit planned as p (mergeable) as the next one, unless it names an object
// another commit added updates, or updates one another reads: it says whether it did.
func (m *pgMerge) add(p *pgPlan) bool {
	if m.updated == nil {
		m.updated = map[string]bool{}
	}
	for _, o := range p.objects {
		if w, named := m.updated[o.id]; named && (w || o.write != nil) {
			return false
		}
	}
	m.n++
	for _, o := range p.objects {
		readTenant, readState, _ := o.readExpect()
		w := o.write
		if w == nil {
			m.updated[o.id] = false
			m.readOrd = append(m.readOrd, m.n)
			m.readID, m.readTenantOf, m.readStateOf = append(m.readID, o.id), append(m.readTenantOf, *readTenant), append(m.readStateOf, *readState)
			continue
		}
		m.updated[o.id] = true
		obj := w.Object
		m.ord = append(m.ord, m.n)
		m.id, m.tenant, m.expect = append(m.id, o.id), append(m.tenant, obj.Tenant), append(m.expect, w.Expect)
		m.readTenant, m.readState = append(m.readTenant, readTenant), append(m.readState, readState)
		m.kind, m.parent, m.state = append(m.kind, obj.Kind), append(m.parent, obj.ParentID), append(m.state, obj.State)
		m.version, m.links, m.data = append(m.version, obj.Version), append(m.links, o.links), append(m.data, o.data)
		m.due, m.owner, m.events = append(m.due, o.due), append(m.owner, o.owner), append(m.events, int32(len(o.evs))) //nolint:gosec // a batch's events are few
		for i, ev := range o.evs {
			m.eventID, m.eventI, m.eventData = append(m.eventID, o.id), append(m.eventI, int32(i+1)), append(m.eventData, ev) //nolint:gosec // as above
		}
	}
	return true
}

// statement is the merged write of the commits added.
func (m *pgMerge) statement() pgStatement {
	locks := slices.Sorted(maps.Keys(m.updated))
	writes := make([]bool, len(locks))
	for i, id := range locks {
		writes[i] = m.updated[id]
	}
	return pgStatement{sql: pgMergeSQL, args: []any{locks, writes,
		m.ord, m.id, m.tenant, m.expect, m.readTenant, m.readState, m.kind, m.parent, m.state, m.version, m.links, m.data,
		m.due, m.owner, m.events,
		m.readOrd, m.readID, m.readTenantOf, m.readStateOf,
		m.eventID, m.eventI, m.eventData}}
}

// worthIt says whether the merged write is worth sending: alone, an update of one object
// costs less as its own statements (commit.go) than as the merged write, with its 24 arrays
// and larger plan.
func (m *pgMerge) worthIt() bool { return len(m.id) > 1 }

// bind prepares the merged write on conn and encodes its arguments, its rows to come back in
// text (readMerged).
func (m *pgMerge) bind(ctx context.Context, conn *pgx.Conn) (*pgBound, error) {
	b, err := bindStatement(ctx, conn, m.statement())
	if err != nil {
		return nil, err
	}
	b.resultFormats = nil
	return b, nil
}

// commitMerged commits one batch, added to m, as a merged write on a connection of the
// worker's (Commit: a Background batch).
func (s *Store) commitMerged(ctx context.Context, m *pgMerge) error {
	conn, err := s.work.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection left in a transaction (a failure on the way) is closed, not reused.
	defer conn.Release()
	// Not cancelled by ctx from here: see Commit.
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgCommitTimeout)
	defer cancel()
	b, err := m.bind(sendCtx, conn.Conn())
	if err != nil {
		return err
	}
	s.merged.Add(1)
	p := conn.Conn().PgConn().StartPipeline(sendCtx)
	defer func() { _ = p.Close() }()
	b.send(p)
	p.SendPipelineSync()
	if err := p.Flush(); err != nil {
		return err
	}
	failures, failed, connErr := readMerged(p, false)
	return cmp.Or(connErr, failed, failures.err(1))
}

// pgMergeFailures is what the merged write returned: for each commit that failed (by its
// number), the object first in ID order whose comparison failed, and why.
type pgMergeFailures map[int32][2]string

// add records a failed comparison of commit ord's object id.
func (f pgMergeFailures) add(ord int32, id, reason string) {
	if first, ok := f[ord]; !ok || id < first[0] {
		f[ord] = [2]string{id, reason}
	}
}

// err is commit ord's outcome: nil when it applied.
func (f pgMergeFailures) err(ord int32) error {
	if first, ok := f[ord]; ok {
		return checkReason(first[1])
	}
	return nil
}

// readMerged reads the merged write's results in a group's pipeline, through its Sync:
// failures are the commits that did not apply; failed is the error of a transaction that
// failed as a whole (none of its commits applied), connErr that of a connection that failed
// on the way. async says a pgAsyncSQL comes first.
func readMerged(p *pgconn.Pipeline, async bool) (failures pgMergeFailures, failed, connErr error) {
	if async {
		failed, connErr = readResult(p, nil)
	}
	failures = pgMergeFailures{}
	if failed == nil && connErr == nil {
		failed, connErr = readResult(p, func(row [][]byte) error {
			if len(row) != 3 {
				return fmt.Errorf("merged write: a row of %d values, want 3", len(row))
			}
			ord, err := strconv.ParseInt(string(row[0]), 10, 32)
			if err != nil {
				return fmt.Errorf("merged write: commit number %q: %w", row[0], err)
			}
			failures.add(int32(ord), string(row[1]), string(row[2]))
			return nil
		})
	}
	if connErr != nil {
		return nil, nil, connErr
	}
	endFailed, connErr := endTransaction(p)
	if connErr != nil {
		return nil, nil, connErr
	}
	if failed == nil {
		failed = endFailed
	}
	return failures, failed, nil
}

// readResult reads one statement's result from a pipeline, giving each row (its values in
// text) to row if not nil: failed is the statement's error, connErr a connection's (or a
// row's that row refused: the results cannot be trusted).
func readResult(p *pgconn.Pipeline, row func([][]byte) error) (failed, connErr error) {
	res, err := p.GetResults()
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		return err, nil
	case err != nil:
		return nil, err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return nil, fmt.Errorf("pipeline: got %T, want a statement's result", res)
	}
	var rowErr error
	for row != nil && rr.NextRow() {
		if rowErr == nil {
			rowErr = row(rr.Values())
		}
	}
	if _, err := rr.Close(); err != nil {
		if errors.As(err, &pe) {
			return err, nil
		}
		return nil, err
	}
	return nil, rowErr
}
