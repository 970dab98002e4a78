//go:build linux || darwin || freebsd || netbsd || openbsd

package httpapi

import (
	"net"
	"syscall"
)

// sending reports whether bytes wait to be read on c: a client that has sent (part of) its
// request, which the server has not read yet (its goroutine not yet run on a busy machine).
// The pending bounds do not close such a connection. It peeks without taking the
// connection's read lock (the server's goroutine may hold it, blocked in a read).
func sending(c net.Conn) bool {
	if lc, ok := c.(*limitConn); ok {
		c = lc.Conn
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n > 0
}
