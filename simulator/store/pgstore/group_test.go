package pgstore_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
)

// The last transaction of a group commit flushes the WAL through the group's asynchronous
// commits before it returns: else an acknowledged commit of the group waits for the WAL
// writer, and a crash of the server (kill -9 of the postmaster) loses it. A cluster of its own,
// whose WAL writer waits 10 s between rounds, so that only the flush can have written the WAL.
func TestGroupFlushMakesAsyncCommitsDurable(t *testing.T) {
	ctx := t.Context()
	c, err := pgtest.Start(ctx, pgtest.Options{})
	if err != nil {
		pgtest.Unavailable(t, err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := c.Exec(ctx, "ALTER SYSTEM SET wal_writer_delay = '10s'"); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, c.URL("postgres"))
	if _, err := conn.Exec(ctx, "CREATE TABLE acks (n int)"); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		// One commit of a group: asynchronous (group.go's pgAsyncSQL), then the flush.
		b := &pgx.Batch{}
		b.Queue("SELECT set_config('synchronous_commit', 'off', true)")
		b.Queue("INSERT INTO acks VALUES ($1)", i)
		if err := conn.SendBatch(ctx, b).Close(); err != nil {
			t.Fatal(err)
		}
		var written string
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&written); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, pgstore.FlushSQL); err != nil {
			t.Fatal(err)
		}
		var flushed bool
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn", written).Scan(&flushed); err != nil {
			t.Fatal(err)
		}
		if !flushed {
			t.Fatalf("commit %d: after %q the WAL is not flushed through the asynchronous commit before it (at %s)", i, pgstore.FlushSQL, written)
		}
	}
}
