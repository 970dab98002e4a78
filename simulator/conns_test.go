package simulator

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// dialIdle opens n connections to the server at base that send nothing; they are closed when
// the test ends.
func dialIdle(t *testing.T, base string, n int) []net.Conn {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return conns
}

// TestIdleFloodKeepsServing: with the server's connections all taken by sockets that send
// nothing (from the same address as the probes), /healthz, /readyz and a tenant's requests are
// still answered: the longest waiting idle sockets are closed for them.
func TestIdleFloodKeepsServing(t *testing.T) {
	const maxConns = 64
	sim := simtest.Start(t, simtest.WithHTTPServer(maxConns), simtest.WithTokens(map[string]string{"tok": "acme"}))
	dialIdle(t, sim.URL, 4*maxConns)
	// A guard against a hang only: the server answers at once, or after its header timeout
	// (seconds) closes the idle sockets.
	hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer hc.CloseIdleConnections()
	answered := 0
	const tries = 20
	for i := range tries {
		path := []string{"/healthz", "/readyz", "/v1/accounts"}[i%3]
		req, _ := http.NewRequest(http.MethodGet, sim.URL+path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		res, err := hc.Do(req)
		if err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			answered++
		}
	}
	if answered != tries {
		t.Errorf("%d of %d requests answered under %d idle sockets, want all", answered, tries, 4*maxConns)
	}
}

// TestSlowClientsAreCut: a connection that drips its headers, one that drips its body and an
// idle keep-alive connection are closed at their timeouts, not held for the request deadline
// or a minute.
func TestSlowClientsAreCut(t *testing.T) {
	const short = 200 * time.Millisecond
	sim := simtest.Start(t, simtest.WithConnLimits(httpapi.ConnLimits{HeaderTimeout: short, IdleTimeout: short}),
		simtest.WithServerOptions(func(o *httpapi.ServerOptions) { o.BodyTimeout = short }))
	tests := []struct {
		name, send string
		answer     bool // a complete answer comes first
	}{
		{"headers never finished", "GET /healthz HTTP/1.1\r\nHost: sim\r\n", false},
		{"body never finished", "POST /v1/accounts HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{", true},
		{"keep-alive idle", "GET /healthz HTTP/1.1\r\nHost: sim\r\n\r\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialIdle(t, sim.URL, 1)[0]
			// A guard against a hang only, far above the timeouts.
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write([]byte(tt.send)); err != nil {
				t.Fatal(err)
			}
			rd := bufio.NewReader(c)
			if tt.answer {
				res, err := http.ReadResponse(rd, nil)
				if err != nil {
					t.Fatalf("answer: %v", err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			if _, err := rd.ReadByte(); err != io.EOF && !strings.Contains(errString(err), "connection reset") {
				t.Errorf("after the timeout: %v, want the connection closed (EOF)", err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestPendingBoundPerAddress: past its bound, an address's longest waiting connections that
// have sent nothing are closed; a proxy's address is exempt. On Linux the kernel holds silent
// connections back (DeferAccept) and the server never sees them; the other cases turn that
// off to check the bounds themselves (as they work elsewhere, or once the kernel lets go).
func TestPendingBoundPerAddress(t *testing.T) {
	tests := []struct {
		name        string
		proxies     []netip.Prefix
		deferAccept time.Duration
		wantClosed  int64
	}{
		{"client address", nil, -1, 7}, // of the 10 and the probe's: 11 - 4, the probe in its grace
		{"proxy address", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, -1, 0},
		{"held by the kernel", nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.deferAccept >= 0 && runtime.GOOS != "linux" {
				t.Skip("the kernel holds silent connections back on Linux only (TCP_DEFER_ACCEPT)")
			}
			sim := simtest.Start(t, simtest.WithConnLimits(httpapi.ConnLimits{MaxPendingPerAddr: 4, ProxyAddrs: tt.proxies, DeferAccept: tt.deferAccept}))
			dialIdle(t, sim.URL, 10)
			// A connection's grace runs from when the server accepted it, which a loaded
			// machine can run well after the dial returned: wait for the accepts first
			// (unless the kernel holds the 10 back), then wait the grace out (these never
			// send a request). The probe's arrival applies the bound.
			if tt.deferAccept < 0 {
				simtest.Eventually(t, 30*time.Second, "the server accepted the 10 silent connections", func() bool { return sim.Conns.Pending() == 10 })
			}
			time.Sleep(httpapi.PendingGrace)
			res, err := http.Get(sim.URL + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if got := sim.Conns.Closed(); got != tt.wantClosed {
				t.Errorf("closed %d of 10 silent connections (and a probe's) with a bound of 4, want %d", got, tt.wantClosed)
			}
		})
	}
}
