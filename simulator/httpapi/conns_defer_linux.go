//go:build linux

package httpapi

import (
	"math"
	"net"
	"syscall"
	"time"
)

// deferAccept asks the kernel to hand l's new connections to the server only once they have
// sent something, or after d (TCP_DEFER_ACCEPT): a socket that connects and says nothing waits
// in the kernel, not in the server's accept queue ahead of a health probe, and takes no slot,
// goroutine or buffer meanwhile. A silent one is accepted after d, and the bounds take it from
// there. Best effort: a listener that is not TCP, or a kernel that refuses, goes on without it.
func deferAccept(l net.Listener, d time.Duration) {
	tl, ok := l.(*net.TCPListener)
	if !ok || d <= 0 {
		return
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, int(math.Ceil(d.Seconds())))
	})
}
