//go:build !(linux || darwin || freebsd)

package sqlitestore

import "os"

// lockFile does nothing where flock is missing: SQLite's own locks still keep a second
// process's checkpoints out, not its appends to the log.
func lockFile(*os.File) error { return nil }

// syncData makes what was written to f durable.
func syncData(f *os.File) error { return f.Sync() }
