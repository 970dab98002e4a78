package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
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

// SessionStore keeps the dashboard's sessions (Options.Sessions; in memory when nil). It is
// the store's one session interface, store.SessionKeeper: a store that several simulators
// share (the PostgreSQL store's) signs a browser in on all of them, so a load balancer may
// send it to any.
type SessionStore = store.SessionKeeper

// Session is a signed-in browser as a SessionStore keeps it (store.Session).
type Session = store.Session

// session is the request's signed-in browser: its cookie's key, its tenant, the token it
// signed in with (sent to the API on its behalf) and its CSRF token.
type session struct {
	key                 []byte
	tenant, token, csrf string
}

// adminTenant is the tenant of the admin token's session: no token's tenant, so the session
// reads no objects (it is for the simulator-wide controls: the clock, the time scale) and its
// sessions are limited apart from every tenant's.
const adminTenant = "\x00admin"

// digest is the SHA-256 of a cookie or a token, as a SessionStore keys and keeps them.
func digest(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}

// signedToken is a token the dashboard accepts, and its tenant.
type signedToken struct{ token, tenant string }

// signedTokens maps the digests of the tokens a session may hold to them: the tenants'
// tokens, the admin token, and "" (the open mode's sessions, when there are no tokens).
func signedTokens(tokens map[string]string, admin string) map[string]signedToken {
	out := map[string]signedToken{}
	if len(tokens) == 0 {
		out[string(digest(""))] = signedToken{}
	}
	for tok, tenant := range tokens {
		out[string(digest(tok))] = signedToken{token: tok, tenant: tenant}
	}
	if admin != "" {
		out[string(digest(admin))] = signedToken{token: admin, tenant: adminTenant}
	}
	return out
}

// memSessions is the SessionStore of one process: a restart signs everyone out.
type memSessions struct {
	mu       sync.Mutex
	m        map[string]*Session
	byTenant map[string]map[string]*Session
}

var _ SessionStore = (*memSessions)(nil)

func newMemSessions() *memSessions {
	return &memSessions{m: map[string]*Session{}, byTenant: map[string]map[string]*Session{}}
}

func randomHex() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// CreateSession implements SessionStore.
func (ss *memSessions) CreateSession(_ context.Context, s Session, now time.Time, limit int) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	mine := ss.byTenant[s.Tenant]
	if mine == nil {
		mine = map[string]*Session{}
		ss.byTenant[s.Tenant] = mine
	}
	for key, s := range mine {
		if now.After(s.Expires) {
			ss.drop(key)
		}
	}
	for len(mine) >= max(limit, 1) {
		var oldest *Session
		for _, s := range mine {
			if oldest == nil || s.Expires.Before(oldest.Expires) {
				oldest = s
			}
		}
		ss.drop(string(oldest.Key))
	}
	s.Key = append([]byte(nil), s.Key...)
	ss.m[string(s.Key)] = &s
	mine[string(s.Key)] = &s
	return nil
}

// drop removes a session (under ss.mu).
func (ss *memSessions) drop(key string) {
	s, ok := ss.m[key]
	if !ok {
		return
	}
	delete(ss.m, key)
	if mine := ss.byTenant[s.Tenant]; mine != nil {
		delete(mine, key)
		if len(mine) == 0 {
			delete(ss.byTenant, s.Tenant)
		}
	}
}

// Session implements SessionStore.
func (ss *memSessions) Session(_ context.Context, key []byte, now time.Time, ttl time.Duration) (Session, bool, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[string(key)]
	if !ok {
		return Session{}, false, nil
	}
	if now.After(s.Expires) {
		ss.drop(string(key))
		return Session{}, false, nil
	}
	s.Expires = now.Add(ttl)
	return *s, true, nil
}

// EndSession implements SessionStore.
func (ss *memSessions) EndSession(_ context.Context, key []byte) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.drop(string(key))
	return nil
}

// current returns the request's session, from its cookie (nil when it has none that is
// signed in), or the error of the SessionStore.
func (h *Handler) current(r *http.Request) (*session, error) {
	cs := r.CookiesNamed(cookieName) // the first one is the one r.Cookie would return
	if len(cs) == 0 || cs[0].Value == "" {
		return nil, nil
	}
	return h.lookup(r.Context(), digest(cs[0].Value))
}

// lookup returns the session of a cookie's key, if it is signed in with a token the
// dashboard still accepts, for the tenant that token still belongs to.
func (h *Handler) lookup(ctx context.Context, key []byte) (*session, error) {
	s, ok, err := h.sessions.Session(ctx, key, h.now(), sessionTTL)
	if err != nil || !ok {
		return nil, err
	}
	tok, ok := h.signed[string(s.TokenHash)]
	if !ok || tok.tenant != s.Tenant {
		return nil, nil // signed in with a token the simulator no longer has
	}
	return &session{key: key, tenant: s.Tenant, token: tok.token, csrf: s.CSRF}, nil
}

// start makes a session and sets its cookie: HttpOnly (scripts never see it),
// SameSite=Strict (other sites' requests do not carry it) and Secure when the browser reached
// the dashboard over TLS (see secure). The cookie is random; the store keeps its digest.
func (h *Handler) start(w http.ResponseWriter, r *http.Request, tenant, token string) (*session, error) {
	id, now := randomHex(), h.now()
	s := &session{key: digest(id), tenant: tenant, token: token, csrf: randomHex()}
	err := h.sessions.CreateSession(r.Context(), Session{Key: s.key, Tenant: tenant, TokenHash: digest(token), CSRF: s.csrf,
		Expires: now.Add(sessionTTL)}, now, MaxSessionsPerTenant)
	if err != nil {
		return nil, err
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/", HttpOnly: true, Secure: h.secure(r),
		SameSite: http.SameSiteStrictMode,
	})
	return s, nil
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
