package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

const (
	cookieName = "lifecyclesim_session"
	// sessionTTL is how long a session lasts without use.
	sessionTTL = 12 * time.Hour
	// maxSessions bounds the memory sessions take (the open mode makes one per new browser):
	// past it, the least recently used session ends.
	maxSessions = 10000
)

// session is a signed-in browser: its tenant, the token it signed in with (sent to the API
// on its behalf) and the CSRF token its state-changing requests must carry.
type session struct {
	id, tenant, token, csrf string
	expires                 time.Time
}

// sessions are kept in memory: a restart signs everyone out.
type sessions struct {
	mu  sync.Mutex
	m   map[string]*session
	now func() time.Time
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{m: map[string]*session{}, now: now}
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
	for id, s := range ss.m {
		if now.After(s.expires) {
			delete(ss.m, id)
		}
	}
	if len(ss.m) >= maxSessions {
		var oldest *session
		for _, s := range ss.m {
			if oldest == nil || s.expires.Before(oldest.expires) {
				oldest = s
			}
		}
		delete(ss.m, oldest.id)
	}
	s := &session{id: randomHex(), tenant: tenant, token: token, csrf: randomHex(), expires: now.Add(sessionTTL)}
	ss.m[s.id] = s
	return s
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
		delete(ss.m, id)
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
	delete(ss.m, id)
}

// current returns the request's session, from its cookie.
func (h *Handler) current(r *http.Request) (*session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, false
	}
	return h.sessions.get(c.Value)
}

// start makes a session and sets its cookie: HttpOnly (scripts never see it) and
// SameSite=Strict (other sites' requests do not carry it).
func (h *Handler) start(w http.ResponseWriter, r *http.Request, tenant, token string) *session {
	s := h.sessions.create(tenant, token)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: s.id, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	return s
}
