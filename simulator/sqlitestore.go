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
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// sqliteSchemaVersion is what PRAGMA user_version holds once the schema below exists; migrate
// upgrades older files in place. Version 2 (relations) adds the index that finds an object's
// children of one kind; objects a version-1 file holds with a pending cascade are finished by
// the engine.
// Version 3 binds idempotency keys to a hash of the request body and keeps the clock offset
// in a meta table, so a restart after a clock advance keeps the simulated time.
const sqliteSchemaVersion = 3

// sqliteMigrations upgrade a file from version i+1 to i+2.
var sqliteMigrations = []string{
	// 1 → 2: children of a parent, by kind.
	`CREATE INDEX IF NOT EXISTS objects_tenant_parent_kind ON objects (tenant, parent_id, kind, id);`,
	// 2 → 3: body hashes of idempotency keys; the clock offset.
	`ALTER TABLE idempotency ADD COLUMN body_hash TEXT NOT NULL DEFAULT '';
	CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`,
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
CREATE INDEX IF NOT EXISTS objects_due ON objects (due);
CREATE INDEX IF NOT EXISTS objects_tenant_kind ON objects (tenant, kind, id);
CREATE INDEX IF NOT EXISTS objects_tenant_parent ON objects (tenant, parent_id, id);
CREATE INDEX IF NOT EXISTS objects_tenant_parent_kind ON objects (tenant, parent_id, kind, id);
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

// sqlitePragmas apply to every connection. synchronous=FULL syncs the WAL on each commit, so
// an operation the API accepted survives a crash or power loss.
const sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"

// sqliteReadConns bounds the read pool of a file database.
const sqliteReadConns = 4

// SQLiteStore is the durable Store: one SQLite file (modernc.org/sqlite, no cgo) in WAL mode.
// Writes go through a single connection, so transactions never contend for the write lock;
// reads of a file database use a small pool of read-only connections and see every committed
// write.
type SQLiteStore struct {
	db  *sql.DB // the single writer connection
	rdb *sql.DB // readers; db itself for ":memory:"
	// The write path's statements, prepared once: SQLite takes longer to parse them than to
	// run them.
	create, update, del, lastSeq, addEvent *sql.Stmt
}

const (
	sqlCreate = `INSERT INTO objects (id, tenant, kind, parent_id, state, version, due, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	sqlUpdate = `UPDATE objects SET kind = ?, parent_id = ?, state = ?, version = ?, due = ?, data = ?
		WHERE id = ? AND tenant = ? AND version = ?`
	sqlDelete   = "DELETE FROM objects WHERE id = ? AND tenant = ? AND version = ?"
	sqlLastSeq  = "SELECT COALESCE(MAX(seq), 0) FROM events WHERE object_id = ?"
	sqlAddEvent = "INSERT INTO events (object_id, seq, tenant, data) VALUES (?, ?, ?, ?)"
)

var _ Store = (*SQLiteStore)(nil)

// OpenSQLite opens (creating if needed) the SQLite database at path and its schema. The path
// ":memory:" gives a private in-memory database that lives until Close.
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
	s := &SQLiteStore{db: db, rdb: db}
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
	if err := s.migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("sqlite: open %s: %w", path, err), s.Close())
	}
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.create, sqlCreate}, {&s.update, sqlUpdate}, {&s.del, sqlDelete},
		{&s.lastSeq, sqlLastSeq}, {&s.addEvent, sqlAddEvent},
	} {
		if *p.stmt, err = db.PrepareContext(ctx, p.query); err != nil {
			return nil, errors.Join(fmt.Errorf("sqlite: open %s: prepare: %w", path, err), s.Close())
		}
	}
	return s, nil
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

// appendEvents numbers events on from the object's last seq (1 for its first) and stores them.
func (s *SQLiteStore) appendEvents(ctx context.Context, tx *sql.Tx, id string, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	var seq int64
	if err := tx.StmtContext(ctx, s.lastSeq).QueryRowContext(ctx, id).Scan(&seq); err != nil {
		return fmt.Errorf("last event: %w", err)
	}
	for _, e := range events {
		seq++
		e.Seq = seq
		data, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		if _, err := tx.StmtContext(ctx, s.addEvent).ExecContext(ctx, id, seq, e.Tenant, string(data)); err != nil {
			return fmt.Errorf("append event: %w", err)
		}
	}
	return nil
}

// missOrStale tells why a compare-and-set matched no row: the object is gone (or another
// tenant's), or its version moved on.
func missOrStale(ctx context.Context, tx *sql.Tx, tenant, id string) error {
	var owner string
	err := tx.QueryRowContext(ctx, "SELECT tenant FROM objects WHERE id = ?", id).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound
	case err != nil:
		return err
	case owner != tenant:
		return ErrNotFound
	default:
		return ErrVersion
	}
}

// Commit implements Store.
func (s *SQLiteStore) Commit(ctx context.Context, b Batch) error {
	data := make([]string, len(b.Writes))
	for i, w := range b.Writes {
		if w.Remove {
			continue
		}
		d, err := json.Marshal(w.Object)
		if err != nil {
			return fmt.Errorf("sqlite: commit %s: %w", w.Object.ID, err)
		}
		data[i] = string(d)
	}
	id := ""
	if len(b.Writes) > 0 {
		id = b.Writes[0].Object.ID
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for i, w := range b.Writes {
			if err := s.write(ctx, tx, w, data[i]); err != nil {
				return err
			}
		}
		if b.Key != "" && len(b.Writes) > 0 {
			return s.remember(ctx, tx, b.Writes[0].Object.Tenant, b.Key, b.KeyHash, id)
		}
		return nil
	})
	return sqliteErr("commit", id, err)
}

// write applies one write of a batch inside its transaction.
func (s *SQLiteStore) write(ctx context.Context, tx *sql.Tx, w Write, data string) error {
	o := w.Object
	var res sql.Result
	var err error
	switch {
	case w.Remove:
		res, err = tx.StmtContext(ctx, s.del).ExecContext(ctx, o.ID, o.Tenant, w.Expect)
	case w.Expect == 0:
		res, err = tx.StmtContext(ctx, s.create).ExecContext(ctx, o.ID, o.Tenant, o.Kind, o.ParentID, o.State, o.Version, dueColumn(o.Due), data)
	default:
		res, err = tx.StmtContext(ctx, s.update).ExecContext(ctx, o.Kind, o.ParentID, o.State, o.Version, dueColumn(o.Due), data, o.ID, o.Tenant, w.Expect)
	}
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		if w.Expect == 0 && !w.Remove {
			return ErrExists
		}
		return missOrStale(ctx, tx, o.Tenant, o.ID)
	}
	return s.appendEvents(ctx, tx, o.ID, w.Events)
}

// Get implements Store.
func (s *SQLiteStore) Get(ctx context.Context, tenant, id string) (*Object, error) {
	var data []byte
	err := s.rdb.QueryRowContext(ctx, "SELECT data FROM objects WHERE id = ? AND tenant = ?", id, tenant).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, sqliteErr("get", id, err)
	}
	o, err := decodeObject(data)
	return o, sqliteErr("get", id, err)
}

// List implements Store.
func (s *SQLiteStore) List(ctx context.Context, tenant string, f Filter) ([]*Object, error) {
	var q strings.Builder
	q.WriteString("SELECT data FROM objects WHERE tenant = ?")
	args := []any{tenant}
	for _, c := range []struct{ col, val string }{
		{"kind = ?", f.Kind}, {"parent_id = ?", f.ParentID}, {"state = ?", f.State}, {"id > ?", f.After},
	} {
		if c.val != "" {
			q.WriteString(" AND " + c.col)
			args = append(args, c.val)
		}
	}
	q.WriteString(" ORDER BY id")
	// The Link filter looks into the spec, so it is applied below and the limit with it.
	if f.Limit > 0 && f.Link[0] == "" {
		q.WriteString(" LIMIT ?")
		args = append(args, f.Limit)
	}
	rows, err := s.rdb.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list: %w", err)
	}
	defer rows.Close()
	var out []*Object
	for (f.Limit <= 0 || len(out) < f.Limit) && rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("sqlite: list: %w", err)
		}
		o, err := decodeObject(data)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list: %w", err)
		}
		if f.Matches(o) {
			out = append(out, o)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list: %w", err)
	}
	return out, nil
}

// Events implements Store.
func (s *SQLiteStore) Events(ctx context.Context, tenant, id string) ([]Event, error) {
	rows, err := s.rdb.QueryContext(ctx, "SELECT data FROM events WHERE object_id = ? AND tenant = ? ORDER BY seq", id, tenant)
	if err != nil {
		return nil, fmt.Errorf("sqlite: events %s: %w", id, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("sqlite: events %s: %w", id, err)
		}
		var e Event
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("sqlite: events %s: decode: %w", id, err)
		}
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
func (s *SQLiteStore) Due(ctx context.Context, now time.Time) ([]*Object, error) {
	rows, err := s.rdb.QueryContext(ctx, "SELECT data FROM objects WHERE due <= ? ORDER BY due, id", dueColumn(now))
	if err != nil {
		return nil, fmt.Errorf("sqlite: due: %w", err)
	}
	defer rows.Close()
	var out []*Object
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("sqlite: due: %w", err)
		}
		o, err := decodeObject(data)
		if err != nil {
			return nil, fmt.Errorf("sqlite: due: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: due: %w", err)
	}
	return out, nil
}

// NextDue implements Store.
func (s *SQLiteStore) NextDue(ctx context.Context) (time.Time, bool, error) {
	var data []byte
	err := s.rdb.QueryRowContext(ctx, "SELECT data FROM objects WHERE due IS NOT NULL ORDER BY due, id LIMIT 1").Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next due: %w", err)
	}
	// The exact time is in data (the column may be clamped).
	var o struct {
		Due time.Time `json:"due"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next due: decode: %w", err)
	}
	return o.Due, true, nil
}

// Idempotent implements Store.
func (s *SQLiteStore) Idempotent(ctx context.Context, tenant, key string) (string, string, bool, error) {
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

// remember records an idempotency key inside a write's transaction; an empty key is none.
func (s *SQLiteStore) remember(ctx context.Context, tx *sql.Tx, tenant, key, hash, id string) error {
	if key == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO idempotency (tenant, key, object_id, body_hash) VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant, key) DO UPDATE SET object_id = excluded.object_id, body_hash = excluded.body_hash`, tenant, key, id, hash)
	return err
}

// CountObjects implements Store.
func (s *SQLiteStore) CountObjects(ctx context.Context, tenant string) (int, error) {
	var n int
	if err := s.rdb.QueryRowContext(ctx, "SELECT COUNT(*) FROM objects WHERE tenant = ?", tenant).Scan(&n); err != nil {
		return 0, sqliteErr("count objects", "", err)
	}
	return n, nil
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
func (s *SQLiteStore) Counts(ctx context.Context) (map[[2]string]int, error) {
	rows, err := s.rdb.QueryContext(ctx, "SELECT kind, state, COUNT(*) FROM objects GROUP BY kind, state")
	if err != nil {
		return nil, fmt.Errorf("sqlite: counts: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]int{}
	for rows.Next() {
		var kind, state string
		var n int
		if err := rows.Scan(&kind, &state, &n); err != nil {
			return nil, fmt.Errorf("sqlite: counts: %w", err)
		}
		out[[2]string{kind, state}] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: counts: %w", err)
	}
	return out, nil
}

// Reset implements Store.
func (s *SQLiteStore) Reset(ctx context.Context) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"objects", "events", "idempotency"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+table); err != nil {
				return err
			}
		}
		return nil
	})
	return sqliteErr("reset", "", err)
}

// Ping implements Store: the writer connection is free within ctx and the objects table can be
// read.
func (s *SQLiteStore) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return sqliteErr("ping", "", err)
	}
	var n int
	if err := s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM objects LIMIT 1)").Scan(&n); err != nil {
		return sqliteErr("ping", "", err)
	}
	return nil
}

// Close implements Store.
func (s *SQLiteStore) Close() error {
	var errs []error
	for _, stmt := range []*sql.Stmt{s.create, s.update, s.del, s.lastSeq, s.addEvent} {
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
