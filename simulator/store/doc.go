// Package store keeps lifecyclesim's objects, their events and idempotency keys behind one
// small interface, Store, whose writes are all one Commit: a transaction of compare-and-sets
// on the versions of every object it touches.
//
// Two stores implement it over the same ordered in-memory table (table.go): MemStore, for
// tests and throw-away runs, and SQLiteStore, which adds a group-committed journal and
// checkpoints into an embedded SQLite file (modernc.org/sqlite, pure Go) so nothing accepted
// is lost across a crash. PostgresStore keeps nothing in memory: every read is a query and
// every Commit one PostgreSQL transaction (pgx), so processes can share its database. Package
// storetest holds the contract suite every store passes; package pgtest starts throwaway
// PostgreSQL clusters for tests.
//
// This package sits at the bottom of the simulator: it imports the standard library, the
// B-tree and the database drivers, never the engine, the HTTP layer, echo or Prometheus.
package store
