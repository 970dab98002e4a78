package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// tenantKey is the echo context key of the caller's tenant.
const tenantKey = "tenant"

func tenant(c echo.Context) string {
	t, _ := c.Get(tenantKey).(string)
	return t
}

// auth binds the bearer token to its tenant. With no tokens configured every caller is the
// one open tenant.
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.tokens) == 0 {
			c.Set(tenantKey, "")
			return next(c)
		}
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || tok == "" {
			return errorf(wire.CodeUnauthorized, "missing bearer token: send Authorization: Bearer <token>")
		}
		for t, ten := range s.tokens {
			if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
				c.Set(tenantKey, ten)
				return next(c)
			}
		}
		if s.isAdmin(tok) {
			return errorf(wire.CodeForbidden,
				"the admin token is for the simulator-wide controls (the clock, the time scale, heal_after); objects and fault rules belong to tenants: use a tenant's token")
		}
		return errorf(wire.CodeUnauthorized, "unknown token: check the token you configured")
	}
}

// isAdmin reports whether tok is the admin token.
func (s *Server) isAdmin(tok string) bool {
	return s.admin != "" && subtle.ConstantTimeCompare([]byte(s.admin), []byte(tok)) == 1
}

// readAuth guards a read of what is simulator-wide (the clock, the config, the kinds): a
// tenant's token or the admin token (which changes the settings, and whose dashboard session
// renders the kinds).
func (s *Server) readAuth(next echo.HandlerFunc) echo.HandlerFunc {
	authed := s.auth(next)
	return func(c echo.Context) error {
		if tok, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer "); ok && len(s.tokens) > 0 && s.isAdmin(tok) {
			c.Set(tenantKey, "")
			return next(c)
		}
		return authed(c)
	}
}

// adminAuth guards a simulator-wide control: with tokens configured, only the admin token
// may move every tenant's time.
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.tokens) == 0 {
			c.Set(tenantKey, "")
			return next(c)
		}
		tok, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
		if !ok || tok == "" {
			return errorf(wire.CodeUnauthorized, "missing bearer token: send Authorization: Bearer <admin token>")
		}
		if s.admin != "" && subtle.ConstantTimeCompare([]byte(s.admin), []byte(tok)) == 1 {
			return next(c)
		}
		for t := range s.tokens {
			if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
				return errorf(wire.CodeForbidden,
					"the clock, time scale and heal_after are simulator-wide: changing them needs the admin token (lifecyclesim --admin-token), not a tenant's")
			}
		}
		return errorf(wire.CodeUnauthorized, "unknown token: check the token you configured")
	}
}

// httpFaults answers matching object requests with an injected HTTP error.
func (s *Server) httpFaults(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		k, ok := s.engine.Registry().ByCollection(c.Param("collection"))
		if !ok {
			return next(c)
		}
		if r := s.engine.Faults().Match(c.Request().Context(), wire.FaultHTTPError, tenant(c), k.Name, c.Param("action"), ""); r != nil {
			msg := r.Message
			if msg == "" {
				msg = "injected HTTP error (fault " + r.ID + ")"
			}
			e := &wire.Error{Status: r.HTTPStatus, Code: wire.Code(r.Code), Message: msg}
			if r.HTTPStatus == http.StatusTooManyRequests || r.HTTPStatus == http.StatusServiceUnavailable {
				e.RetryAfter = time.Second
			}
			return e
		}
		return next(c)
	}
}
