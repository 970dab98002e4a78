package httpapi

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxConns is the default cap on connections served at once: far above the long-polls
// of a 200-object apply, well below a process's usual 1,024 open files.
const DefaultMaxConns = 512

// NewHTTPServer returns the http.Server lifecyclesim serves h with. Headers must arrive within
// 10 s and a body within the request's deadline (set per route by the API, so long-polls are
// not cut); an idle keep-alive connection is closed after a minute. There is no global
// WriteTimeout: the API sets one per request.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       requestDeadline,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// LimitListener accepts at most n connections at once; the next waits until one closes.
func LimitListener(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

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
