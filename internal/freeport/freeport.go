// Package freeport finds a free TCP port, for the tests and tools of this module that start a
// server process on a port of their own choosing (PostgreSQL clusters, the benchmark's
// simulators). The release module keeps its own copy: it cannot import this module's
// internal packages.
package freeport

import (
	"fmt"
	"net"
)

// Loopback returns a TCP port of 127.0.0.1 that nothing listens on now (the kernel's choice).
func Loopback() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("a tcp listener's address %v is not a TCP address", ln.Addr())
	}
	return addr.Port, nil
}
