package httpapi

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Requests that hold a connection for long — long-polls (?wait=static) and the dashboard's
// event streams — are limited per tenant, and all of them together leave part of the
// server's connections free, so one tenant cannot take the connections every other tenant,
// and /healthz, need. A tenant at its limit gets 429 with Retry-After at once (its waiters
// fall back to polling), never a stalled server.
const (
	// DefaultMaxWaitsPerTenant bounds a tenant's open long-polls: above the 200 of one
	// `terraform apply -parallelism=200`, so that runs at full speed.
	DefaultMaxWaitsPerTenant = 256
	// DefaultMaxStreamsPerTenant bounds a tenant's open dashboard event streams (a browser
	// tab holds one).
	DefaultMaxStreamsPerTenant = 16
	// DefaultStreamLifetime ends a dashboard event stream after this long; the browser
	// reconnects at once and resumes from its last event.
	DefaultStreamLifetime = 10 * time.Minute
	// ReservedConns is how many of the server's connections held requests never take: they
	// stay for short requests (other tenants' reads and writes, health probes).
	ReservedConns = 64
)

// holds counts the held requests per tenant, by sort (long-polls, streams), and in all.
type holds struct {
	mu       sync.Mutex
	byTenant map[[2]string]int
	total    int
	perSort  map[string]int // the per-tenant limit of each sort
	maxTotal int
}

const (
	holdWait   = "long-polls"
	holdStream = "dashboard streams"
)

func newHolds(maxWaits, maxStreams, maxConns int) *holds {
	return &holds{byTenant: map[[2]string]int{}, perSort: map[string]int{holdWait: maxWaits, holdStream: maxStreams},
		maxTotal: max(maxConns-ReservedConns, 1)}
}

// acquire takes a slot for a tenant's held request, or says why not (a 429 to answer).
func (h *holds) acquire(sort, tenant string) (release func(), err *wire.Error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := [2]string{sort, tenant}
	if n, limit := h.byTenant[k], h.perSort[sort]; n >= limit {
		return nil, &wire.Error{Code: wire.CodeRateLimited, RetryAfter: time.Second,
			Message: fmt.Sprintf("the tenant holds %d open %s, its limit: retry after one ends (or poll without wait)", n, sort),
			Details: map[string]string{"limit": sort, "max": fmt.Sprint(limit), "held": fmt.Sprint(n)}}
	}
	if h.total >= h.maxTotal {
		return nil, &wire.Error{Code: wire.CodeRateLimited, RetryAfter: time.Second,
			Message: fmt.Sprintf("the server holds %d long-polls and streams, all it keeps for them: retry shortly (or poll without wait)", h.total),
			Details: map[string]string{"limit": "held requests", "max": fmt.Sprint(h.maxTotal), "held": fmt.Sprint(h.total)}}
	}
	h.byTenant[k]++
	h.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.byTenant[k]--; h.byTenant[k] == 0 {
				delete(h.byTenant, k)
			}
			h.total--
		})
	}, nil
}

// tenants lists the tenants the server serves: those of its tokens, or the one open tenant.
func (s *Server) tenants() []string {
	if len(s.tokens) == 0 {
		return []string{""}
	}
	set := map[string]bool{}
	for _, t := range s.tokens {
		set[t] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// snapshot returns the held requests by sort and tenant, and the per-tenant limit of each sort.
func (h *holds) snapshot() (held map[[2]string]int, limits map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.byTenant), maps.Clone(h.perSort)
}

// limitWaits takes a tenant's long-poll slot for a request with ?wait= (before the handler
// does anything: a refused create is not made), 429 at the limit.
func (s *Server) limitWaits(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.QueryParam("wait") == "" {
			return next(c)
		}
		release, err := s.holds.acquire(holdWait, tenant(c))
		if err != nil {
			// The connection is closed after the answer: a client's idle connections must
			// not take the server's connections in its place.
			c.Response().Header().Set("Connection", "close")
			return err
		}
		defer release()
		return next(c)
	}
}
