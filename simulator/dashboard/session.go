package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"
)

const (
	cookieName = "lifecyclesim_session"
	// sessionTTL is how long a session lasts without use.
	sessionTTL = 12 * time.Hour
	// MaxSessionsPerTenant bounds the sessions of one tenant (the open mode makes one per
	// new browser): past it, that tenant's least recently used session ends. Tenants are
	// the configured tokens' (and the open one), so this bounds the memory sessions take,
	// and one tenant's sign-ins never end another's session.
	MaxSessionsPerTenant = 1000
)

// session is a signed-in browser: its tenant, the token it signed in with (sent to the API
// on its behalf) and the CSRF token its state-changing requests must carry.
type session struct {
	id, tenant, token, csrf string
	expires                 time.Time
}

// adminTenant is the tenant of the admin token's session: no token's tenant, so the session
// reads no objects (it is for the simulator-wide controls: the clock, the time scale) and its
// sessions are limited apart from every tenant's.
const adminTenant = "\x00admin"

// sessions are kept in memory: a restart signs everyone out.
type sessions struct {
	mu       sync.Mutex
	m        map[string]*session
	byTenant map[string]map[string]*session
	now      func() time.Time
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{m: map[string]*session{}, byTenant: map[string]map[string]*session{}, now: now}
}

func randomHex() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

func (ss *sessions) create(tenant, token string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	mine := ss.byTenant[tenant]
	if mine == nil {
		mine = map[string]*session{}
		ss.byTenant[tenant] = mine
	}
	for id, s := range mine {
		if now.After(s.expires) {
			ss.drop(id)
		}
	}
	if len(mine) >= MaxSessionsPerTenant {
		var oldest *session
		for _, s := range mine {
			if oldest == nil || s.expires.Before(oldest.expires) {
				oldest = s
			}
		}
		ss.drop(oldest.id)
	}
	s := &session{id: randomHex(), tenant: tenant, token: token, csrf: randomHex(), expires: now.Add(sessionTTL)}
	ss.m[s.id] = s
	mine[s.id] = s
	return s
}

// drop removes a session (under ss.mu).
func (ss *sessions) drop(id string) {
	s, ok := ss.m[id]
	if !ok {
		return
	}
	delete(ss.m, id)
	if mine := ss.byTenant[s.tenant]; mine != nil {
		delete(mine, id)
		if len(mine) == 0 {
			delete(ss.byTenant, s.tenant)
		}
	}
}

// get returns a live session and extends it.
func (ss *sessions) get(id string) (*session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[id]
	if !ok {
		return nil, false
	}
	now := ss.now()
	if now.After(s.expires) {
		ss.drop(id)
		return nil, false
	}
	s.expires = now.Add(sessionTTL)
	c := *s
	return &c, true
}

func (ss *sessions) valid(id string) bool {
	_, ok := ss.get(id)
	return ok
}

func (ss *sessions) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.drop(id)
}

// current returns the request's session, from its cookie.
func (h *Handler) current(r *http.Request) (*session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, false
	}
	return h.sessions.get(c.Value)
}

// start makes a session and sets its cookie: HttpOnly (scripts never see it),
// SameSite=Strict (other sites' requests do not carry it) and Secure when the browser reached
// the dashboard over TLS (see secure).
func (h *Handler) start(w http.ResponseWriter, r *http.Request, tenant, token string) *session {
	s := h.sessions.create(tenant, token)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: s.id, Path: "/", HttpOnly: true, Secure: h.secure(r),
		SameSite: http.SameSiteStrictMode,
	})
	return s
}

// secure reports whether the browser reached the dashboard over TLS: the request came over
// TLS, or (with Options.TrustProxy, set only behind a TLS-terminating proxy) the proxy says
// so in X-Forwarded-Proto. A header any client can send is not trusted otherwise.
func (h *Handler) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !h.trustProxy {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
