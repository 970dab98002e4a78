package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// Store is a store.Store over a PostgreSQL database (15 or later), through pgx. Unlike the
// memory and SQLite stores it answers no read from memory: every read is a query and every
// Commit one transaction (commit.go), so several processes can share one database. What it
// holds is for deciding (the decision cache, cache.go) and for its worker (the due work it
// lands, claim.go).
//
// The schema (schema/*.sql) is created and upgraded when the store opens, under an
// advisory lock (migrate.go). Objects are rows whose looked-up fields are columns (ID,
// tenant, kind, parent, state, version, the spec's string fields for links, the due time and
// the replica that lands it) beside the object's packed form (codec.PackObject: the rest of
// it); events, idempotency keys, per-tenant object counts, the replicas' leases and the clock
// offset have tables of their own.
type Store struct {
	pool *pgxpool.Pool
	// work is the worker's own few connections (landings, leases, sweeps), so
	// that requests holding every connection of pool never hold up the landings they wait
	// for.
	work *pgxpool.Pool
	// group is the requests' commits waiting to be sent together (group.go); groups counts
	// the round trips that sent them, merged the commits sent as parts of a merged write
	// (merge.go).
	group  pgGroup
	groups atomic.Int64
	merged atomic.Int64
	// notes are the changes committed here that other replicas are yet to hear of
	// (notify.go); notifyErrors counts the batches of them that could not be sent.
	notes        *pgNotifier
	notifyErrors atomic.Int64
	// cache is what this process last committed or read of each object, for decisions
	// (cache.go).
	cache pgCache
	// owned is the due work this replica lands (claim.go).
	owned     pgOwned
	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// pgMaxConns is the pool size when the URL does not set pool_max_conns: 4, or twice the CPUs
// the process may use. The requests' commits that wait for a connection go together in one
// round trip (group.go), so a few connections carry many requests; more backends than cores
// only take turns on them, and one preempted holding a spinlock (the WAL's insert position)
// makes the others sleep (on one shared core, with 16 connections the worker's landings fell
// behind and clients met thousands of 409s a second; with 4, none).
func pgMaxConns() int32 { return int32(max(4, 2*runtime.GOMAXPROCS(0))) }

// pgWorkConns is the size of the worker's pool (Store.work): its landings commit one batch at
// a time.
const pgWorkConns = 2

// Open connects to the PostgreSQL database at url (a postgres:// URL or a key=value
// connection string, as libpq takes; pool_max_conns sets the pool size) and brings its
// schema up to date. Several processes may open the same database at once.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = pgMaxConns()
	}
	// A commit is an implicit transaction (commit.go): its isolation is the session's
	// default, whatever the server's.
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	// Every statement is prepared once per connection and finds its rows by key: planning it
	// again for each call's values (the custom plans PostgreSQL tries first, and keeps for
	// the merged write: merge.go) costs more than running it, and compiling one (JIT, which a
	// plan's cost turns on: see enable_seqscan below) costs 80–200 ms of CPU each call.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	cfg.ConnConfig.RuntimeParams["jit"] = "off"
	// So no sequential scans where an index serves: a connection keeps the generic plan of
	// each prepared statement, made from the statistics it saw, and a plan made while a table
	// looked small scans it whole (a landing's delete of its schedule row, schema 6, read 150
	// pages where its index reads 3, in some runs of make bench-replicas and not others; the
	// merged write, on a table of one row, scanned it in its loop over the objects it locks).
	// A statement no index serves still scans; the sweep (claim.go) turns them on for its
	// own transaction.
	cfg.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	workCfg := cfg.Copy()
	workCfg.MaxConns, workCfg.MinConns = pgWorkConns, 0
	// Nothing the worker commits waits for its WAL record to be flushed (a landing, a lease:
	// see Commit and ClaimDue): its sessions say so once, not in a statement per transaction.
	workCfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	work, err := pgxpool.NewWithConfig(ctx, workCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool, work: work, notes: newPGNotifier()}
	if err := migratePostgres(ctx, pool); err != nil {
		pool.Close()
		work.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	// The lease holds until the worker's first claim renews it: the due work this replica's
	// commits start meanwhile is not taken over by the others.
	if _, err := s.renewLease(ctx, pgLeaseTTL); err != nil {
		pool.Close()
		work.Close()
		return nil, fmt.Errorf("postgres: lease: %w", err)
	}
	go s.publish()
	return s, nil
}

// String names the store for logs: its database and server, never the password.
func (s *Store) String() string {
	c := s.pool.Config().ConnConfig
	return fmt.Sprintf("postgres %s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// pgErr gives a database error its context. The store.Store's sentinel errors and quota errors are
// returned as they are, as the other stores return them.
func pgErr(op string, err error) error {
	var qe *store.QuotaError
	switch {
	case err == nil, errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrVersion), errors.Is(err, store.ErrExists),
		errors.Is(err, store.ErrInvalidBatch), errors.As(err, &qe):
		return err
	default: // the database failed, not the request: an outage
		return store.Unavailable(fmt.Errorf("postgres: %s: %w", op, err))
	}
}

// pgRowColumns are the columns a read of an object selects: those its packed form leaves out
// (codec.Columns), then its data. From schema version 7 data is the object's packed form; a
// row an earlier build wrote holds its JSON, read as it is until the object is written again.
const pgRowColumns = "id, tenant, kind, parent_id, state, version, data"

// pgRow is an object's row as read: its columns and its data, in either form.
type pgRow struct {
	cols codec.Columns
	data []byte
}

// pgRowColumnsOf is pgRowColumns of the table named alias in a statement.
func pgRowColumnsOf(alias string) string {
	return alias + "." + strings.ReplaceAll(pgRowColumns, ", ", ", "+alias+".")
}

// dest is where a row of pgRowColumns scans into r, in their order.
func (r *pgRow) dest() []any {
	c := &r.cols
	return []any{&c.ID, &c.Tenant, &c.Kind, &c.ParentID, &c.State, &c.Version, &r.data}
}

// scanRow scans a row of pgRowColumns.
func scanRow(row pgx.CollectableRow) (pgRow, error) {
	var r pgRow
	err := row.Scan(r.dest()...)
	return r, err
}

// object decodes the row's object.
func (r pgRow) object() (*store.Object, error) {
	o, err := codec.DecodeStored(r.data, r.cols)
	if err != nil {
		return nil, fmt.Errorf("postgres: decode %s: %w", r.cols.ID, err)
	}
	return o, nil
}

// decodeRows decodes rows' objects.
func decodeRows(rows []pgRow) ([]*store.Object, error) {
	out := make([]*store.Object, len(rows))
	for i, r := range rows {
		o, err := r.object()
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+pgRowColumns+" FROM objects WHERE id = $1 AND tenant = $2", id, tenant)
	if err != nil {
		return nil, pgErr("get "+id, err)
	}
	r, err := pgx.CollectExactlyOneRow(rows, scanRow)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, pgErr("get "+id, err)
	}
	return r.object()
}

var _ store.LineageGetter = (*Store)(nil)

// GetLineage implements store.LineageGetter in one statement: the object, then its ancestors
// by a recursive walk up the parent IDs, within the tenant.
func (s *Store) GetLineage(ctx context.Context, tenant, id string, depth int) ([]*store.Object, error) {
	since := s.cache.mark()
	rows, err := s.pool.Query(ctx, `WITH RECURSIVE up (`+pgRowColumns+`, depth) AS (
			SELECT `+pgRowColumns+`, 0 FROM objects WHERE id = $1 AND tenant = $2
			UNION ALL
			SELECT `+pgRowColumnsOf("o")+`, up.depth + 1
			FROM up JOIN objects o ON o.id = up.parent_id AND o.tenant = $2
			WHERE up.parent_id <> '' AND up.depth < $3
		) SELECT `+pgRowColumns+` FROM up ORDER BY depth`, id, tenant, depth)
	if err != nil {
		return nil, pgErr("get "+id, err)
	}
	got, err := pgx.CollectRows(rows, scanRow)
	if err != nil {
		return nil, pgErr("get "+id, err)
	}
	if len(got) == 0 {
		return nil, store.ErrNotFound
	}
	objs, err := decodeRows(got)
	if err != nil {
		return nil, err
	}
	for _, r := range got {
		s.cache.put(r.cols, r.data, since)
	}
	return objs, nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context, tenant string, f store.Filter) ([]*store.Object, error) {
	where, args, err := filterSQL(tenant, f, nil)
	if err != nil {
		return nil, pgErr("list", err)
	}
	if f.After != "" {
		args = append(args, f.After)
		where += " AND id > $" + strconv.Itoa(len(args))
	}
	sql := "SELECT " + pgRowColumns + " FROM objects WHERE " + where + " ORDER BY id"
	if f.Limit > 0 {
		sql += " LIMIT " + strconv.Itoa(f.Limit)
	}
	// Planned for its values each time (an unnamed statement): a plan made once for any
	// values cannot know that a state is rare, and would walk the tenant's objects by ID.
	rows, err := s.pool.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
	if err != nil {
		return nil, pgErr("list", err)
	}
	got, err := pgx.CollectRows(rows, scanRow)
	if err != nil {
		return nil, pgErr("list", err)
	}
	return decodeRows(got)
}

// filterSQL is the WHERE clause (and its arguments) that selects a tenant's objects by f's
// kind, parent, state and link; not After or Limit. Objects whose IDs are in except are left
// out.
func filterSQL(tenant string, f store.Filter, except []string) (string, []any, error) {
	args := []any{tenant}
	where := []string{"tenant = $1"}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if f.Kind != "" {
		add("kind = $?", f.Kind)
	}
	if f.ParentID != "" {
		// The literal condition lets a generic plan use the partial index on parents.
		add("parent_id = $? AND parent_id <> ''", f.ParentID)
	}
	if f.State != "" {
		add("state = $?", f.State)
	}
	if f.Link[0] != "" {
		l, err := json.Marshal(map[string]string{escapeLink(f.Link[0]): escapeLink(f.Link[1])})
		if err != nil {
			return "", nil, err
		}
		add("links @> $?::jsonb", string(l))
	}
	if len(except) > 0 {
		add("NOT (id = ANY ($?))", except)
	}
	return strings.Join(where, " AND "), args, nil
}

// linkEscaper stuffs the bytes a jsonb string cannot hold (NUL) so that two values are equal
// in the links column exactly when they are equal in Go: \x01 becomes \x01\x01, \x00 \x01\x02.
var linkEscaper = strings.NewReplacer("\x01", "\x01\x01", "\x00", "\x01\x02")

func escapeLink(s string) string {
	if !strings.ContainsAny(s, "\x00\x01") {
		return s
	}
	return linkEscaper.Replace(s)
}

// linksColumn is the links column of an object: its spec's string fields, which store.Filter.Link
// selects on (a filter on a field that is not a string matches nothing, as in the table).
func linksColumn(spec map[string]any) (string, error) {
	links := make(map[string]string, len(spec))
	for k, v := range spec {
		if s, ok := v.(string); ok {
			links[escapeLink(k)] = escapeLink(s)
		}
	}
	b, err := json.Marshal(links)
	return string(b), err
}

// Events implements store.Store.
func (s *Store) Events(ctx context.Context, tenant, id string) ([]store.Event, error) {
	rows, err := s.pool.Query(ctx, "SELECT seq, data FROM events WHERE object_id = $1 AND tenant = $2 ORDER BY seq", id, tenant)
	if err != nil {
		return nil, pgErr("events of "+id, err)
	}
	var out []store.Event
	var seq int64
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&seq, &data}, func() error {
		var e store.Event
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		e.ObjectID, e.Tenant, e.Seq = id, tenant, seq
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, pgErr("events of "+id, err)
	}
	if len(out) == 0 {
		return nil, store.ErrNotFound
	}
	return out, nil
}

// Due implements store.Store: every replica's due objects (schema 8: a scan of the objects
// table, whose due times are in no index; only the metrics and a clock advance ask, not the
// worker).
func (s *Store) Due(ctx context.Context, now time.Time) ([]store.Scheduled, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, tenant, kind FROM objects WHERE due <= $1 ORDER BY due, id",
		codec.DueOf(now).Nanos)
	if err != nil {
		return nil, pgErr("due", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Scheduled, error) {
		var d store.Scheduled
		err := row.Scan(&d.ID, &d.Tenant, &d.Kind)
		return d, err
	})
	if err != nil {
		return nil, pgErr("due", err)
	}
	return out, nil
}

// NextDue implements store.Store: the earliest due time of the objects this replica lands
// (its one caller is its worker).
func (s *Store) NextDue(context.Context) (time.Time, bool, error) {
	due, ok := s.owned.next()
	if !ok {
		return time.Time{}, false, nil
	}
	return time.Unix(0, due).UTC(), true, nil
}

// Idempotent implements store.Store.
func (s *Store) Idempotent(ctx context.Context, tenant, key string) (string, string, bool, error) {
	var id, hash string
	err := s.pool.QueryRow(ctx, "SELECT object_id, body_hash FROM idempotency WHERE tenant = $1 AND key = $2",
		tenant, []byte(key)).Scan(&id, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, pgErr("idempotency key", err)
	}
	return id, hash, true, nil
}

// CountObjects implements store.Store: the tenant's count row, which commits keep exact.
func (s *Store) CountObjects(ctx context.Context, tenant string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, "SELECT objects FROM tenants WHERE tenant = $1", tenant).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, pgErr("count objects", err)
	}
	return n, nil
}

// Counts implements store.Store.
func (s *Store) Counts(ctx context.Context) (map[[2]string]int, error) {
	rows, err := s.pool.Query(ctx, "SELECT kind, state, count(*) FROM objects GROUP BY kind, state")
	if err != nil {
		return nil, pgErr("counts", err)
	}
	out := map[[2]string]int{}
	var kind, state string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&kind, &state, &n}, func() error {
		out[[2]string{kind, state}] = n
		return nil
	}); err != nil {
		return nil, pgErr("counts", err)
	}
	return out, nil
}

// clockOffsetKey is the settings row of the clock offset (nanoseconds).
const clockOffsetKey = "clock_offset_ns"

// ClockOffset implements store.Store.
func (s *Store) ClockOffset(ctx context.Context) (time.Duration, error) {
	var v string
	err := s.pool.QueryRow(ctx, "SELECT value FROM settings WHERE key = $1", clockOffsetKey).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, pgErr("clock offset", err)
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("postgres: clock offset %q: %w", v, err)
	}
	return time.Duration(ns), nil
}

// SetClockOffset implements store.Store.
func (s *Store) SetClockOffset(ctx context.Context, d time.Duration) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, clockOffsetKey, strconv.FormatInt(int64(d), 10))
	if err == nil {
		s.notes.add(nil, pgFlags{Clock: true})
	}
	return pgErr("set clock offset", err)
}

// Reset implements store.Store. The clock is not an object: a reset keeps it.
func (s *Store) Reset(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "TRUNCATE objects, events, idempotency, tenants")
	s.cache.clear()
	s.owned.clear()
	if err == nil {
		s.notes.add(nil, pgFlags{Lost: true})
	}
	return pgErr("reset", err)
}

// Ping implements store.Store: the database answers within ctx and takes writes (it is not a
// standby, nor read-only).
func (s *Store) Ping(ctx context.Context) error {
	var writable bool
	err := s.pool.QueryRow(ctx, "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'").Scan(&writable)
	if err != nil {
		return pgErr("ping", err)
	}
	if !writable {
		return errors.New("postgres: ping: the database is read-only (a standby, or default_transaction_read_only)")
	}
	return nil
}

// Close implements store.Store: it sends the last notifications, gives up its lease (the
// other replicas take over the phases it started at their next claim, not once it would have
// lapsed) and closes the connections.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.notes.stop)
		<-s.notes.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = s.work.Exec(ctx, "UPDATE replicas SET until = '-infinity' WHERE name = $1", s.notes.from)
		cancel()
		s.pool.Close()
		s.work.Close()
	})
	return nil
}

// pgCode returns the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
