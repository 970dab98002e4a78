// Package memstore is the in-memory store.Store: for tests (package simtest serves from it),
// and for throwaway runs of lifecyclesim (-store memory). It imports package store, the
// store's internal table and codec, and the standard library: no database driver.
package memstore
