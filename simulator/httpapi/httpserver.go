package httpapi

import (
	"net"
	"net/http"
	"sync"
)

// DefaultMaxConns is the default cap on connections served at once: far above the long-polls
// of a 200-object apply, well below a process's usual 1,024 open files.
const DefaultMaxConns = 512

// NewHTTPServer returns the http.Server lifecyclesim serves h with, under the default
// ConnLimits (see Conns; serve it on Conns.Listener to cap the connections too).
func NewHTTPServer(h http.Handler) *http.Server { return NewConns(ConnLimits{}).Server(h) }

// limitConn releases its slot of the cap when closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
