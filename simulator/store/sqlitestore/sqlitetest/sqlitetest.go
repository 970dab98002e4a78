// Package sqlitetest opens SQLite stores for tests, closed when the test ends, as package pgtest
// starts PostgreSQL clusters. It is for tests only: package simtest and the engine never import
// it.
package sqlitetest

import (
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
)

// Open opens a SQLite store at path (":memory:" for one in memory), closed when the test ends
// (closing it first is fine).
func Open(t testing.TB, path string) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("sqlitestore.Open(%q) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return s
}
