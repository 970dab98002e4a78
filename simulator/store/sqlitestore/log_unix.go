//go:build linux || darwin || freebsd

package sqlitestore

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, without waiting: two processes appending to one log
// would interleave their frames. The lock goes with the process. A lock held elsewhere is
// errLogInUse.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLogInUse
	}
	return err
}
