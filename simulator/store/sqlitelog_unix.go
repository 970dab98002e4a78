//go:build linux || darwin || freebsd

package store

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, without waiting: two processes appending to one log
// would interleave their frames. The lock goes with the process.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
