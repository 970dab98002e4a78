// Package store keeps lifecyclesim's objects, their events and idempotency keys behind one
// small interface, Store, whose writes are all one Commit: a transaction of compare-and-sets
// on the versions of every object it touches. It holds the interface, the types it speaks
// (Object, Batch, Filter, ...) and the optional capabilities of stores that several processes
// share (replicas.go), and imports the standard library only, so the engine links no database.
//
// The backends are packages of their own, as River keeps a driver per database:
// package memstore, for tests and throwaway runs; package sqlitestore, which adds a
// group-committed journal and checkpoints into an embedded SQLite file (modernc.org/sqlite,
// pure Go) so nothing accepted is lost across a crash; and package pgstore, which keeps nothing
// in memory (every read is a query and every Commit one PostgreSQL transaction, pgx), so
// processes can share its database. The memory and SQLite stores serve reads from the same
// ordered in-memory table (internal/table); every backend stores an object as the same JSON
// (internal/codec). Package storetest holds the contract suite every store passes; packages
// sqlitetest and pgtest open SQLite stores and start throwaway PostgreSQL clusters for tests.
// Only the binary and tests import sqlitestore and pgstore.
package store
