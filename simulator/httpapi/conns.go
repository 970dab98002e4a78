package httpapi

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Connections that have not sent a complete request — a client that connects and says
// nothing, or drips its headers — and keep-alive connections waiting for their next request
// hold nothing the server needs: under pressure they are closed, the longest waiting first,
// so they cannot take the slots of the requests that come. Three bounds apply:
//   - per client address, at most MaxPendingPerAddr connections may be pending (not yet a
//     complete request); a load balancer's or proxy's addresses (ProxyAddrs) are exempt, for
//     every client behind it shares them;
//   - in all, at most half of MaxConns may be pending;
//   - at MaxConns connections, a new one closes the longest waiting pending or idle one, and
//     waits to be accepted only when every connection is serving a request.
//
// A request in progress is never closed by these bounds: its own deadlines (headers within
// HeaderTimeout, a body within the API's body timeout, the answer within the request's
// deadline or a long-poll's own timeout) end it. So /healthz, /readyz and every tenant's
// requests are served under a flood of idle sockets: their connections send a request at
// once and are never the longest waiting.

// Defaults of ConnLimits.
const (
	// DefaultMaxPendingPerAddr bounds one address's connections that have not sent a
	// complete request: more than a browser or a `terraform apply -parallelism=200` opens
	// at once.
	DefaultMaxPendingPerAddr = 256
	// DefaultHeaderTimeout is how long a connection has to send a request's headers.
	DefaultHeaderTimeout = 5 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection that sends no next request.
	DefaultIdleTimeout = 30 * time.Second
	// PendingGrace is how long a new connection has to send its request before the pending
	// bounds may close it: a client that sends at once (a health probe, one of an apply's
	// many requests) is not closed for the silent ones of its address, also when a busy
	// machine runs its goroutine late.
	PendingGrace = 500 * time.Millisecond
)

// ConnLimits bound the connections of a server.
type ConnLimits struct {
	// MaxConns is the most connections open at once (DefaultMaxConns when 0).
	MaxConns int
	// MaxPendingPerAddr bounds an address's connections that have not sent a complete
	// request (DefaultMaxPendingPerAddr when 0).
	MaxPendingPerAddr int
	// HeaderTimeout and IdleTimeout bound the wait for a request's headers and for a
	// keep-alive connection's next request (DefaultHeaderTimeout, DefaultIdleTimeout when 0).
	HeaderTimeout, IdleTimeout time.Duration
	// ProxyAddrs are the addresses of load balancers and proxies in front, exempt from the
	// per-address bound.
	ProxyAddrs []netip.Prefix
	// DeferAccept is how long the kernel keeps a new connection that has sent nothing before
	// it hands it to the server, on Linux (TCP_DEFER_ACCEPT; HeaderTimeout when 0, none when
	// negative). A flood of silent sockets then waits there, not in the accept queue ahead of
	// the connections that send a request at once.
	DeferAccept time.Duration
}

// Conns enforces ConnLimits: Listener caps the connections, Server's ConnState hook follows
// each one's state.
type Conns struct {
	limits     ConnLimits
	maxPending int
	slots      chan struct{}

	mu      sync.Mutex
	byConn  map[net.Conn]*tracked
	waiting list.List // *tracked that are pending or idle, the longest waiting first
	pending int
	byAddr  map[netip.Addr]int // pending connections per address
	closed  atomic.Int64
}

// tracked is one connection's state.
type tracked struct {
	conn   net.Conn
	addr   netip.Addr
	exempt bool
	state  http.ConnState
	since  time.Time     // accepted
	elem   *list.Element // in waiting while pending or idle
}

// NewConns returns the guard of a server's connections.
func NewConns(l ConnLimits) *Conns {
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxPendingPerAddr <= 0 {
		l.MaxPendingPerAddr = DefaultMaxPendingPerAddr
	}
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultHeaderTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.DeferAccept == 0 {
		l.DeferAccept = l.HeaderTimeout
	}
	return &Conns{limits: l, maxPending: max(l.MaxConns/2, 1), slots: make(chan struct{}, l.MaxConns),
		byConn: map[net.Conn]*tracked{}, byAddr: map[netip.Addr]int{}}
}

// Closed is how many connections the bounds have closed.
func (g *Conns) Closed() int64 { return g.closed.Load() }

// Open is how many connections hold a slot of MaxConns: accepted and not closed yet by the
// server (a client's close counts once the server has read it).
func (g *Conns) Open() int { return len(g.slots) }

// Pending is how many connections the server has accepted that have not sent a complete
// request yet.
func (g *Conns) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pending
}

// Server returns the http.Server lifecyclesim serves h with: headers within HeaderTimeout, a
// keep-alive connection closed after IdleTimeout, and the hook that follows connections. A
// request's body and answer are bounded per route by the API (long-polls are not cut); there
// is no global WriteTimeout.
func (g *Conns) Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: g.limits.HeaderTimeout,
		ReadTimeout:       requestDeadline,
		IdleTimeout:       g.limits.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         g.ConnState,
	}
}

// ConnState follows a connection's state (http.Server's hook).
func (g *Conns) ConnState(c net.Conn, state http.ConnState) {
	var evict []net.Conn
	g.mu.Lock()
	t := g.byConn[c]
	switch state {
	case http.StateNew:
		t = &tracked{conn: c, addr: remoteAddr(c), since: time.Now()}
		t.exempt = g.exempt(t.addr)
		g.byConn[c] = t
		g.setWaiting(t, state)
		// Close the longest waiting pending connections past the bounds, once they have had
		// PendingGrace to send a request and have sent none (sending). Pending connections are in waiting in the order
		// they came: the first one still in its grace ends the search.
		graced := t.since.Add(-PendingGrace)
		young := func(o *tracked) bool { return o.state == http.StateNew && o.since.After(graced) }
		for !t.exempt && g.byAddr[t.addr] > g.limits.MaxPendingPerAddr {
			c := g.evictLocked(func(o *tracked) bool { return o.state == http.StateNew && o.addr == t.addr && !sending(o.conn) }, young)
			if c == nil {
				break
			}
			evict = append(evict, c)
		}
		for g.pending > g.maxPending {
			c := g.evictLocked(func(o *tracked) bool { return o.state == http.StateNew && !sending(o.conn) }, young)
			if c == nil {
				break
			}
			evict = append(evict, c)
		}
	case http.StateActive, http.StateIdle:
		if t != nil {
			g.setWaiting(t, state)
		}
	case http.StateHijacked, http.StateClosed:
		if t != nil {
			g.setWaiting(t, state)
			delete(g.byConn, c)
		}
	}
	g.mu.Unlock()
	g.close(evict)
}

// setWaiting moves t to state, in or out of the waiting list and the pending counts.
func (g *Conns) setWaiting(t *tracked, state http.ConnState) {
	if t.state == http.StateNew && t.elem != nil {
		g.pending--
		if g.byAddr[t.addr]--; g.byAddr[t.addr] <= 0 {
			delete(g.byAddr, t.addr)
		}
	}
	if t.elem != nil {
		g.waiting.Remove(t.elem)
		t.elem = nil
	}
	t.state = state
	switch state {
	case http.StateNew:
		g.pending++
		g.byAddr[t.addr]++
		t.elem = g.waiting.PushBack(t)
	case http.StateIdle:
		t.elem = g.waiting.PushBack(t)
	}
}

// evictLocked takes the longest waiting connection match selects out of the counts and
// returns it, to be closed once g.mu is released (nil when none comes before one stop selects).
func (g *Conns) evictLocked(match, stop func(*tracked) bool) net.Conn {
	for e := g.waiting.Front(); e != nil; e = e.Next() {
		t, ok := e.Value.(*tracked) // the list holds nothing else
		if !ok {
			continue
		}
		if stop != nil && stop(t) {
			return nil
		}
		if match(t) {
			g.setWaiting(t, http.StateClosed)
			return t.conn
		}
	}
	return nil
}

func (g *Conns) close(conns []net.Conn) {
	for _, c := range conns {
		if c != nil {
			g.closed.Add(1)
			_ = c.Close()
		}
	}
}

// makeRoom closes the longest waiting idle connection, or pending one that has had
// PendingGrace to send a request and has sent nothing, if any: at MaxConns. A pending
// connection in its grace may be one whose request the server has read from the socket (so
// nothing is left to peek at) and not yet parsed: closing it would drop a request the client
// sent.
func (g *Conns) makeRoom() bool {
	graced := time.Now().Add(-PendingGrace)
	g.mu.Lock()
	c := g.evictLocked(func(t *tracked) bool {
		return t.state == http.StateIdle || !t.since.After(graced) && !sending(t.conn)
	}, nil)
	g.mu.Unlock()
	g.close([]net.Conn{c})
	return c != nil
}

func (g *Conns) exempt(a netip.Addr) bool {
	for _, p := range g.limits.ProxyAddrs {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// remoteAddr is the IP address a connection comes from (the zero Addr when it has none).
func remoteAddr(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// Listener accepts at most MaxConns connections at once: at the cap, a new connection closes
// the longest waiting idle one, or pending one that has sent nothing through its grace, and
// waits only while every one serves a request (or is sending one, or is in its grace). On
// Linux the kernel hands it a connection once it has sent something (DeferAccept).
func (g *Conns) Listener(l net.Listener) net.Listener {
	deferAccept(l, g.limits.DeferAccept)
	return &connsListener{Listener: l, g: g, done: make(chan struct{})}
}

type connsListener struct {
	net.Listener
	g         *Conns
	done      chan struct{}
	closeOnce sync.Once
}

func (l *connsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		select {
		case l.g.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.g.slots }}, nil
		default:
		}
		if l.g.makeRoom() {
			continue // its Close freed a slot (or another accept took it: try again)
		}
		select {
		case l.g.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.g.slots }}, nil
		case <-time.After(10 * time.Millisecond):
			// Every connection is serving a request (or sending one): look again for one
			// that went idle.
		case <-l.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

func (l *connsListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}
