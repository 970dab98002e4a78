package freeport

import (
	"net"
	"strconv"
	"testing"
)

// The port is free: a listener can take it.
func TestLoopback(t *testing.T) {
	port, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("Loopback() = %d, want a TCP port", port)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("listening on the free port %d: %v", port, err)
	}
	ln.Close()
}
