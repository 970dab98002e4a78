package sqlitestore

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

// setDirectIO turns direct I/O on or off for f (O_DIRECT: writes go to the disk, not through
// the page cache). A file system without it refuses (tmpfs before Linux 6.6, say).
func setDirectIO(f *os.File, on bool) error {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if errno != 0 {
		return errno
	}
	if on {
		flags |= syscall.O_DIRECT
	} else {
		flags &^= syscall.O_DIRECT
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETFL, flags); errno != 0 {
		return errno
	}
	return nil
}
