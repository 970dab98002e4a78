package dashboard_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dashboard"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// Issue 32: the session cookie is Secure when the browser came over TLS, which behind a
// TLS-terminating proxy only the proxy's X-Forwarded-Proto says: trusted only when configured.
func TestCookieSecureBehindProxy(t *testing.T) {
	for _, tt := range []struct {
		name       string
		trust      bool
		proto      string
		wantSecure bool
	}{
		{"no proxy", false, "", false},
		{"a header nobody vouches for", false, "https", false},
		{"a trusted TLS proxy", true, "https", true},
		{"a trusted proxy over plain HTTP", true, "http", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := simtest.Start(t, simtest.WithTokens(map[string]string{"tok": "acme"}),
				simtest.WithServerOptions(func(o *httpapi.ServerOptions) { o.TrustProxy = tt.trust }))
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/ui/session", strings.NewReader(`{"token":"tok"}`))
			if tt.proto != "" {
				req.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			cs := res.Cookies()
			if len(cs) != 1 || cs[0].Secure != tt.wantSecure || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
				t.Errorf("cookies = %+v, want one HttpOnly SameSite=Strict cookie with Secure %v", cs, tt.wantSecure)
			}
		})
	}
}

// Issue 32: the admin token signs in to the dashboard; its session reaches the simulator-wide
// controls and no tenant's objects.
func TestAdminSignsIn(t *testing.T) {
	s := simtest.Start(t, simtest.WithTokens(map[string]string{"tok": "acme"}), simtest.WithAdminToken("root"))
	if _, err := s.Client.Create(t.Context(), "accounts", clientCreate("acme")); err != nil {
		t.Fatal(err)
	}
	hc := browserClient(t)
	sess := signIn(t, hc, s.URL, "root")
	if sess.Tenant != "admin" {
		t.Errorf("admin session's tenant = %q, want admin", sess.Tenant)
	}
	if status, body := send(t, hc, http.MethodGet, s.URL+"/ui/snapshot", "", nil); status != http.StatusOK || strings.Contains(body, "acme") {
		t.Errorf("admin snapshot = %d %s, want no tenant's objects", status, body)
	}
	status, body := send(t, hc, http.MethodPost, s.URL+"/ui/api/v1/sim/clock", `{"advance":"1h"}`, map[string]string{"X-CSRF-Token": sess.CSRF})
	if status != http.StatusOK {
		t.Errorf("admin clock advance from the dashboard = %d %s", status, body)
	}
	for _, p := range []string{"/ui/api/v1/kinds", "/ui/api/v1/sim/clock", "/ui/api/v1/sim/config"} {
		if status, body := send(t, hc, http.MethodGet, s.URL+p, "", nil); status != http.StatusOK {
			t.Errorf("admin GET %s = %d %s", p, status, body)
		}
	}
	if status, _ := send(t, hc, http.MethodGet, s.URL+"/ui/api/v1/accounts", "", nil); status != http.StatusForbidden {
		t.Errorf("admin GET of a tenant's objects = %d, want 403", status)
	}
}

// Issue 32: a tenant's event streams are limited (429 past the limit, other tenants still
// served) and end after their lifetime (the browser resumes).
func TestStreamLimitAndLifetime(t *testing.T) {
	s := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "acme", "tok-b": "globex"}),
		simtest.WithServerOptions(func(o *httpapi.ServerOptions) {
			o.MaxStreamsPerTenant, o.StreamLifetime = 2, time.Hour
		}))
	a := browserClient(t)
	a.Timeout = 0
	signIn(t, a, s.URL, "tok-a")
	var open []*http.Response
	for range 2 {
		res, err := a.Get(s.URL + "/ui/stream?after=0")
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("stream under the limit: %v %v", res, err)
		}
		open = append(open, res)
	}
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	if status, body := send(t, a, http.MethodGet, s.URL+"/ui/stream?after=0", "", nil); status != http.StatusTooManyRequests || !strings.Contains(body, "rate_limited") {
		t.Errorf("stream past the limit = %d %s, want 429", status, body)
	}
	b := browserClient(t)
	b.Timeout = 0
	signIn(t, b, s.URL, "tok-b")
	res, err := b.Get(s.URL + "/ui/stream?after=0")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("another tenant's stream: %v %v", res, err)
	}
	res.Body.Close()

	short := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "acme"}),
		simtest.WithServerOptions(func(o *httpapi.ServerOptions) { o.StreamLifetime = 50 * time.Millisecond }))
	c := browserClient(t)
	c.Timeout = 30 * time.Second
	signIn(t, c, short.URL, "tok-a")
	res, err = c.Get(short.URL + "/ui/stream?after=0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.ReadAll(res.Body); err != nil { // ends by itself, well before the client's timeout
		t.Errorf("a stream past its lifetime did not end: %v", err)
	}
}

func clientCreate(name string) client.CreateRequest { return client.CreateRequest{Name: name} }

// A stream's position is bounded (400 naming the bound); a position the simulator did not give
// (an old number, another replica's) is answered with a resync, never with a guess.
func TestStreamPositionBound(t *testing.T) {
	s := simtest.Start(t)
	hc := browserClient(t)
	hc.Timeout = 10 * time.Second
	send(t, hc, http.MethodGet, s.URL+"/ui/session", "", nil) // the open session
	for _, after := range []string{"", strings.Repeat("a", dashboard.MaxPositionBytes+1)} {
		if status, body := send(t, hc, http.MethodGet, s.URL+"/ui/stream?after="+after, "", nil); status != http.StatusBadRequest ||
			!strings.Contains(body, fmt.Sprint(dashboard.MaxPositionBytes)) {
			t.Errorf("stream after %d bytes = %d %s, want 400 naming the bound", len(after), status, body)
		}
	}
	res, err := hc.Get(s.URL + "/ui/stream?after=12")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ev, _, ok := simtest.NextEvent(bufio.NewScanner(res.Body)); !ok || ev != "resync" {
		t.Errorf("the first event after a foreign position = %q (the stream ended: %v), want resync", ev, !ok)
	}
}
