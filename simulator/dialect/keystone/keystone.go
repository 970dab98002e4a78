// Package keystone serves the minimal part of OpenStack Keystone's identity API v3 that the
// OpenStack clients need for their ordinary login (OS_AUTH_URL with a user and a password)
// against the simulator: version discovery (GET /identity, GET /identity/v3) and token
// issue (POST /identity/v3/auth/tokens, password or token method), answering X-Subject-Token
// and a catalog that lists the simulator's dialects (Blazar as "reservation", Sahara as
// "data-processing", and the "network" endpoint Sahara's client needs).
//
// A token maps to a tenant: the password is one of the simulator's tokens (any password when
// the simulator runs open), and the token issued is that token, so it is valid at /v1 and in
// every dialect, on every replica and after a restart. Users, projects, roles and domains are
// not modelled: the answer names the tenant as the project and the user.
package keystone

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Service is one entry of the catalog: an OpenStack service type, its name, and the path the
// simulator serves it at ("%(tenant_id)s" in it is the caller's project, as in Keystone's
// catalog templates: Sahara's v1.1 URLs name the project).
type Service struct {
	Type, Name, Path string
}

// Clock tells the time tokens are issued at (the simulator's clock).
type Clock interface{ Now() time.Time }

// Handler serves Keystone v3's discovery and token routes under /identity.
type Handler struct {
	tenants dialect.Tenants
	clock   Clock
	catalog []Service
	mux     *http.ServeMux
}

// Region is the region every catalog endpoint is in.
const Region = "RegionOne"

// tokenLifetime is how long an issued token is said to be valid (it stays valid as long as
// the simulator's token does).
const tokenLifetime = 24 * time.Hour

// New returns the Keystone dialect: tenants checks passwords and tokens, catalog lists the
// services (the identity service itself is added).
func New(tenants dialect.Tenants, clock Clock, catalog []Service) *Handler {
	h := &Handler{tenants: tenants, clock: clock, mux: http.NewServeMux(),
		catalog: append([]Service{{Type: "identity", Name: "keystone", Path: "/identity/v3"}}, catalog...)}
	h.mux.HandleFunc("GET /identity", h.versions)
	h.mux.HandleFunc("GET /identity/{$}", h.versions)
	h.mux.HandleFunc("GET /identity/v3", h.version)
	h.mux.HandleFunc("GET /identity/v3/{$}", h.version)
	h.mux.HandleFunc("POST /identity/v3/auth/tokens", h.issue)
	h.mux.HandleFunc("GET /identity/v3/auth/tokens", h.validate)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := h.mux.Handler(r); pattern == "" {
		writeError(w, http.StatusNotFound, "Not Found",
			fmt.Sprintf("%s %s is not part of the Keystone API the simulator serves (GET /identity, GET /identity/v3, POST and GET /identity/v3/auth/tokens)", r.Method, r.URL.Path))
		return
	}
	h.mux.ServeHTTP(w, r)
}

// base is the simulator's URL as the client reached it.
func base(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

type mediaType struct {
	Base string `json:"base"`
	Type string `json:"type"`
}

type version struct {
	ID         string      `json:"id"`
	Status     string      `json:"status"`
	Updated    string      `json:"updated"`
	Links      []link      `json:"links"`
	MediaTypes []mediaType `json:"media-types"`
}

func v3(r *http.Request) version {
	return version{ID: "v3.14", Status: "stable", Updated: "2020-04-07T00:00:00Z",
		Links:      []link{{Rel: "self", Href: base(r) + "/identity/v3/"}},
		MediaTypes: []mediaType{{Base: "application/json", Type: "application/vnd.openstack.identity-v3+json"}}}
}

func (h *Handler) versions(w http.ResponseWriter, r *http.Request) {
	dialect.JSON(w, http.StatusMultipleChoices, map[string]any{"versions": map[string]any{"values": []version{v3(r)}}})
}

func (h *Handler) version(w http.ResponseWriter, r *http.Request) {
	dialect.JSON(w, http.StatusOK, map[string]any{"version": v3(r)})
}

// authRequest is a v3 token request (password or token method).
type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password struct {
				User struct {
					Name     string `json:"name"`
					ID       string `json:"id"`
					Password string `json:"password"`
				} `json:"user"`
			} `json:"password"`
			Token struct {
				ID string `json:"id"`
			} `json:"token"`
		} `json:"identity"`
	} `json:"auth"`
}

func (h *Handler) issue(w http.ResponseWriter, r *http.Request) {
	var req authRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "Bad Request", "invalid JSON body: "+err.Error())
		return
	}
	id := req.Auth.Identity
	var token, method string
	switch {
	case contains(id.Methods, "password"):
		token, method = id.Password.User.Password, "password"
	case contains(id.Methods, "token"):
		token, method = id.Token.ID, "token"
	default:
		writeError(w, http.StatusBadRequest, "Bad Request",
			"auth.identity.methods must name password or token: the simulator models only these (the password is a simulator token)")
		return
	}
	h.answer(w, r, http.StatusCreated, token, method)
}

func (h *Handler) validate(w http.ResponseWriter, r *http.Request) {
	if _, err := h.tenants.TenantOf(r.Header.Get("X-Auth-Token")); err != nil {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication: send X-Auth-Token")
		return
	}
	h.answer(w, r, http.StatusOK, r.Header.Get("X-Subject-Token"), "token")
}

// answer issues (or shows) the token for a simulator token.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, status int, token, method string) {
	tenant, err := h.tenants.TenantOf(token)
	if err != nil {
		var we *wire.Error
		msg := "The request you have made requires authentication."
		if errors.As(err, &we) {
			msg += " " + we.Message
		}
		writeError(w, http.StatusUnauthorized, "Unauthorized", msg+" (the password is a simulator token)")
		return
	}
	name := tenant
	if name == "" {
		name = "default"
	}
	if token == "" {
		token = "open" // the open simulator takes any token, and none
	}
	now := h.clock.Now().UTC()
	domain := map[string]string{"id": "default", "name": "Default"}
	catalog := make([]map[string]any, len(h.catalog))
	for i, s := range h.catalog {
		url := base(r) + strings.ReplaceAll(s.Path, "%(tenant_id)s", name) // as Keystone fills its catalog's templates
		catalog[i] = map[string]any{"id": s.Name, "type": s.Type, "name": s.Name, "endpoints": []map[string]string{
			{"id": s.Name + "-public", "interface": "public", "region": Region, "region_id": Region, "url": url},
			{"id": s.Name + "-internal", "interface": "internal", "region": Region, "region_id": Region, "url": url},
			{"id": s.Name + "-admin", "interface": "admin", "region": Region, "region_id": Region, "url": url},
		}}
	}
	w.Header().Set("X-Subject-Token", token)
	dialect.JSON(w, status, map[string]any{"token": map[string]any{
		"methods":    []string{method},
		"user":       map[string]any{"id": name, "name": name, "domain": domain, "password_expires_at": nil},
		"project":    map[string]any{"id": name, "name": name, "domain": domain},
		"is_domain":  false,
		"roles":      []map[string]string{{"id": "member", "name": "member"}},
		"audit_ids":  []string{},
		"issued_at":  now.Format("2006-01-02T15:04:05.000000Z"),
		"expires_at": now.Add(tokenLifetime).Format("2006-01-02T15:04:05.000000Z"),
		"catalog":    catalog,
	}})
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if strings.EqualFold(s, x) {
			return true
		}
	}
	return false
}

// writeError answers Keystone's error shape: {"error": {"code", "title", "message"}}.
func writeError(w http.ResponseWriter, status int, title, msg string) {
	dialect.JSON(w, status, map[string]any{"error": map[string]any{"code": status, "title": title, "message": msg}})
}
