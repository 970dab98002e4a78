package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// The export and import of a tenant's state (/v1/sim/export, /v1/sim/import).

// MaxImportBytes bounds the body of an import (a document of some tens of thousands of
// objects); other requests keep MaxBodyBytes.
const MaxImportBytes = 64 << 20

// importPath is the route whose body may reach MaxImportBytes.
const importPath = "/v1/sim/import"

// adminKey is the echo context key set when the caller may move the clock (the admin token,
// or an open simulator).
const adminKey = "admin"

// stateAuth guards the export and import: a tenant's token works on its own tenant, and the
// admin token on the tenant its ?tenant= names (the admin token may also move the clock an
// import needs). With no tokens the API is open: one tenant, whose caller is the admin too.
func (s *Server) stateAuth(next echo.HandlerFunc) echo.HandlerFunc {
	tenantAuthed := s.auth(func(c echo.Context) error {
		if named := c.QueryParam("tenant"); named != "" && named != tenant(c) {
			return errorf(wire.CodeForbidden, "a tenant's token exports and imports its own tenant only; name another tenant (?tenant=) with the admin token")
		}
		return next(c)
	})
	return func(c echo.Context) error {
		if len(s.tokens) == 0 {
			if named := c.QueryParam("tenant"); named != "" {
				return errorf(wire.CodeInvalid, "this simulator runs without tokens, so it has one tenant: leave ?tenant= out")
			}
			c.Set(tenantKey, "")
			c.Set(adminKey, true)
			return next(c)
		}
		tok, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
		if !ok || !s.isAdmin(tok) {
			return tenantAuthed(c)
		}
		named := c.QueryParam("tenant")
		if !slices.Contains(s.tenants(), named) {
			return errorf(wire.CodeInvalid, "the admin token exports and imports the tenant ?tenant= names, one that a token of --tokens maps to (got %q)", named)
		}
		c.Set(tenantKey, named)
		c.Set(adminKey, true)
		return next(c)
	}
}

func (s *Server) exportState(c echo.Context) error {
	st, err := s.engine.Export(c.Request().Context(), tenant(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="lifecyclesim-state.json"`)
	return c.JSON(http.StatusOK, st)
}

func (s *Server) importState(c echo.Context) error {
	if c.Request().ContentLength == 0 {
		return errorf(wire.CodeInvalid, "the body is empty: send a document GET /v1/sim/export (lifecyclesim export) wrote")
	}
	var st engine.State
	if err := bind(c, &st); err != nil {
		return err
	}
	admin, _ := c.Get(adminKey).(bool)
	if err := s.engine.Import(c.Request().Context(), tenant(c), &st, engine.ImportOptions{AdvanceClock: admin}); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ImportResult{Tenant: tenant(c), Objects: len(st.Objects), Events: len(st.Events),
		FaultRules: len(st.FaultRules), Clock: s.engine.Clock().Now()})
}
