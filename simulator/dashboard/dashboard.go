// Package dashboard is lifecyclesim's web dashboard: a small single-page app (plain HTML,
// CSS and JavaScript embedded in the binary, Mermaid bundled locally) that shows a tenant's
// objects by kind and state, updated live from the engine's change feed over server-sent
// events, with an object's state diagram, timeline and related objects, the fault rules, the
// clock and reset.
//
// A browser's EventSource cannot send a bearer token, so when the simulator has tokens the
// dashboard signs in with one to a cookie session. The page reaches the API through
// /ui/api/, which adds the session's token; state-changing requests there (and sign-out)
// must carry the session's CSRF token in X-CSRF-Token and, when the browser sends one, an
// Origin of this host.
//
// It serves through net/http only and speaks the API's wire types (package wire); its data
// comes from a Source the HTTP layer implements over the engine, so it imports neither the
// engine, the store, echo nor the client.
package dashboard

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

//go:generate bash ../../scripts/mermaid-bundle.sh

//go:embed assets
var assets embed.FS

// heartbeat is how often an idle stream sends a comment, so proxies and the browser keep it.
const heartbeat = 15 * time.Second

// sessionRecheck is how often an open stream reads its session again, to end it once it is
// signed out (in another tab, or through another replica) or has expired: not for every
// change it sends, for a SessionStore over a database would be asked for every change of
// every open stream.
const sessionRecheck = time.Second

// MaxPositionBytes bounds a change-feed position a browser sends back.
const MaxPositionBytes = 64

// Source is what the dashboard reads from the simulator.
type Source interface {
	// Snapshot returns every object of a tenant and the change-feed position it reflects.
	Snapshot(ctx context.Context, tenant string) (Snapshot, error)
	// Changes waits for a tenant's objects to change after a position and returns them. A
	// position it did not give (another simulator's, say) gets a resync.
	Changes(ctx context.Context, tenant, after string) (Update, error)
	// Diagram returns a kind's state diagram in Mermaid.
	Diagram(kind string) (string, bool)
}

// Snapshot is every object of a tenant at a change-feed position. A position is text the
// Source makes (at most MaxPositionBytes), which readers give back as they got it.
type Snapshot struct {
	Seq     string        `json:"seq"`
	Objects []wire.Object `json:"objects"`
}

// Update is what changed after a position: objects as they are now, and the IDs of objects
// that are gone. Resync asks the reader to take a new snapshot.
type Update struct {
	Seq     string        `json:"seq"`
	Objects []wire.Object `json:"objects,omitempty"`
	Removed []string      `json:"removed,omitempty"`
	Resync  bool          `json:"resync,omitempty"`
}

// Options configure the dashboard.
type Options struct {
	// API is the simulator's HTTP API; /ui/api/v1/... is served by it with the session's token.
	API http.Handler
	// Tokens maps bearer tokens to tenants, as the API's. With none, no sign-in is needed.
	Tokens map[string]string
	// Source feeds the object list.
	Source Source
	// Now is the wall clock for session expiry (time.Now when nil).
	Now func() time.Time
	// HoldStream, if set, takes a tenant's slot for an event stream, or refuses it (the
	// stream is answered 429): the server's per-tenant limit.
	HoldStream func(tenant string) (release func(), err error)
	// StreamLifetime ends an event stream after this long (never when 0); the browser
	// reconnects and resumes from its last event.
	StreamLifetime time.Duration
	// TrustProxy trusts X-Forwarded-Proto: https from a TLS-terminating proxy in front, so
	// the session cookie is Secure there. Set it only behind such a proxy.
	TrustProxy bool
	// AdminToken, when set, signs in to the dashboard as the admin: its session may use the
	// simulator-wide controls (the clock, the time scale) and holds no tenant's objects.
	AdminToken string
	// Sessions keeps the sessions (in memory when nil): give simulators that share a
	// database a store over it, so a browser may reach any of them.
	Sessions SessionStore
}

// Handler serves the dashboard at / and /ui/.
type Handler struct {
	api        http.Handler
	tokens     map[string]string
	src        Source
	sessions   SessionStore
	signed     map[string]signedToken // by digest
	now        func() time.Time
	static     http.Handler
	hold       func(tenant string) (func(), error)
	lifetime   time.Duration
	trustProxy bool
	admin      string
	// cop refuses state-changing requests from other origins (net/http's check: the
	// browser's Sec-Fetch-Site, else Origin against Host).
	cop *http.CrossOriginProtection
	// streams are the open event streams, which a sign-out here ends.
	streams openStreams
}

// New returns the dashboard's handler.
func New(opt Options) *Handler {
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	var sessions SessionStore = newMemSessions()
	if opt.Sessions != nil {
		sessions = opt.Sessions
	}
	return &Handler{
		api: opt.API, tokens: opt.Tokens, src: opt.Source,
		sessions: sessions, signed: signedTokens(opt.Tokens, opt.AdminToken), now: now,
		static: http.StripPrefix("/ui/assets/", assetServer(sub)),
		hold:   opt.HoldStream, lifetime: opt.StreamLifetime, trustProxy: opt.TrustProxy, admin: opt.AdminToken,
		cop: http.NewCrossOriginProtection(),
	}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/" || p == "/index.html":
		h.index(w, r)
	case strings.HasPrefix(p, "/ui/assets/"):
		w.Header().Set("Cache-Control", "no-cache")
		h.static.ServeHTTP(w, r)
	case p == "/ui/session":
		h.session(w, r)
	case strings.HasPrefix(p, "/ui/api/v1/"):
		h.proxy(w, r)
	case p == "/ui/snapshot":
		h.snapshot(w, r)
	case p == "/ui/stream":
		h.stream(w, r)
	case strings.HasPrefix(p, "/ui/diagram/"):
		h.diagram(w, r)
	default:
		writeError(w, http.StatusNotFound, wire.CodeNotFound, "no dashboard page "+p)
	}
}

func (h *Handler) open() bool { return len(h.tokens) == 0 }

// index serves the page. Without tokens it also starts a session, whose CSRF token guards
// the page's forms.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, wire.CodeInvalid, "the dashboard page only answers GET")
		return
	}
	if h.open() {
		s, err := h.current(r)
		if err == nil && s == nil {
			_, err = h.start(w, r, "", "")
		}
		if err != nil {
			sessionsFailed(w, err)
			return
		}
	}
	page, err := assets.ReadFile("assets/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, wire.CodeInternal, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
	_, _ = w.Write(page)
}

// sessionInfo is the body of GET/POST /ui/session.
type sessionInfo struct {
	SignedIn     bool   `json:"signed_in"`
	AuthRequired bool   `json:"auth_required"`
	Tenant       string `json:"tenant,omitempty"`
	CSRF         string `json:"csrf,omitempty"`
	// Admin is set for the admin token's session (Tenant reads "admin"): it may use the
	// simulator-wide controls and sees no tenant's objects.
	Admin bool `json:"admin,omitempty"`
}

// infoOf is a signed-in session's sessionInfo.
func infoOf(s *session, authRequired bool) sessionInfo {
	info := sessionInfo{SignedIn: true, AuthRequired: authRequired, Tenant: s.tenant, CSRF: s.csrf}
	if s.tenant == adminTenant {
		info.Tenant, info.Admin = "admin", true
	}
	return info
}

// session answers who is signed in (GET), signs in with a token (POST) and out (DELETE).
func (h *Handler) session(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s, err := h.current(r)
		if err == nil && s == nil && h.open() {
			s, err = h.start(w, r, "", "")
		}
		if err != nil {
			sessionsFailed(w, err)
			return
		}
		info := sessionInfo{AuthRequired: !h.open()}
		if s != nil {
			info = infoOf(s, !h.open())
		}
		writeJSON(w, http.StatusOK, info)
	case http.MethodPost:
		if h.cop.Check(r) != nil {
			writeError(w, http.StatusForbidden, wire.CodeUnauthorized, "sign-in from another site refused")
			return
		}
		var req struct {
			Token string `json:"token"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, wire.CodeInvalid, "send {\"token\": \"...\"}")
			return
		}
		tenant, ok := h.tenantOf(req.Token)
		if !ok && h.admin != "" && subtle.ConstantTimeCompare([]byte(h.admin), []byte(req.Token)) == 1 {
			tenant, ok = adminTenant, true
		}
		if !ok {
			writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, "unknown token: use one of the simulator's --token values")
			return
		}
		if old, err := h.current(r); err == nil && old != nil {
			_ = h.sessions.EndSession(r.Context(), old.key) // it would expire unused
			h.streams.end(old.key)
		}
		s, err := h.start(w, r, tenant, req.Token)
		if err != nil {
			sessionsFailed(w, err)
			return
		}
		writeJSON(w, http.StatusOK, infoOf(s, !h.open()))
	case http.MethodDelete:
		s, ok := h.guard(w, r)
		if !ok {
			return
		}
		if err := h.sessions.EndSession(r.Context(), s.key); err != nil {
			sessionsFailed(w, err)
			return
		}
		h.streams.end(s.key)
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusMethodNotAllowed, wire.CodeInvalid, "use GET, POST or DELETE on /ui/session")
	}
}

// tenantOf finds a token's tenant in constant time per token.
func (h *Handler) tenantOf(token string) (string, bool) {
	if token == "" {
		return "", false
	}
	for t, ten := range h.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			return ten, true
		}
	}
	return "", false
}

// guard returns the request's session; for state-changing methods it also checks the CSRF
// token and the origin. It answers the request itself when they fail.
func (h *Handler) guard(w http.ResponseWriter, r *http.Request) (*session, bool) {
	s, err := h.current(r)
	if err != nil {
		sessionsFailed(w, err)
		return nil, false
	}
	if s == nil {
		writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, "not signed in: sign in to the dashboard with a token")
		return nil, false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return s, true
	}
	tok := r.Header.Get("X-CSRF-Token")
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.csrf)) != 1 {
		writeError(w, http.StatusForbidden, wire.CodeUnauthorized, "missing or wrong CSRF token: reload the dashboard")
		return nil, false
	}
	if h.cop.Check(r) != nil {
		writeError(w, http.StatusForbidden, wire.CodeUnauthorized, "request from another site refused")
		return nil, false
	}
	return s, true
}

// proxy serves /ui/api/v1/... with the API, as the session's tenant.
func (h *Handler) proxy(w http.ResponseWriter, r *http.Request) {
	s, ok := h.guard(w, r)
	if !ok {
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/ui/api")
	r2.URL.RawPath = ""
	r2.RequestURI = r2.URL.RequestURI()
	r2.Header.Del("Cookie")
	r2.Header.Del("X-CSRF-Token")
	r2.Header.Del("Authorization")
	if s.token != "" {
		r2.Header.Set("Authorization", "Bearer "+s.token)
	}
	h.api.ServeHTTP(w, r2)
}

func (h *Handler) snapshot(w http.ResponseWriter, r *http.Request) {
	s, ok := h.guard(w, r)
	if !ok {
		return
	}
	snap, err := h.src.Snapshot(r.Context(), s.tenant)
	if err != nil {
		writeError(w, http.StatusInternalServerError, wire.CodeInternal, err.Error())
		return
	}
	out := listSnapshot{Seq: snap.Seq, Objects: make([]listObject, len(snap.Objects))}
	for i, o := range snap.Objects {
		out.Objects[i] = listed(o)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// listSnapshot is the body of /ui/snapshot: the objects as the list shows them. The page
// reads an object's spec and status from the API when it opens the object.
type listSnapshot struct {
	Seq     string       `json:"seq"`
	Objects []listObject `json:"objects"`
}

// listObject is an object as the list shows it: a few fields of wire.Object, under the
// same names, so that tens of thousands of them load fast.
type listObject struct {
	ID        string         `json:"id"`
	Kind      string         `json:"kind"`
	Name      string         `json:"name"`
	ParentID  string         `json:"parent_id,omitempty"`
	State     string         `json:"state"`
	Status    map[string]any `json:"status,omitempty"`
	Operation *listOperation `json:"operation,omitempty"`
	Version   int64          `json:"version"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Partial   bool           `json:"partial"`
}

type listOperation struct {
	Action string `json:"action"`
}

func listed(o wire.Object) listObject {
	l := listObject{ID: o.ID, Kind: o.Kind, Name: o.Name, ParentID: o.ParentID, State: o.State, Version: o.Version,
		CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, Partial: true}
	for _, f := range []string{"text", "message"} {
		if v, ok := o.Status[f]; ok {
			l.Status = map[string]any{f: v}
			break
		}
	}
	if o.Operation != nil {
		l.Operation = &listOperation{Action: o.Operation.Action}
	}
	return l
}

func (h *Handler) diagram(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.guard(w, r); !ok {
		return
	}
	d, ok := h.src.Diagram(strings.TrimPrefix(r.URL.Path, "/ui/diagram/"))
	if !ok {
		writeError(w, http.StatusNotFound, wire.CodeNotFound, "no such kind")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(d))
}

// stream sends the tenant's changes as server-sent events from a change-feed position
// (?after=, or Last-Event-ID when the browser reconnects): "change" events carry an Update,
// a "resync" event asks the page for a new snapshot.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request) {
	s, ok := h.guard(w, r)
	if !ok {
		return
	}
	pos := r.Header.Get("Last-Event-ID")
	if pos == "" {
		pos = r.URL.Query().Get("after")
	}
	after := pos
	if after == "" || len(after) > MaxPositionBytes {
		writeError(w, http.StatusBadRequest, wire.CodeInvalid,
			fmt.Sprintf("after must be the seq of a snapshot (at most %d bytes)", MaxPositionBytes))
		return
	}
	if h.hold != nil {
		release, err := h.hold(s.tenant)
		if err != nil {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Connection", "close") // its connection is not kept in the stream's place
			writeError(w, http.StatusTooManyRequests, wire.CodeRateLimited, err.Error())
			return
		}
		defer release()
	}
	ctx := r.Context()
	if h.lifetime > 0 {
		// A stream ends after its lifetime; the browser reconnects (retry: 1000) with the
		// last event's ID and resumes from there.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.lifetime)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, remove := h.streams.add(s.key, cancel)
	defer remove()
	rc := http.NewResponseController(w)
	// send writes one message, or "signedout" instead once the session has ended here. Each
	// write has its own deadline (the stream outlives the server's write timeout, if any): a
	// browser that stops reading cannot hold the stream, nor a sign-out waiting for it.
	send := func(msg []byte) bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		_ = rc.SetWriteDeadline(time.Now().Add(heartbeat))
		if st.ended {
			msg = signedOut
		}
		if _, err := w.Write(msg); err != nil {
			return false
		}
		return rc.Flush() == nil && !st.ended
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !send([]byte("retry: 1000\n\n")) {
		return
	}
	checked := h.now() // guard has just read the session
	for {
		wctx, cancelWait := context.WithTimeout(ctx, heartbeat)
		u, err := h.src.Changes(wctx, s.tenant, after)
		cancelWait()
		var msg []byte
		switch {
		case ctx.Err() != nil:
			_ = send(nil) // "signedout" when a sign-out here ended it
			return
		case errors.Is(err, context.DeadlineExceeded):
			after = u.Seq
			msg = []byte(": ping\n\n")
		case err != nil:
			return // the simulator is shutting down: the browser reconnects
		case u.Resync:
			after = u.Seq
			msg = []byte("id: " + u.Seq + "\nevent: resync\ndata: {}\n\n")
		default:
			after = u.Seq
			data, err := json.Marshal(u)
			if err != nil {
				return
			}
			msg = append([]byte("id: "+u.Seq+"\nevent: change\ndata: "), data...)
			msg = append(msg, "\n\n"...)
		}
		// The session is read again before a message is sent, not before every wait: a
		// sign-out elsewhere (another replica) or an expiry is seen before the next change.
		if now := h.now(); now.Sub(checked) >= sessionRecheck {
			checked = now
			still, err := h.lookup(ctx, s.key)
			if err != nil {
				return // the browser reconnects
			}
			if still == nil {
				msg = signedOut
			}
		}
		if !send(msg) || bytes.Equal(msg, signedOut) {
			return
		}
	}
}

// signedOut is the stream's last event once its session has ended.
var signedOut = []byte("event: signedout\ndata: {}\n\n")

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sessionsFailed answers a request whose session could not be read or written (the
// database of a shared SessionStore is unreachable): 503, the client may retry.
func sessionsFailed(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, wire.CodeUnavailable, "the dashboard's sessions are unavailable: "+err.Error())
}

// writeError answers in the API's error envelope.
func writeError(w http.ResponseWriter, status int, code wire.Code, msg string) {
	writeJSON(w, status, wire.ErrorBody{Error: wire.ErrorDetail{Code: string(code), Message: msg}})
}
