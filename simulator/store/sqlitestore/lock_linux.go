//go:build linux

package sqlitestore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDatabase takes an exclusive lock on the database file itself, without waiting, and
// returns the file holding it (closing it releases the lock). The lock belongs to the file,
// not to a name: a second lifecyclesim reaching the same file through a symlink, a hard link
// or another spelling of its path is refused, where the log's lock (beside the name it was
// given) would not see it. On Linux flock and the fcntl locks SQLite takes on the same file
// never interact, so SQLite's own locking is untouched.
func lockDatabase(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		err = fmt.Errorf("%s is in use by another lifecyclesim (perhaps through another path to the same file: a symlink or a hard link): stop it, or give this one another --db", path)
	} else if err != nil {
		err = fmt.Errorf("lock %s: %w", path, err)
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}
