//go:build !linux

package sqlitestore

import "os"

// lockDatabase locks nothing beyond the log's lock where flock and SQLite's fcntl locks on one
// file may interact (the BSDs, macOS) or flock is missing: a second path to the same file
// (a symlink, a hard link) is not refused there.
func lockDatabase(string) (*os.File, error) { return nil, nil }
