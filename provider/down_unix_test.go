//go:build unix

package provider

import (
	"fmt"
	"syscall"
	"testing"
)

// downEndpoint is the URL of a loopback port nobody listens on, for the whole test: the port
// is bound (without SO_REUSEADDR) and never listened on, so connecting is refused and no
// other process can take it meanwhile. A port picked free and released could be taken by
// another test's server on a busy machine, which would then answer in the simulator's place.
func downEndpoint(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("getsockname = %T, want an IPv4 address", sa)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", in4.Port)
}
