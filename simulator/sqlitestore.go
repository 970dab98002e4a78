package simulator

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// sqliteSchemaVersion is what PRAGMA user_version holds once the schema below exists; migrate
// upgrades older files in place. Version 2 (relations) adds the index that finds an object's
// children of one kind; objects a version-1 file holds with a pending cascade are finished by
// the engine.
// Version 3 binds idempotency keys to a hash of the request body and keeps the clock offset
// in a meta table, so a restart after a clock advance keeps the simulated time.
// Version 4 drops the objects' secondary indexes: reads and scheduling are served from memory
// (table.go), and every index was pages more to write for each change.
const sqliteSchemaVersion = 4

// sqliteMigrations upgrade a file from version i+1 to i+2.
var sqliteMigrations = []string{
	// 1 → 2: children of a parent, by kind.
	`CREATE INDEX IF NOT EXISTS objects_tenant_parent_kind ON objects (tenant, parent_id, kind, id);`,
	// 2 → 3: body hashes of idempotency keys; the clock offset.
	`ALTER TABLE idempotency ADD COLUMN body_hash TEXT NOT NULL DEFAULT '';
	CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`,
	// 3 → 4: no secondary indexes on objects.
	`DROP INDEX IF EXISTS objects_due;
	DROP INDEX IF EXISTS objects_tenant_kind;
	DROP INDEX IF EXISTS objects_tenant_parent;
	DROP INDEX IF EXISTS objects_tenant_parent_kind;`,
}

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS objects (
	id        TEXT PRIMARY KEY,
	tenant    TEXT NOT NULL,
	kind      TEXT NOT NULL,
	parent_id TEXT NOT NULL,
	state     TEXT NOT NULL,
	version   INTEGER NOT NULL,
	due       INTEGER,
	data      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
	object_id TEXT NOT NULL,
	seq       INTEGER NOT NULL,
	tenant    TEXT NOT NULL,
	data      TEXT NOT NULL,
	PRIMARY KEY (object_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency (
	tenant    TEXT NOT NULL,
	key       TEXT NOT NULL,
	object_id TEXT NOT NULL,
	body_hash TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`

// sqlitePragmas apply to every connection. synchronous=FULL syncs the WAL on each commit; a
// commit carries every change the journal has gathered (group commit), and a request is
// answered only once its change is in a synced commit, so an operation the API accepted
// survives a crash or power loss.
const sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"

// sqliteReadConns bounds the read pool of a file database.
const sqliteReadConns = 4

// SQLiteStore is the durable Store: one SQLite file (modernc.org/sqlite, no cgo) in WAL mode,
// written as a journal of the in-memory table that serves every object read.
//
// A Commit checks its compare-and-sets and applies the batch to the table under the table's
// lock, queues it for the file in the same order, and waits until a commit of the file holds
// it. One writer goroutine takes everything queued since its last commit and writes it in one
// SQLite transaction, so concurrent changes share one fsync (group commit). The file always
// holds a prefix of the changes in the order they were applied; if writing a group fails,
// every change queued up to then fails and the table is reloaded from the file.
//
// Reads see a change as soon as it is applied, up to one group commit before it is on disk: a
// crash can take back a change that was read but never one that was acknowledged. The worker
// does not wait for its own changes (Batch.Background): they are durable with the next group,
// and after a crash the worker redoes them from the due times in the file.
type SQLiteStore struct {
	db  *sql.DB // the single writer connection
	rdb *sql.DB // readers (events, idempotency keys); db itself for ":memory:"
	// The write path's statements, prepared once: SQLite takes longer to parse them than to
	// run them.
	upsert, del, addEvent, remember *sql.Stmt

	t *table
	// keys are idempotency keys applied but not yet in the file (under t.mu).
	keys map[[2]string]pendingKey
	// broken is set (under t.mu) when the table could not be reloaded after a failed group:
	// the store refuses everything from then on.
	broken error

	j       journal
	flushed chan struct{} // closed when the writer goroutine ends
	// groups counts the transactions the writer committed and records the commits in them.
	groups, records atomic.Uint64
}

type pendingKey struct {
	id, hash string
	seq      uint64
}

const (
	sqlUpsert = `INSERT INTO objects (id, tenant, kind, parent_id, state, version, due, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET tenant = excluded.tenant,
		kind = excluded.kind, parent_id = excluded.parent_id, state = excluded.state,
		version = excluded.version, due = excluded.due, data = excluded.data`
	sqlDelete   = "DELETE FROM objects WHERE id = ?"
	// An event is numbered on from the object's last one by the statement that stores it;
	// its data leaves out what the columns hold (object, seq, tenant).
	sqlAddEvent = `INSERT INTO events (object_id, seq, tenant, data)
		SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3 FROM events WHERE object_id = ?1`
	sqlRemember = `INSERT INTO idempotency (tenant, key, object_id, body_hash) VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant, key) DO UPDATE SET object_id = excluded.object_id, body_hash = excluded.body_hash`
)

var _ Store = (*SQLiteStore)(nil)

// OpenSQLite opens (creating if needed) the SQLite database at path and its schema, and loads
// its objects into memory. The path ":memory:" gives a private in-memory database that lives
// until Close.
func OpenSQLite(ctx context.Context, path string) (*SQLiteStore, error) {
	// The driver cuts the DSN at the first '?', and a "file:" name would be parsed as a URI.
	if path == "" || strings.Contains(path, "?") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: open %q: want :memory: or a plain file path", path)
	}
	// _txlock=immediate takes the write lock at BEGIN: a transaction that starts by reading
	// cannot fail later with SQLITE_BUSY when another process holds the file.
	db, err := sql.Open("sqlite", path+"?"+sqlitePragmas+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &SQLiteStore{db: db, rdb: db, t: newTable(), keys: map[[2]string]pendingKey{}, flushed: make(chan struct{})}
	s.j.init()
	if path == ":memory:" {
		// Every connection has its own memory database: keep the one connection forever.
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	} else {
		rdb, err := sql.Open("sqlite", path+"?"+sqlitePragmas+"&_pragma=query_only(1)")
		if err != nil {
			return nil, errors.Join(fmt.Errorf("sqlite: open %s: %w", path, err), db.Close())
		}
		rdb.SetMaxOpenConns(sqliteReadConns)
		rdb.SetMaxIdleConns(sqliteReadConns)
		s.rdb = rdb
	}
	fail := func(err error) (*SQLiteStore, error) {
		close(s.flushed) // the writer never started
		return nil, errors.Join(fmt.Errorf("sqlite: open %s: %w", path, err), s.Close())
	}
	if err := s.migrate(ctx); err != nil {
		return fail(err)
	}
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.upsert, sqlUpsert}, {&s.del, sqlDelete}, {&s.addEvent, sqlAddEvent},
		{&s.remember, sqlRemember},
	} {
		if *p.stmt, err = db.PrepareContext(ctx, p.query); err != nil {
			return fail(fmt.Errorf("prepare: %w", err))
		}
	}
	if err := s.load(ctx); err != nil {
		return fail(err)
	}
	go s.write()
	return s, nil
}

// load fills the table from the file.
func (s *SQLiteStore) load(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "SELECT id, tenant, kind, parent_id, state, version, due, data FROM objects")
	if err != nil {
		return fmt.Errorf("load objects: %w", err)
	}
	defer rows.Close()
	s.t.clear()
	for rows.Next() {
		e := &entry{}
		var due sql.NullInt64
		if err := rows.Scan(&e.id, &e.tenant, &e.kind, &e.parent, &e.state, &e.version, &due, &e.data); err != nil {
			return fmt.Errorf("load objects: %w", err)
		}
		if due.Valid {
			// The column orders (it is clamped to what nanoseconds hold); the object's data
			// has the exact time.
			e.due = time.Unix(0, due.Int64).UTC()
		}
		s.t.put(e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load objects: %w", err)
	}
	return nil
}

// migrate creates the schema of a new file, upgrades a file of an older version, and refuses
// a file written by a newer one. It runs in one transaction: a failed upgrade leaves the file
// as it was.
func (s *SQLiteStore) migrate(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if v > sqliteSchemaVersion {
			return fmt.Errorf("schema version %d is newer than this build's %d", v, sqliteSchemaVersion)
		}
		if v == 0 {
			if _, err := tx.ExecContext(ctx, sqliteSchema); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		} else {
			for i := v; i < sqliteSchemaVersion; i++ {
				if _, err := tx.ExecContext(ctx, sqliteMigrations[i-1]); err != nil {
					return fmt.Errorf("migrate schema %d → %d: %w", i, i+1, err)
				}
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", sqliteSchemaVersion)); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
		return nil
	})
}

// tx runs fn in a write transaction, committing if it returns nil.
func (s *SQLiteStore) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// sqliteErr gives a database error its context. The Store's sentinel errors are returned as
// they are, like MemStore returns them.
func sqliteErr(op, id string, err error) error {
	switch {
	case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrVersion), errors.Is(err, ErrExists):
		return err
	case id == "":
		return fmt.Errorf("sqlite: %s: %w", op, err)
	default:
		return fmt.Errorf("sqlite: %s %s: %w", op, id, err)
	}
}

// Unix nanoseconds cover the years 1678 to 2262; dueColumn clamps times beyond them.
var (
	minDue = time.Unix(0, math.MinInt64)
	maxDue = time.Unix(0, math.MaxInt64)
)

// dueColumn is the due column's value for t: unix nanoseconds, NULL when nothing is
// scheduled. It only selects and orders; the exact time stays in data.
func dueColumn(t time.Time) any {
	switch {
	case t.IsZero():
		return nil
	case t.Before(minDue):
		return int64(math.MinInt64)
	case t.After(maxDue):
		return int64(math.MaxInt64)
	default:
		return t.UnixNano()
	}
}

func decodeObject(data []byte) (*Object, error) {
	var o Object
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return &o, nil
}

// Commit implements Store.
func (s *SQLiteStore) Commit(ctx context.Context, b Batch) error {
	datas, err := encodeWrites(b)
	if err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	r := &record{writes: make([]recordWrite, len(b.Writes))}
	if !b.Background {
		r.done = make(chan error, 1)
	}
	for i, w := range b.Writes {
		o := w.Object
		evs := make([][]byte, len(w.Events))
		for j, e := range w.Events {
			e.ObjectID, e.Tenant = "", ""
			if evs[j], err = json.Marshal(e); err != nil {
				return fmt.Errorf("sqlite: commit %s: encode event: %w", o.ID, err)
			}
		}
		r.writes[i] = recordWrite{id: o.ID, tenant: o.Tenant, kind: o.Kind, parent: o.ParentID, state: o.State,
			version: o.Version, due: dueColumn(o.Due), data: datas[i], remove: w.Remove, events: evs}
	}
	s.t.mu.Lock()
	if s.broken != nil {
		s.t.mu.Unlock()
		return s.broken
	}
	if err := s.t.check(b); err != nil {
		s.t.mu.Unlock()
		return err
	}
	for i, w := range b.Writes {
		s.t.apply(w, datas[i])
	}
	if b.Key != "" && len(b.Writes) > 0 {
		r.key = [2]string{b.Writes[0].Object.Tenant, b.Key}
		r.keyID, r.keyHash = b.Writes[0].Object.ID, b.KeyHash
	}
	// Queued under the table's lock: the file gets the changes in the order they applied.
	seq := s.j.push(r)
	if r.key[1] != "" {
		s.keys[r.key] = pendingKey{id: r.keyID, hash: r.keyHash, seq: seq}
	}
	s.t.mu.Unlock()
	if r.done == nil {
		return nil
	}
	// Not bounded by ctx: the change is applied and every reader sees it; whether the client
	// is still there does not change whether it must reach the file.
	return <-r.done
}

// record is one Commit as the journal writes it: the objects' columns and JSON, their events
// and the idempotency key, copied when it was applied. A reset record empties the file.
type record struct {
	writes         []recordWrite
	key            [2]string // tenant, key
	keyID, keyHash string
	reset          bool
	seq            uint64
	done           chan error // nil for background commits
}

type recordWrite struct {
	id, tenant, kind, parent, state string
	version                         int64
	due                             any
	data                            []byte
	remove                          bool
	// events are encoded without their object, seq and tenant (the columns hold them).
	events [][]byte
}

// journal queues applied records for the writer goroutine.
type journal struct {
	mu      sync.Mutex
	cond    sync.Cond
	pending []*record
	pushed  uint64 // seq of the last record queued
	written uint64 // seq of the last record the writer finished with (written or failed)
	closed  bool
}

func (j *journal) init() { j.cond.L = &j.mu }

// push queues a record and returns its seq.
func (j *journal) push(r *record) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.pushed++
	r.seq = j.pushed
	j.pending = append(j.pending, r)
	j.cond.Broadcast()
	return r.seq
}

// take waits for queued records and takes them all; false once closed and empty.
func (j *journal) take() ([]*record, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for len(j.pending) == 0 && !j.closed {
		j.cond.Wait()
	}
	rs := j.pending
	j.pending = nil
	return rs, len(rs) > 0
}

// takeNow takes whatever is queued without waiting.
func (j *journal) takeNow() []*record {
	j.mu.Lock()
	defer j.mu.Unlock()
	rs := j.pending
	j.pending = nil
	return rs
}

// finish marks records done and answers their waiters.
func (j *journal) finish(rs []*record, err error) {
	for _, r := range rs {
		if r.done != nil {
			r.done <- err
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.written = rs[len(rs)-1].seq
	j.cond.Broadcast()
}

// sync waits until every record queued before the call is written (or failed).
func (j *journal) sync() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for target := j.pushed; j.written < target; {
		j.cond.Wait()
	}
}

// close lets the writer end once the queue is empty.
func (j *journal) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	j.cond.Broadcast()
}

// write is the writer goroutine: it writes the queued records, a group per transaction, until
// the journal is closed and empty.
func (s *SQLiteStore) write() {
	defer close(s.flushed)
	ctx := context.Background()
	for {
		rs, ok := s.j.take()
		if !ok {
			return
		}
		err := s.tx(ctx, func(tx *sql.Tx) error {
			g := groupStmts{upsert: tx.StmtContext(ctx, s.upsert), del: tx.StmtContext(ctx, s.del),
				addEvent: tx.StmtContext(ctx, s.addEvent), remember: tx.StmtContext(ctx, s.remember)}
			for _, r := range rs {
				if err := g.write(ctx, tx, r); err != nil {
					return err
				}
			}
			return nil
		})
		s.t.mu.Lock()
		if err != nil {
			// Changes queued since were checked against the failed ones: they fail too, and
			// the table goes back to what the file holds.
			err = fmt.Errorf("sqlite: commit: %w", err)
			rs = append(rs, s.j.takeNow()...)
			clear(s.keys)
			if lerr := s.load(ctx); lerr != nil {
				s.broken = fmt.Errorf("sqlite: the file could not be written (%w) nor read back (%w): restart lifecyclesim", err, lerr)
			}
		} else {
			s.groups.Add(1)
			s.records.Add(uint64(len(rs)))
			last := rs[len(rs)-1].seq
			for k, p := range s.keys {
				if p.seq <= last {
					delete(s.keys, k)
				}
			}
		}
		s.t.mu.Unlock()
		s.j.finish(rs, err)
	}
}

// groupStmts are the write statements bound to one group's transaction.
type groupStmts struct{ upsert, del, addEvent, remember *sql.Stmt }

// write writes one record inside the group's transaction.
func (g groupStmts) write(ctx context.Context, tx *sql.Tx, r *record) error {
	if r.reset {
		for _, table := range []string{"objects", "events", "idempotency"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+table); err != nil {
				return fmt.Errorf("reset: %w", err)
			}
		}
		return nil
	}
	for _, w := range r.writes {
		var err error
		if w.remove {
			_, err = g.del.ExecContext(ctx, w.id)
		} else {
			_, err = g.upsert.ExecContext(ctx, w.id, w.tenant, w.kind, w.parent, w.state, w.version, w.due, w.data)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w.id, err)
		}
		for _, e := range w.events {
			if _, err := g.addEvent.ExecContext(ctx, w.id, w.tenant, e); err != nil {
				return fmt.Errorf("%s: append event: %w", w.id, err)
			}
		}
	}
	if r.key[1] != "" {
		if _, err := g.remember.ExecContext(ctx, r.key[0], r.key[1], r.keyID, r.keyHash); err != nil {
			return fmt.Errorf("idempotency key: %w", err)
		}
	}
	return nil
}

// JournalStats reports how many transactions the journal's writer committed and how many
// commits they carried (their ratio is the mean group size).
func (s *SQLiteStore) JournalStats() (groups, records uint64) {
	return s.groups.Load(), s.records.Load()
}

// Get implements Store.
func (s *SQLiteStore) Get(ctx context.Context, tenant, id string) (*Object, error) {
	o, err := tableGet(ctx, s.t, tenant, id)
	return o, sqliteErr("get", id, err)
}

// List implements Store.
func (s *SQLiteStore) List(ctx context.Context, tenant string, f Filter) ([]*Object, error) {
	objs, err := tableList(ctx, s.t, tenant, f)
	return objs, sqliteErr("list", "", err)
}

// Events implements Store. Events are read from the file, once the changes applied before the
// call are in it.
func (s *SQLiteStore) Events(ctx context.Context, tenant, id string) ([]Event, error) {
	s.j.sync()
	rows, err := s.rdb.QueryContext(ctx, "SELECT seq, data FROM events WHERE object_id = ? AND tenant = ? ORDER BY seq", id, tenant)
	if err != nil {
		return nil, fmt.Errorf("sqlite: events %s: %w", id, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var data []byte
		var seq int64
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, fmt.Errorf("sqlite: events %s: %w", id, err)
		}
		var e Event
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("sqlite: events %s: decode: %w", id, err)
		}
		// Files before version 4 also kept these in data; the columns are authoritative.
		e.ObjectID, e.Seq, e.Tenant = id, seq, tenant
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: events %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, ErrNotFound
	}
	return out, nil
}

// Due implements Store.
func (s *SQLiteStore) Due(ctx context.Context, now time.Time) ([]Scheduled, error) {
	objs, err := tableDue(ctx, s.t, now)
	return objs, sqliteErr("due", "", err)
}

// NextDue implements Store.
func (s *SQLiteStore) NextDue(context.Context) (time.Time, bool, error) {
	s.t.mu.RLock()
	defer s.t.mu.RUnlock()
	next, ok := s.t.nextDue()
	return next, ok, nil
}

// Idempotent implements Store.
func (s *SQLiteStore) Idempotent(ctx context.Context, tenant, key string) (string, string, bool, error) {
	s.t.mu.RLock()
	p, ok := s.keys[[2]string{tenant, key}]
	s.t.mu.RUnlock()
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

// CountObjects implements Store.
func (s *SQLiteStore) CountObjects(_ context.Context, tenant string) (int, error) {
	s.t.mu.RLock()
	defer s.t.mu.RUnlock()
	return s.t.tenants[tenant], nil
}

// ClockOffset implements Store.
func (s *SQLiteStore) ClockOffset(ctx context.Context) (time.Duration, error) {
	var v int64
	err := s.rdb.QueryRowContext(ctx, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'clock_offset_ns'").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, sqliteErr("clock offset", "", err)
	}
	return time.Duration(v), nil
}

// SetClockOffset implements Store.
func (s *SQLiteStore) SetClockOffset(ctx context.Context, d time.Duration) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('clock_offset_ns', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(int64(d), 10))
		return err
	})
	return sqliteErr("set clock offset", "", err)
}

// Counts implements Store.
func (s *SQLiteStore) Counts(context.Context) (map[[2]string]int, error) {
	s.t.mu.RLock()
	defer s.t.mu.RUnlock()
	return s.t.kindStateCounts(), nil
}

// Reset implements Store: the table empties at once, the file with the journal's next group.
func (s *SQLiteStore) Reset(context.Context) error {
	r := &record{reset: true, done: make(chan error, 1)}
	s.t.mu.Lock()
	if s.broken != nil {
		s.t.mu.Unlock()
		return s.broken
	}
	s.t.clear()
	clear(s.keys)
	s.j.push(r)
	s.t.mu.Unlock()
	return sqliteErr("reset", "", <-r.done)
}

// Ping implements Store: the table can be written, the writer connection is free within ctx
// and the file can be read.
func (s *SQLiteStore) Ping(ctx context.Context) error {
	s.t.mu.RLock()
	broken := s.broken
	s.t.mu.RUnlock()
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

// Close implements Store: it writes what the journal holds, then closes the file.
func (s *SQLiteStore) Close() error {
	s.j.close()
	<-s.flushed
	var errs []error
	for _, stmt := range []*sql.Stmt{s.upsert, s.del, s.addEvent, s.remember} {
		if stmt != nil {
			errs = append(errs, stmt.Close())
		}
	}
	if s.rdb != s.db {
		errs = append(errs, s.rdb.Close())
	}
	if err := errors.Join(append(errs, s.db.Close())...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}
