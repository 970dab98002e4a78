//go:build !linux

package sqlitestore

import (
	"errors"
	"os"
)

// setDirectIO: the log goes through the page cache here.
func setDirectIO(*os.File, bool) error { return errors.New("no direct I/O") }
