package httpapi

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// maxRequestIDLen bounds a client's request ID: longer ones are replaced by one the server
// makes, as are IDs with other bytes than requestIDByte allows.
const maxRequestIDLen = 128

// requestIDKey is where a request's ID is kept in its echo.Context.
const requestIDKey = "lifecyclesim.request_id"

// withRequestID gives every request an ID, answered in wire.HeaderRequestID and written in its
// log line and in a server error's body: the client's own when it sent a valid one (so a
// caller can follow one request through a proxy and the simulator), else a new random one.
func withRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(wire.HeaderRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Set(requestIDKey, id)
		c.Response().Header().Set(wire.HeaderRequestID, id)
		return next(c)
	}
}

// requestID returns the request's ID ("" outside withRequestID).
func requestID(c echo.Context) string {
	id, _ := c.Get(requestIDKey).(string)
	return id
}

// validRequestID accepts 1 to maxRequestIDLen letters, digits and "-._:" (what proxies and
// tracing headers use), nothing that could break a log line or a header.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := range len(id) {
		if !requestIDByte(id[i]) {
			return false
		}
	}
	return true
}

func requestIDByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '.' || b == '_' || b == ':'
}

// newRequestID is 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
