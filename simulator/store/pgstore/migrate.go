package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The PostgreSQL schema is a numbered list of migrations, schema/NNNN_name.sql, each
// applied once, in order, in one transaction with the row that records it in
// schema_migrations. A released migration is never edited: a change is a new file.

//go:embed schema/*.sql
var pgSchemaFiles embed.FS

// pgMigration is one file of schema.
type pgMigration struct {
	version int
	name    string
	sql     string
}

// pgMigrationLock is the advisory lock (any 64-bit number the database's other users do
// not take) under which a store brings the schema up to date: replicas that start together
// wait for each other instead of creating the same tables at once.
const pgMigrationLock int64 = 0x6c6966656379636c // "lifecycl"

// pgMigrations lists the embedded migrations in order; their numbers must run 1, 2, 3...
func pgMigrations() ([]pgMigration, error) {
	entries, err := fs.ReadDir(pgSchemaFiles, "schema")
	if err != nil {
		return nil, err
	}
	var out []pgMigration
	for _, e := range entries { // ReadDir sorts by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", e.Name())
		}
		if v != len(out)+1 {
			return nil, fmt.Errorf("migration %s: number %d, want %d", e.Name(), v, len(out)+1)
		}
		b, err := pgSchemaFiles.ReadFile(path.Join("schema", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, pgMigration{version: v, name: strings.TrimSuffix(e.Name(), ".sql"), sql: string(b)})
	}
	return out, nil
}

// SchemaVersion is the schema version this build writes: the number of its last
// migration.
func SchemaVersion() int {
	ms, err := pgMigrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migratePostgres applies the migrations the database lacks, in one transaction under the
// advisory lock (held until it ends), and refuses a database written by a newer build.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := pgMigrations()
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	// A schema already up to date needs no lock (versions only go up): the usual start. Any
	// other (none yet, older, newer) is read again and settled under the lock.
	var v int
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err == nil && v == len(ms) {
		return nil
	}
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", pgMigrationLock); err != nil {
			return fmt.Errorf("lock the schema: %w", err)
		}
		// Read committed: each statement from here sees what a replica that held the lock
		// before committed.
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("schema version table: %w", err)
		}
		var v int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if v > len(ms) {
			return fmt.Errorf("schema version %d is newer than this build's %d (a newer lifecyclesim wrote it)", v, len(ms))
		}
		for _, m := range ms[v:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate schema to %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return fmt.Errorf("record schema %s: %w", m.name, err)
			}
		}
		return nil
	})
}
