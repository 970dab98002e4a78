package reliability

import "syscall"

// mountTmpfs mounts a tmpfs of size (as mount's size= option takes it) at dir.
func mountTmpfs(dir, size string) error { return syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size) }

// unmount unmounts dir.
func unmount(dir string) error { return syscall.Unmount(dir, 0) }
