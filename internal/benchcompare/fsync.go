package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// fsyncResult is the latency of one durable 4 KiB write on the disk that holds the SQLite
// file: the floor under any store that syncs once per accepted operation.
type fsyncResult struct {
	Dir      string
	FS       string
	N        int
	Min, P50 time.Duration
	P99      time.Duration
}

func (r fsyncResult) String() string {
	return fmt.Sprintf("write+fdatasync of 4 KiB in %s (%s), %d times: min %s, median %s, p99 %s (%.0f syncs/s at the median)",
		r.Dir, r.FS, r.N, fmtDur(r.Min), fmtDur(r.P50), fmtDur(r.P99), 1/r.P50.Seconds())
}

// measureFsync appends 4 KiB and fdatasyncs it n times in a file in dir (removed afterwards).
func measureFsync(dir string, n int) (fsyncResult, error) {
	f, err := os.CreateTemp(dir, "fsync-*.bin")
	if err != nil {
		return fsyncResult{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i)
	}
	lat := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if _, err := f.Write(buf); err != nil {
			return fsyncResult{}, err
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return fsyncResult{}, fmt.Errorf("fdatasync: %w", err)
		}
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	abs, _ := filepath.Abs(dir)
	return fsyncResult{Dir: abs, FS: fsType(dir), N: n, Min: lat[0], P50: percentile(lat, 50), P99: percentile(lat, 99)}, nil
}

// fsType names the file system dir is on, for the few that matter to an fsync figure.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown fs"
	}
	switch uint64(st.Type) {
	case 0xEF53:
		return "ext4"
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	case 0x01021994:
		return "tmpfs: fsync is free here, the SQLite figures are not durable ones"
	case 0x794C7630:
		return "overlayfs"
	default:
		return fmt.Sprintf("fs magic %#x", uint64(st.Type))
	}
}
