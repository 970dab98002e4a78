package store_test

import (
	"path/filepath"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// Both stores pass the exported contract suite, as any future store must.

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return store.NewMemStore() })
}

func TestSQLiteStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return storetest.OpenSQLite(t, filepath.Join(t.TempDir(), "lifecyclesim.db"))
	})
}

func TestSQLiteStoreMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t, ":memory:") })
}
