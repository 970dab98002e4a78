package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/blazar"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/keystone"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/sahara"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/tumblebug"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// The prefixes the dialects are served under.
const (
	BlazarPrefix   = "/blazar/v1"
	KeystonePrefix = "/identity"
	// TumblebugPrefix is CB-Tumblebug's own base path.
	TumblebugPrefix = "/tumblebug"
	// SaharaPrefix holds Sahara's version document, v2 and v1.1/{project}.
	SaharaPrefix = "/sahara"
	// NetworkPrefix answers Neutron's version document only (the Sahara client needs the
	// catalog entry).
	NetworkPrefix = "/network"
)

var _ dialect.Tenants = (*Server)(nil)

// mountDialects serves the seed systems' native APIs beside /v1: each is a plain net/http
// handler over the engine (package dialect and below), behind the same request limits, IDs,
// logs and metrics as /v1. They answer their errors in their own system's shape, so they
// resolve the caller's tenant themselves, through TenantOf.
func (s *Server) mountDialects() {
	bl := echo.WrapHandler(http.StripPrefix(BlazarPrefix, blazar.New(s.engine, s)))
	s.echo.Any(BlazarPrefix+"/*", bl)
	sh := echo.WrapHandler(http.StripPrefix(SaharaPrefix, sahara.New(s.engine, s, SaharaPrefix)))
	s.echo.GET(SaharaPrefix, sh) // version discovery; the APIs are under it
	s.echo.Any(SaharaPrefix+"/*", sh)
	nw := echo.WrapHandler(sahara.Network{Prefix: NetworkPrefix})
	s.echo.Any(NetworkPrefix, nw)
	s.echo.Any(NetworkPrefix+"/*", nw)
	ks := echo.WrapHandler(keystone.New(s, s.engine.Clock(), []keystone.Service{{Type: "reservation", Name: "blazar", Path: BlazarPrefix},
		{Type: "data-processing", Name: "sahara", Path: SaharaPrefix + "/v1.1/%(tenant_id)s"},
		{Type: "network", Name: "neutron", Path: NetworkPrefix}}))
	s.echo.GET(KeystonePrefix, ks) // version discovery; the rest is under it
	s.echo.Any(KeystonePrefix+"/*", ks)
	s.echo.Any(TumblebugPrefix+"/*", echo.WrapHandler(http.StripPrefix(TumblebugPrefix, tumblebug.New(s.engine, s))))
}

// isDialect reports whether path is under a dialect's prefix.
func isDialect(path string) bool {
	for _, p := range []string{BlazarPrefix, KeystonePrefix, TumblebugPrefix, SaharaPrefix} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// TenantOf resolves the token a dialect's client sends (OpenStack's X-Auth-Token) to its
// tenant, as auth does a bearer token: with no tokens configured every caller is the one open
// tenant; the admin token is refused, as at /v1.
func (s *Server) TenantOf(token string) (string, error) {
	if len(s.tokens) == 0 {
		return "", nil
	}
	if token == "" {
		return "", errorf(wire.CodeUnauthorized, "missing token: send X-Auth-Token: <token> (or log in through Keystone at %s)", KeystonePrefix)
	}
	for t, ten := range s.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			return ten, nil
		}
	}
	if s.isAdmin(token) {
		return "", errorf(wire.CodeForbidden, "the admin token is for the simulator-wide controls; leases belong to tenants: use a tenant's token")
	}
	return "", errorf(wire.CodeUnauthorized, "unknown token: check the token you configured")
}
