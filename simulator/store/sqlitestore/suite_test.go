package sqlitestore

import (
	"path/filepath"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// The SQLite store passes the exported contract suite, as every store must: on a file, and in
// memory.

func TestSQLiteStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openSQLiteT(t, filepath.Join(t.TempDir(), "lifecyclesim.db"))
	})
}

func TestSQLiteStoreMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openSQLiteT(t, ":memory:") })
}
