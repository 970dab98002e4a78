//go:build !unix

package provider

import (
	"net"
	"testing"
)

// downEndpoint is the URL of a loopback port nobody listens on: picked free and released
// (where a port cannot be held without listening on it).
func downEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}
