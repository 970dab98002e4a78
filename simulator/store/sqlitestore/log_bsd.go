//go:build darwin || freebsd

package sqlitestore

import "os"

// syncData makes what was written to f durable (on macOS with F_FULLFSYNC).
func syncData(f *os.File) error { return f.Sync() }
