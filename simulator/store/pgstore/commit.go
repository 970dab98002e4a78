package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// The PostgreSQL store's Commit: one READ COMMITTED transaction, sent as one pipeline of
// statements that PostgreSQL runs as one implicit transaction, committed at its end (and
// with the transactions of other requests waiting at the same time in one round trip:
// group.go):
//
//  1. Every object the batch names is locked in ID order, so two commits never wait for each
//     other in a cycle: an object it updates or removes with SELECT ... FOR [NO KEY] UPDATE
//     (its tenant and version compared), one it only read (store.Batch.Reads) FOR SHARE (its state
//     compared), and a new one by inserting it (the primary key refuses an ID taken, and makes
//     a concurrent insert of the same ID wait for the first).
//  2. The lists a decision counted (store.Batch.Sets) are listed again. Each statement sees what was
//     committed before it began, so a child made by a commit that share-locked the parent
//     before this one locked it is seen; one that would lock the parent later waits, then
//     reads the parent's new state and fails.
//  3. The changes are applied, each with its events, numbered on from the object's last (its
//     events column; for a new row, the last event of the ID's earlier life).
//  4. The tenants' count rows are updated (in tenant order) and compared with the quota: the
//     row lock makes racing commits count one after the other.
//  0. The idempotency key, if any, is claimed first (claimKey): inserted, never overwritten, so
//     a second commit with the key (another replica's) waits for the first and then fails
//     with a *store.KeyTakenError naming the first's object.
//  5. A few keys older than store.KeyRetention are forgotten (SKIP LOCKED: commits never wait
//     for each other to expire keys).
//
// A check that fails (a version, a state, a set, the quota) raises an error in the statement
// that makes it (lifecyclesim_check, schema), so PostgreSQL skips the rest of the pipeline
// and rolls the transaction back. A deadlock PostgreSQL breaks anyway (it
// should not happen) is retried. A Background commit (the worker's, on connections of its own,
// whose sessions set synchronous_commit off: Open) returns before its WAL record is flushed,
// and the next flush (of any commit that waits) makes it durable.
//
// Nothing here sends a notification: NOTIFY takes a lock that serialises every commit until
// it is flushed. A commit that succeeded hands its objects to the store's notifier, which
// sends them batched, after (notify.go). A write that leaves the object due records the
// committing replica as its owner, which lands it (claim.go).

// pgCommitAttempts bounds the tries of a commit that PostgreSQL aborted as a deadlock or a
// serialization failure.
const pgCommitAttempts = 3

// pgCommitTimeout bounds a commit once it is sent (a server or network that stopped
// answering): its outcome is then unknown, as after any lost connection.
const pgCommitTimeout = time.Minute

// pgCheckFailed is the SQLSTATE lifecyclesim_check raises.
const pgCheckFailed = "LS001"

// Commit implements store.Store. ctx bounds the wait for a connection; once sent, the transaction is
// not cancelled (as the SQLite store's commit is not), so the answer says whether the batch
// was applied (within pgCommitTimeout).
func (s *Store) Commit(ctx context.Context, b store.Batch) error {
	p, err := planPostgresCommit(b, s.notes.from)
	if err != nil {
		return err
	}
	since := s.cache.mark()
	for attempt := 1; ; attempt++ {
		err = s.commitOnce(ctx, b, p)
		if code := pgCode(err); attempt < pgCommitAttempts && (code == "40P01" || code == "40001") {
			continue
		}
		if err == nil {
			s.committed(b)
		}
		s.cacheCommit(p, err, since)
		if errors.Is(err, errKeyTaken) {
			return s.keyTaken(ctx, b)
		}
		return pgErr("commit", err)
	}
}

// pgObject is an object a commit names, with everything the batch does to it.
type pgObject struct {
	id    string
	write *store.Write // nil when it is only read
	data  []byte       // the write's object, packed (codec.PackObject)
	links string       // its links column
	// due and owner are its due time and the replica that lands it (schema 8), or nil
	// when nothing is due.
	due   *int64
	owner *string
	evs   [][]byte
	reads []store.Read
}

// pgPlan is a batch made ready to send: its objects in ID order, the change in each tenant's
// object count, and the IDs it inserts.
type pgPlan struct {
	objects  []*pgObject
	deltas   map[string]int
	inserted []string
}

// planPostgresCommit checks a batch's shape and encodes what it writes, with owner the
// replica that lands the objects it leaves due.
func planPostgresCommit(b store.Batch, owner string) (*pgPlan, error) {
	if b.Key != "" && b.KeyAt.IsZero() {
		return nil, fmt.Errorf("%w: an idempotency key without the time it was recorded", store.ErrInvalidBatch)
	}
	datas, err := codec.PackWrites(b)
	if err != nil {
		return nil, fmt.Errorf("postgres: commit: %w", err)
	}
	byID := map[string]*pgObject{}
	p := &pgPlan{deltas: map[string]int{}}
	for i := range b.Writes {
		w := &b.Writes[i]
		id := w.Object.ID
		if byID[id] != nil {
			return nil, fmt.Errorf("%w: the batch writes %s twice", store.ErrInvalidBatch, id)
		}
		o := &pgObject{id: id, write: w, data: datas[i]}
		if !w.Remove {
			if o.links, err = linksColumn(w.Object.Spec); err != nil {
				return nil, fmt.Errorf("postgres: commit %s: %w", id, err)
			}
			if due := codec.DueOf(w.Object.Due); due.Valid {
				o.due, o.owner = &due.Nanos, &owner
			}
		}
		for _, e := range w.Events {
			e.ObjectID, e.Tenant, e.Seq = "", "", 0 // columns hold them
			d, err := json.Marshal(e)
			if err != nil {
				return nil, fmt.Errorf("postgres: commit %s: encode event: %w", id, err)
			}
			o.evs = append(o.evs, d)
		}
		switch {
		case w.Remove:
			p.deltas[w.Object.Tenant]--
		case w.Expect == 0:
			p.deltas[w.Object.Tenant]++
			p.inserted = append(p.inserted, id)
		}
		byID[id] = o
	}
	for _, r := range b.Reads {
		o := byID[r.ID]
		if o == nil {
			o = &pgObject{id: r.ID}
			byID[r.ID] = o
		}
		o.reads = append(o.reads, r)
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		p.objects = append(p.objects, byID[id])
	}
	return p, nil
}

// pgPipeline is the statements of one commit, each with what its failure means.
type pgPipeline struct {
	stmts []pgStatement
}

// pgStatement is a statement of a commit.
type pgStatement struct {
	sql  string
	args []any
	// fail maps the statement's error to the store.Store's (a failed check, a unique
	// violation), or to nil for an error it does not expect.
	fail func(*pgconn.PgError) error
}

// queue adds a statement; fail, if not nil, says what its errors mean.
func (q *pgPipeline) queue(fail func(*pgconn.PgError) error, sql string, args ...any) {
	q.stmts = append(q.stmts, pgStatement{sql: sql, args: args, fail: fail})
}

// failed is what statement i of the commit failing with err means.
func (q *pgPipeline) failed(i int, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && q.stmts[i].fail != nil {
		if mapped := q.stmts[i].fail(pe); mapped != nil {
			return mapped
		}
	}
	return err
}

// checkErr is the store.Store's error for a failed check (lifecyclesim_check): store.ErrNotFound for the
// reason not_found, else store.ErrVersion.
func checkErr(pe *pgconn.PgError) error {
	if pe.Code != pgCheckFailed {
		return nil
	}
	return checkReason(pe.Message)
}

// checkReason is the store.Store's error for a comparison that failed for reason:
// store.ErrNotFound for not_found, else store.ErrVersion.
func checkReason(reason string) error {
	if reason == "not_found" {
		return store.ErrNotFound
	}
	return store.ErrVersion
}

// check is an expression that is true when cond is, and otherwise fails the statement
// (lifecyclesim_check) with reason, an SQL expression of type text. The PL/pgSQL function
// is called only when the check fails: a call costs PostgreSQL more than the rest of a
// parent's FOR SHARE check.
func check(cond, reason string) string {
	return "CASE WHEN " + cond + " THEN true ELSE lifecyclesim_check(false, " + reason + ") END"
}

// failVersion queues a check that fails with ErrVersion: the batch expects what cannot hold.
func (q *pgPipeline) failVersion() {
	q.queue(checkErr, "SELECT lifecyclesim_check(false, 'version')")
}

// readExpect is the tenant and state the batch's reads of o expect (nil for an object it
// does not read); ok is false when they expect it in two states, which cannot both hold.
func (o *pgObject) readExpect() (tenant, state *string, ok bool) {
	if len(o.reads) == 0 {
		return nil, nil, true
	}
	first := o.reads[0]
	if slices.ContainsFunc(o.reads[1:], func(r store.Read) bool { return r != first }) {
		return nil, nil, false
	}
	return &o.reads[0].Tenant, &o.reads[0].State, true
}

// commitOnce runs the batch in one transaction: a request's with those of the requests
// committing at the same time (commitGrouped, group.go), the worker's on its own connections;
// as a merged write (merge.go) when it can.
func (s *Store) commitOnce(ctx context.Context, b store.Batch, p *pgPlan) error {
	merge := mergeable(b, p)
	if !b.Background {
		return s.commitGrouped(ctx, &pgGroupCommit{batch: b, plan: p, merge: merge, done: make(chan error, 1)})
	}
	if merge {
		var m pgMerge
		if m.add(p); m.worthIt() {
			return s.commitMerged(ctx, &m)
		}
	}
	q := buildCommit(b, p)
	conn, err := s.work.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection left in a transaction (a failure on the way) is closed, not reused.
	defer conn.Release()

	// No BEGIN and COMMIT: the pipeline is one implicit transaction (pgx sends one Sync after
	// it), of the isolation the pool's connections default to, and without waiting for its
	// WAL record to be flushed, as the worker's sessions are set (Open; see Commit).
	batch := &pgx.Batch{}
	for _, st := range q.stmts {
		batch.Queue(st.sql, st.args...)
	}
	// Not cancelled by ctx from here: see Commit.
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgCommitTimeout)
	defer cancel()
	br := conn.SendBatch(sendCtx, batch)
	var failed error
	for i := 0; failed == nil && i < len(q.stmts); i++ {
		if _, err := br.Exec(); err != nil {
			failed = q.failed(i, err)
		}
	}
	// Close reads what is left (the server skips every statement after a failed one, and
	// rolls back) and the end of the transaction.
	if err := br.Close(); failed == nil {
		return err
	}
	return failed
}

// buildCommit is the statements of a batch's transaction, in the order of Commit's steps.
func buildCommit(b store.Batch, p *pgPlan) *pgPipeline {
	q := &pgPipeline{}
	if b.Key != "" && len(b.Writes) > 0 {
		claimKey(q, b)
	}
	// Without lists to count again (most commits: an accepted action, a phase landing),
	// nothing needs the store as it was before the batch: each write locks, checks and
	// changes its object in one statement.
	fused := len(b.Sets) == 0
	for _, o := range p.objects {
		if fused && o.write != nil && (o.write.Expect != 0 || o.write.Remove) {
			writeObject(q, o)
		} else {
			lockObject(q, o)
		}
	}
	for _, r := range b.Sets {
		recheckSet(q, r, p.inserted)
	}
	if !fused {
		for _, o := range p.objects {
			applyWrite(q, o)
		}
	}
	for _, tenant := range slices.Sorted(maps.Keys(p.deltas)) {
		if n := p.deltas[tenant]; n != 0 {
			countObjects(q, tenant, n, b.MaxObjects)
		}
	}
	if b.Key != "" && len(b.Writes) > 0 {
		q.queue(nil, `DELETE FROM idempotency WHERE ctid = ANY (ARRAY(SELECT ctid FROM idempotency WHERE created_at < $1
			ORDER BY created_at LIMIT 64 FOR UPDATE SKIP LOCKED))`, b.KeyAt.Add(-store.KeyRetention).UnixNano())
	}
	return q
}

// Statements of a commit.

// errKeyTaken is what the key's claim (claimKey) failing means, until Commit reads whose it is.
var errKeyTaken = errors.New("idempotency key taken")

// claimKey claims the batch's idempotency key (step 0, first, so that of two commits with one
// key the second waits on the first's row and then fails, before it locks any object): an
// insert, or the takeover of a key store.KeyRetention older than the batch's; a key held
// otherwise fails the check (key), and the whole commit with it. Never an overwrite: two
// replicas racing with one key make one object.
func claimKey(q *pgPipeline, b store.Batch) {
	o := b.Writes[0].Object
	q.queue(func(pe *pgconn.PgError) error {
		if pe.Code == pgCheckFailed && pe.Message == "key" {
			return errKeyTaken
		}
		return nil
	}, `WITH k AS (INSERT INTO idempotency AS i (tenant, key, object_id, body_hash, created_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (tenant, key) DO UPDATE SET object_id = excluded.object_id, body_hash = excluded.body_hash,
			created_at = excluded.created_at WHERE i.created_at < $6 RETURNING 1)
		SELECT `+check("EXISTS (SELECT FROM k)", "'key'"),
		o.Tenant, []byte(b.Key), o.ID, b.KeyHash, b.KeyAt.UnixNano(), b.KeyAt.Add(-store.KeyRetention).UnixNano())
}

// keyTaken is the error of a commit whose key was taken: a *store.KeyTakenError naming what
// the key holds (read after the failed transaction, so it sees the commit that took it), or
// ErrVersion if the key has gone since (the caller decides again).
func (s *Store) keyTaken(ctx context.Context, b store.Batch) error {
	tenant := b.Writes[0].Object.Tenant
	id, hash, ok, err := s.Idempotent(context.WithoutCancel(ctx), tenant, b.Key)
	switch {
	case err != nil:
		return err
	case !ok:
		return store.ErrVersion
	}
	return &store.KeyTakenError{Tenant: tenant, Key: b.Key, ID: id, BodyHash: hash}
}

// lockObject locks an object and checks it is as the batch expects (step 1): for a write, in
// its tenant at the version expected (else not_found or version), and for each read in the
// read's tenant and state (else version).
func lockObject(q *pgPipeline, o *pgObject) {
	w := o.write
	if w != nil && w.Expect == 0 && !w.Remove {
		insertObject(q, o)
		return
	}
	readTenant, readState, ok := o.readExpect()
	if !ok {
		q.failVersion()
		return
	}
	if w == nil {
		q.queue(checkErr, `WITH o AS (SELECT tenant, state FROM objects WHERE id = $1 FOR SHARE)
			SELECT `+check("EXISTS (SELECT FROM o WHERE tenant = $2 AND state = $3)", "'version'"),
			o.id, *readTenant, *readState)
		return
	}
	lock := "FOR NO KEY UPDATE" // the lock an UPDATE of other columns than the key takes
	if w.Remove {
		lock = "FOR UPDATE"
	}
	q.queue(checkErr, `WITH o AS (SELECT tenant, state, version FROM objects WHERE id = $1 `+lock+`)
		SELECT `+check("reason IS NULL", "reason")+` FROM (SELECT CASE
			WHEN o.tenant IS DISTINCT FROM $2 THEN 'not_found'
			WHEN o.version <> $3 THEN 'version'
			WHEN $4::text IS NOT NULL AND (o.tenant <> $4 OR o.state <> $5) THEN 'version'
		END AS reason FROM (SELECT) AS one LEFT JOIN o ON true) AS checked`,
		o.id, w.Object.Tenant, w.Expect, readTenant, readState)
}

// writeObject updates or removes an object with its events if it is as the batch expects
// (steps 1 and 3 at once): the UPDATE or DELETE locks the row, and compares it after any
// commit it waited for.
func writeObject(q *pgPipeline, o *pgObject) {
	w, obj := o.write, o.write.Object
	readTenant, readState, ok := o.readExpect()
	if !ok {
		q.failVersion()
		return
	}
	shape := writeShape{remove: w.Remove, events: len(o.evs) > 0}
	// In the order of the statement's parameters (writeShape.sql).
	args := []any{obj.ID, obj.Tenant, w.Expect, readTenant, readState}
	if !w.Remove {
		args = append(args, obj.Kind, obj.ParentID, obj.State, obj.Version, o.links, o.data, o.due, o.owner)
	}
	if shape.events {
		args = append(args, len(o.evs), o.evs)
	}
	q.queue(checkErr, shape.sql(), args...)
}

// writeShape is what a write's statement (writeObject) depends on: whether it removes the
// object, and whether it adds events.
type writeShape struct{ remove, events bool }

// writeSQLs holds each writeShape's statement, built once: a commit's writes would otherwise
// build the same text of a few hundred bytes again for every object.
var writeSQLs sync.Map

// sql is the statement of a write of this shape: $1 the object's ID, $2 its tenant, $3 the
// version expected, $4 and $5 the read's tenant and state (or NULL); then, unless it removes
// the object, the new row's columns (kind, parent, state, version, links, data, due, owner);
// then the events' count and data, when it adds events.
func (sh writeShape) sql() string {
	if s, ok := writeSQLs.Load(sh); ok {
		return s.(string) //nolint:forcetypeassert // the map holds nothing else
	}
	p := params(5)
	where := " WHERE id = $1 AND tenant = $2 AND version = $3 AND ($4::text IS NULL OR (tenant = $4 AND state = $5))"
	var change, events string
	if sh.remove {
		change = "DELETE FROM objects" + where + " RETURNING events"
		if sh.events {
			events = p.next()
			change += " + " + events + " AS events"
		}
	} else {
		// No column of an index changes here (links only with the spec, and then with its
		// own value): PostgreSQL can rewrite the row in place (schema 6).
		change = "UPDATE objects SET kind = " + p.next() + ", parent_id = " + p.next() +
			", state = " + p.next() + ", version = " + p.next() +
			", links = " + p.next() + "::jsonb, data = " + p.next() +
			", due = " + p.next() + "::bigint, owner = " + p.next() + "::text"
		if sh.events {
			events = p.next()
			change += ", events = events + " + events
		}
		change += where + " RETURNING events"
	}
	sql := "WITH o AS (" + change + ")"
	if sh.events {
		// The events' count is the last parameter so far; their data the next.
		sql += ", e AS (" + insertEvents(int(p), int(p)+1) + ")"
	}
	// Each statement sees the rows as they were when it began: a row gone meanwhile reads
	// as changed (version), which it was.
	sql += " SELECT " + check("EXISTS (SELECT FROM o)",
		"CASE WHEN EXISTS (SELECT FROM objects WHERE id = $1 AND tenant = $2) THEN 'version' ELSE 'not_found' END")
	writeSQLs.Store(sh, sql)
	return sql
}

// params numbers a statement's parameters for its text, built in their order: the count of
// those named so far.
type params int

// next names the next parameter ($1 after none).
func (p *params) next() string {
	*p++
	return "$" + strconv.Itoa(int(*p))
}

// insertObject inserts a new object with its events (steps 1 and 3 at once).
func insertObject(q *pgPipeline, o *pgObject) {
	obj := o.write.Object
	sql := `INSERT INTO objects (id, tenant, kind, parent_id, state, version, links, events, data, due, owner)
		VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, coalesce((SELECT max(seq) FROM events WHERE object_id = $1), 0) + $8, $9,
			$10::bigint, $11::text)`
	args := []any{obj.ID, obj.Tenant, obj.Kind, obj.ParentID, obj.State, obj.Version, o.links, len(o.evs), o.data, o.due, o.owner}
	if len(o.evs) > 0 {
		sql = "WITH o AS (" + sql + " RETURNING events) " + insertEvents(8, 12)
		args = append(args, o.evs)
	}
	q.queue(func(pe *pgconn.PgError) error {
		if pe.Code == "23505" && pe.ConstraintName == "objects_pkey" { // unique_violation: the ID is taken
			return store.ErrExists
		}
		return nil
	}, sql, args...)
	if len(o.reads) > 0 {
		// The batch read an object it makes: it was not there when the decision read it.
		q.failVersion()
	}
}

// insertEvents appends a write's events after the object's statement, a CTE o that returns
// the object's events column as it is once they are added: $1 is the object's ID, $2 its
// tenant, $count how many events there are and $data their JSON, in order.
func insertEvents(count, data int) string {
	return fmt.Sprintf(`INSERT INTO events (object_id, seq, tenant, data)
	SELECT $1, o.events - $%d + e.i, $2, e.data FROM o, unnest($%d::bytea[]) WITH ORDINALITY AS e(data, i)`, count, data)
}

// applyWrite applies an update or a removal, with its events (step 3); inserts are done.
func applyWrite(q *pgPipeline, o *pgObject) {
	w := o.write
	if w == nil || w.Expect == 0 && !w.Remove {
		return
	}
	obj := w.Object
	if w.Remove {
		if len(o.evs) == 0 {
			q.queue(nil, "DELETE FROM objects WHERE id = $1", obj.ID)
			return
		}
		q.queue(nil, "WITH o AS (DELETE FROM objects WHERE id = $1 RETURNING events + $3 AS events) "+insertEvents(3, 4),
			obj.ID, obj.Tenant, len(o.evs), o.evs)
		return
	}
	sql := `UPDATE objects SET kind = $3, parent_id = $4, state = $5, version = $6, links = $7::jsonb,
		events = events + $8, data = $9, due = $10::bigint, owner = $11::text WHERE id = $1 AND tenant = $2`
	args := []any{obj.ID, obj.Tenant, obj.Kind, obj.ParentID, obj.State, obj.Version, o.links, len(o.evs), o.data, o.due, o.owner}
	if len(o.evs) > 0 {
		sql = "WITH o AS (" + sql + " RETURNING events) " + insertEvents(8, 12)
		args = append(args, o.evs)
	}
	q.queue(nil, sql, args...)
}

// recheckSet lists again what a decision counted (step 2), leaving out the objects the batch
// inserts (it cannot have counted them).
func recheckSet(q *pgPipeline, r store.SetRead, inserted []string) {
	f := store.Filter{Kind: r.Filter.Kind, ParentID: r.Filter.ParentID, Link: r.Filter.Link}
	where, args, err := filterSQL(r.Tenant, f, inserted)
	if err != nil { // a link that cannot be encoded: no object has it
		q.failVersion()
		return
	}
	ids := r.IDs
	if ids == nil {
		ids = []string{}
	}
	args = append(args, ids)
	q.queue(checkErr, "SELECT "+check("ARRAY(SELECT id FROM objects WHERE "+where+" ORDER BY id) = $"+
		strconv.Itoa(len(args))+"::text[]", "'version'"), args...)
}

// countObjects adds n to a tenant's object count and checks the quota, when positive, for a
// batch that adds objects (step 4); a failed check's reason is the count before the batch.
func countObjects(q *pgPipeline, tenant string, n, quota int) {
	q.queue(func(pe *pgconn.PgError) error {
		if pe.Code != pgCheckFailed {
			return nil
		}
		held, err := strconv.Atoi(pe.Message)
		if err != nil {
			return fmt.Errorf("the quota check's reason %q is not a count: %w", pe.Message, err)
		}
		return &store.QuotaError{Tenant: tenant, Max: quota, Held: held, Asked: n}
	}, `WITH t AS (INSERT INTO tenants AS t (tenant, objects) VALUES ($1, $2)
			ON CONFLICT (tenant) DO UPDATE SET objects = t.objects + excluded.objects RETURNING objects)
		SELECT `+check("$3 <= 0 OR $2 <= 0 OR objects <= $3", "(objects - $2)::text")+` FROM t`,
		tenant, n, quota)
}
