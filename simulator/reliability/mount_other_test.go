//go:build !linux

package reliability

import "errors"

// mountTmpfs cannot mount here.
func mountTmpfs(string, string) error { return errors.New("the suite mounts a tmpfs on Linux only") }

// unmount has nothing to unmount.
func unmount(string) error { return nil }
