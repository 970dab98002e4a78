package store

import (
	"os"
	"syscall"
)

// syncData makes what was written to f durable. fdatasync skips the inode's times, which
// fsync writes too (a journal commit of the file system more): the log is written over in
// place, so its size and blocks do not change with a frame.
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
