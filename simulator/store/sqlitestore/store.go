package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/table"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// sqliteSchemaVersion is what PRAGMA user_version holds once the schema below exists; migrate
// upgrades older files in place. Version 2 (relations) adds the index that finds an object's
// children of one kind; objects a version-1 file holds with a pending cascade are finished by
// the engine.
// Version 3 binds idempotency keys to a hash of the request body and keeps the clock offset
// in a meta table, so a restart after a clock advance keeps the simulated time.
// Version 4 serves reads from memory and writes through a journal table (journal.go): it
// drops the objects' secondary indexes (every index was pages more to write for each change),
// keeps each object's last event number in a column, and adds the journal.
// Version 5 keeps when each idempotency key was recorded, so keys expire (store.KeyRetention).
// Version 6 lets a row of the events table hold several consecutive events of its object
// (decodeEventRow): the tables are unchanged, but a build before it would misread those rows.
// Version 7 keeps the journal in a file beside the database (FILE-log, log.go) and the
// last row a checkpoint applied in meta: a build before it would not replay that file. The
// journal table stays for what a file of an older version left in it.
// Version 8 makes the events table a rowid table (eventsTable) and writes the log in whole
// blocks (a new magic, see changeLog): a build before it would not read that log.
// Version 9 records the log the database expects whenever the log starts over (logRecord,
// logcheck.go), so a missing, cut or damaged log is told from an intact one: a build before
// it would start the log over without recording it, and this one would then refuse the log.
// Version 10 keeps each object's packed form (codec.PackObject) in the data column, as the
// table and the journal hold it, where earlier versions kept its JSON: a write encodes its
// object once. Rows and log frames of earlier versions are read as they are (JSON), so
// nothing is rewritten; a build before it would misread the packed rows.
const sqliteSchemaVersion = 10

// eventsTable is the events table from version 8 on. Its rows are a rowid table's, each new
// row after the last, and the primary key is an index of its own, whose entries are an ID,
// a number and a rowid. It was a WITHOUT ROWID table before: a B-tree whose keys are the whole
// rows, and a row of a checkpoint is several KB of events (one row per object, see
// checkpointBatch.apply), so every key compared on the way to an insert read the row's
// overflow pages. A checkpoint of 8,192 records then took longer the more events the file
// held: 62 ms at first, 110-150 ms after some 300k actions (with 512 objects in use); in a
// rowid table, 25-50 ms throughout.
const eventsTable = `CREATE TABLE IF NOT EXISTS events (
	object_id TEXT NOT NULL,
	seq       INTEGER NOT NULL,
	tenant    TEXT NOT NULL,
	data      TEXT NOT NULL,
	PRIMARY KEY (object_id, seq)
);`

// sqliteMigrations upgrade a file from version i+1 to i+2.
var sqliteMigrations = []string{
	// 1 → 2: children of a parent, by kind.
	`CREATE INDEX IF NOT EXISTS objects_tenant_parent_kind ON objects (tenant, parent_id, kind, id);`,
	// 2 → 3: body hashes of idempotency keys; the clock offset.
	`ALTER TABLE idempotency ADD COLUMN body_hash TEXT NOT NULL DEFAULT '';
	CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`,
	// 3 → 4: no secondary indexes on objects; their last event numbers; the journal.
	`DROP INDEX IF EXISTS objects_due;
	DROP INDEX IF EXISTS objects_tenant_kind;
	DROP INDEX IF EXISTS objects_tenant_parent;
	DROP INDEX IF EXISTS objects_tenant_parent_kind;
	ALTER TABLE objects ADD COLUMN events INTEGER NOT NULL DEFAULT 0;
	UPDATE objects SET events = (SELECT COALESCE(MAX(seq), 0) FROM events WHERE object_id = objects.id);
	CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, data BLOB NOT NULL);`,
	// 4 → 5: when each idempotency key was recorded (0 for the keys a file holds: timeKeys
	// gives them the time of the upgrade).
	`ALTER TABLE idempotency ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
	CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_at);`,
	// 5 → 6: rows of several events; the rows a file holds are read as they are.
	`-- nothing to change`,
	// 6 → 7: the journal moves to FILE-log; the open replays what the table holds.
	`-- nothing to change`,
	// 7 → 8: the events move to a rowid table.
	`ALTER TABLE events RENAME TO events_7;
	` + eventsTable + `
	INSERT INTO events (object_id, seq, tenant, data) SELECT object_id, seq, tenant, data FROM events_7 ORDER BY object_id, seq;
	DROP TABLE events_7;`,
	// 8 → 9: the log's record (a file of version 8 has none: its log is read as before, and
	// the open records the log it starts).
	`DELETE FROM meta WHERE key = '` + logRecordKey + `';`,
	// 9 → 10: packed objects; the JSON rows a file holds are read as they are (load).
	`-- nothing to change`,
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
	data      TEXT NOT NULL, -- packed (codec.PackObject) from version 10, JSON before: a BLOB or TEXT
	events    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, data BLOB NOT NULL); -- before version 7
` + eventsTable + `
CREATE TABLE IF NOT EXISTS idempotency (
	tenant    TEXT NOT NULL,
	key       TEXT NOT NULL,
	object_id TEXT NOT NULL,
	body_hash TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL DEFAULT 0, -- Unix ns, by the simulator's clock
	PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_at);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`

// sqlitePragmas apply to every connection. synchronous=FULL syncs the WAL on each commit: a
// request is answered only once its change is in a synced commit of the journal, so an
// operation the API accepted survives a crash or power loss.
const sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"

// sqliteReadConns bounds the read pool of a file database.
const sqliteReadConns = 4

// Store is the durable store.Store: one SQLite file (modernc.org/sqlite, no cgo) in WAL mode.
// Objects are served from the in-memory table (package table); the file is written through a
// journal (journal.go): changes are appended to a log beside it (log.go), many
// requests' changes in one synced write, and checkpointed into the objects, events and
// idempotency tables in batches.
type Store struct {
	db  *sql.DB // the single writer connection
	rdb *sql.DB // readers (events, idempotency keys); db itself for ":memory:"
	// dbLock holds the lock on the database file itself (lockDatabase), nil where none.
	dbLock *os.File

	t            *table.Table // objects
	table.Reader              // the Store's reads, served from t: objects and the schedule are in memory
	// Under t.mu, what the journal holds but the tables do not yet (the checkpoint clears it):
	// idempotency keys and events.
	keys   map[[2]string]pendingKey
	events map[string][]byte // by object ID, see appendPendingEvent
	// gone holds (under t.mu) the last event number of every removed object whose history the
	// file keeps: an ID used again continues it. Loaded on open, so no commit reads the file.
	gone map[string]int64
	// broken is set (under t.mu) when the file cannot be trusted any more: the store refuses
	// everything until the writer brings the file back in line (recoverFile) or lifecyclesim
	// restarts.
	broken error

	j       journal
	flushed chan struct{} // closed when the writer goroutine ends
	log     *changeLog    // where the writer appends groups
	row     uint64        // the writer's last appended row (frame) number
	jd      journaledFrames
	cp      checkpointBatch // the writer's, reused from one checkpoint to the next
	// checkpointWait is how long journaled records wait for a checkpoint when it is quiet.
	checkpointWait time.Duration
	opts           Options
	// logRec is the database's last record of the log (logRecorded once there is one).
	logRec      logRecord
	logRecorded bool
	// logLoss reports the loss an open with Options.AcceptLogLoss accepted ("" for none).
	logLoss string
	// Counters: journal transactions, the commits they carried, checkpoints and the commits
	// they applied, and the time checkpoints took.
	groups, records, checkpoints, checkpointed atomic.Uint64
	// recoveries counts the times a broken store brought its file back in line.
	recoveries      atomic.Uint64
	checkpointNanos atomic.Int64
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.DueRounder = (*Store)(nil)
	_ store.SkipLister = (*Store)(nil)
)

// Open opens (creating if needed) the SQLite database at path and its schema, finishes
// the checkpoint of what its journal holds, and loads its objects into memory. The path
// ":memory:" gives a private in-memory database that lives until Close. A log that cannot
// be trusted (logcheck.go) is refused with a *LogDamageError.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// Options are the choices of OpenWith.
type Options struct {
	// AcceptLogLoss opens a database whose log is damaged or missing as its last checkpoint
	// left it plus the log's frames before the damage (LogLoss reports what was dropped),
	// where Open refuses it.
	AcceptLogLoss bool
	// CheckpointAfter is how long the journal waits, once quiet, before it is folded into the
	// tables (0: 500 ms). Until then a crash leaves the changes in FILE-log only.
	CheckpointAfter time.Duration
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.CheckpointAfter <= 0 {
		opts.CheckpointAfter = checkpointAfter
	}
	return openStoreWith(ctx, path, opts)
}

// LogLoss says what an open with Options.AcceptLogLoss dropped of a damaged log ("" when the
// log was intact).
func (s *Store) LogLoss() string { return s.logLoss }

// writerCacheKiB is the page cache of the writing connection: SQLite's default, 2 MiB. A
// checkpoint writes the pages of the objects changed since the last one and of their events:
// with many objects those are spread over the file, and a cache smaller than them reads each
// page again (a pread, from the system's cache) at every checkpoint. The cache lives outside
// Go's heap and grows as pages are used: at 8 MiB it filled up over a fill to 100k objects,
// 6-8 MB of RSS more, for checkpoints about a fifth cheaper (make bench-scale: an accepted
// action at 100k objects cost 1.14x what it cost at 1k either way).
const writerCacheKiB = 2 << 10

// walCheckpointPages is the WAL size, in pages, at which a commit of the writer copies the WAL
// into the file (SQLite's default is 1000 pages, 4 MiB). The copy writes each page once however
// many frames of it the WAL holds, so a larger WAL copies pages that every checkpoint changes
// (those of the objects in use, wherever the file holds them) less often: at 100k objects
// with 512 in use, 1000 pages copied each of them at every checkpoint, and a changed object
// cost 1.16x (0.99-1.36x by round) what it cost at 1k objects; 16000 pages, 0.97x
// (BenchmarkSQLiteGroupCommit). The WAL file keeps its largest size on disk, about 63 MiB
// (more when one commit crosses the mark with many pages, or readers hold the WAL when it
// would start over); memory does not grow with it.
const walCheckpointPages = 16000

// openStore opens a store whose journal waits checkpointWait, when quiet, before it
// checkpoints (tests make it wait for ever).
func openStore(ctx context.Context, path string, checkpointWait time.Duration) (*Store, error) {
	return openStoreWith(ctx, path, Options{CheckpointAfter: checkpointWait})
}

// openStoreWith is OpenWith with opts.CheckpointAfter as it is.
func openStoreWith(ctx context.Context, path string, opts Options) (*Store, error) {
	checkpointWait := opts.CheckpointAfter
	// The driver cuts the DSN at the first '?', and a "file:" name would be parsed as a URI.
	if path == "" || strings.Contains(path, "?") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: open %q: want :memory: or a plain file path", path)
	}
	// _txlock=immediate takes the write lock at BEGIN: a transaction that starts by reading
	// cannot fail later with SQLITE_BUSY when another process holds the file.
	db, err := sql.Open("sqlite", path+"?"+sqlitePragmas+"&_txlock=immediate&_pragma=cache_size("+strconv.Itoa(-writerCacheKiB)+")"+
		"&_pragma=wal_autocheckpoint("+strconv.Itoa(walCheckpointPages)+")")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	t := table.New()
	s := &Store{db: db, rdb: db, t: t, Reader: t, flushed: make(chan struct{}), checkpointWait: checkpointWait, opts: opts}
	s.clearPending()
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
	madeLog := false // this open made the log (next to a file it may refuse)
	logBase := path  // the log is logBase+logSuffix
	fail := func(err error) (*Store, error) {
		close(s.flushed) // the writer never started
		err = errors.Join(fmt.Errorf("sqlite: open %s: %w", path, err), s.Close())
		if madeLog {
			_ = os.Remove(logBase + logSuffix)
		}
		return nil, err
	}
	// The log's lock first: a file another lifecyclesim has open is neither upgraded nor read.
	var frames []logFrame
	if path == ":memory:" {
		s.log = &changeLog{}
	} else {
		if s.dbLock, err = lockDatabase(path); err != nil {
			return fail(err)
		}
		// The log goes beside the file itself, as SQLite's WAL: a symlink's name does not hide it.
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			logBase = resolved
		}
		_, statErr := os.Stat(logBase + logSuffix)
		if s.log, frames, err = openChangeLog(logBase); err != nil {
			return fail(err)
		}
		madeLog = errors.Is(statErr, fs.ErrNotExist)
	}
	if err := s.migrate(ctx); err != nil {
		return fail(err)
	}
	if err := s.replay(ctx, frames); err != nil {
		return fail(err)
	}
	if err := s.timeKeys(ctx); err != nil {
		return fail(err)
	}
	if err := s.load(ctx); err != nil {
		return fail(err)
	}
	go s.write()
	return s, nil
}

// timeKeys gives the idempotency keys the file holds without a time (created_at 0: written
// by a version before keys expired, in the table or in the journal replayed) the simulator's
// time now, the wall clock plus the file's clock offset: they are kept store.KeyRetention from the
// upgrade.
func (s *Store) timeKeys(ctx context.Context) error {
	offset, err := s.ClockOffset(ctx)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, "UPDATE idempotency SET created_at = ? WHERE created_at = 0", time.Now().Add(offset).UnixNano()); err != nil {
		return fmt.Errorf("time the idempotency keys: %w", err)
	}
	return nil
}

// load fills the table from the file (whose journal is checkpointed).
func (s *Store) load(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "SELECT id, tenant, kind, parent_id, state, version, due, data, events FROM objects")
	if err != nil {
		return fmt.Errorf("load objects: %w", err)
	}
	defer rows.Close()
	s.t.Clear()
	for rows.Next() {
		var id string
		var r table.Row
		var due sql.NullInt64
		var data []byte
		if err := rows.Scan(&id, &r.Tenant, &r.Kind, &r.Parent, &r.State, &r.Version, &due, &data, &r.Events); err != nil {
			return fmt.Errorf("load objects: %w", err)
		}
		r.Due = codec.Due{Nanos: due.Int64, Valid: due.Valid}
		packed, err := loadedData(data)
		if err != nil {
			return fmt.Errorf("load object %s: %w", id, err)
		}
		r.Data = codec.String(packed)
		s.t.Set(table.LoadedEntry(id, r))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load objects: %w", err)
	}
	return s.loadGone(ctx)
}

// loadedData is what the table holds for an object's data column (or a journal record's data):
// the packed form as it is (version 10 on; the driver gave data its own copy), or the JSON of
// an earlier version packed. A row that is neither is damage.
func loadedData(data []byte) ([]byte, error) {
	if codec.IsPacked(data) {
		if _, err := codec.UnpackObject(data, codec.Columns{}); err != nil {
			return nil, err
		}
		return data, nil
	}
	o, err := codec.DecodeObject(data)
	if err != nil {
		return nil, err
	}
	return codec.PackObject(nil, o)
}

// loadGone reads the last event numbers of removed objects.
func (s *Store) loadGone(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT object_id, MAX(seq) FROM events
		WHERE object_id NOT IN (SELECT id FROM objects) GROUP BY object_id`)
	if err != nil {
		return fmt.Errorf("load histories: %w", err)
	}
	defer rows.Close()
	s.gone = map[string]int64{}
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return fmt.Errorf("load histories: %w", err)
		}
		s.gone[id] = seq
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load histories: %w", err)
	}
	return nil
}

// migrate creates the schema of a new file, upgrades a file of an older version, and refuses
// a file written by a newer one. It runs in one transaction: a failed upgrade leaves the file
// as it was.
func (s *Store) migrate(ctx context.Context) error {
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
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
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

// sqliteErr gives a database error its context. The store's sentinel errors are returned as
// they are, as the memory store returns them.
func sqliteErr(op, id string, err error) error {
	switch {
	case err == nil, errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrVersion), errors.Is(err, store.ErrExists):
		return err
	case id == "": // the file failed, not the request: an outage
		return store.Unavailable(fmt.Errorf("sqlite: %s: %w", op, err))
	default:
		return store.Unavailable(fmt.Errorf("sqlite: %s %s: %w", op, id, err))
	}
}

// nullDue is a due time as the due column holds it: NULL when nothing is scheduled.
func nullDue(d codec.Due) sql.NullInt64 { return sql.NullInt64{Int64: d.Nanos, Valid: d.Valid} }

// ClockOffset implements store.Store.
func (s *Store) ClockOffset(ctx context.Context) (time.Duration, error) {
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

// SetClockOffset implements store.Store.
func (s *Store) SetClockOffset(ctx context.Context, d time.Duration) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('clock_offset_ns', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(int64(d), 10))
		return err
	})
	return sqliteErr("set clock offset", "", err)
}
