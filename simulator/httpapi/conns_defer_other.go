//go:build !linux

package httpapi

import (
	"net"
	"time"
)

// deferAccept has no TCP_DEFER_ACCEPT to set here: silent connections are accepted at once,
// and the bounds alone keep them from the slots.
func deferAccept(net.Listener, time.Duration) {}
