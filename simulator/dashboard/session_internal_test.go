package dashboard

import (
	"context"
	"testing"
	"time"
)

// create stores a new session of tenant at now, as Handler.start does, and returns its key.
func create(t *testing.T, ss SessionStore, now time.Time, tenant string) []byte {
	t.Helper()
	key := digest(randomHex())
	if err := ss.CreateSession(context.Background(), Session{Key: key, Tenant: tenant, TokenHash: digest("tok"), CSRF: randomHex(),
		Expires: now.Add(sessionTTL)}, now, MaxSessionsPerTenant); err != nil {
		t.Fatal(err)
	}
	return key
}

// valid reports whether key's session is live at now, and extends it.
func valid(t *testing.T, ss SessionStore, now time.Time, key []byte) bool {
	t.Helper()
	_, ok, err := ss.Session(context.Background(), key, now, sessionTTL)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestSessionsExpireAndAreBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ss := newMemSessions()
	first := create(t, ss, now, "acme")
	if s, ok, err := ss.Session(context.Background(), first, now, sessionTTL); err != nil || !ok || s.Tenant != "acme" {
		t.Fatalf("Session(new session) = %+v, %v, %v", s, ok, err)
	}
	now = now.Add(sessionTTL - time.Minute)
	if !valid(t, ss, now, first) {
		t.Error("a session used within its TTL expired")
	}
	now = now.Add(sessionTTL + time.Minute)
	if valid(t, ss, now, first) {
		t.Error("a session unused past its TTL is still valid")
	}

	oldest := create(t, ss, now, "")
	for range MaxSessionsPerTenant - 1 {
		now = now.Add(time.Millisecond)
		create(t, ss, now, "")
	}
	if !valid(t, ss, now, oldest) {
		t.Fatal("the oldest session ended before the limit")
	}
	now = now.Add(time.Millisecond) // oldest was just used: the next one is the least recent
	create(t, ss, now, "")
	if len(ss.m) != MaxSessionsPerTenant || !valid(t, ss, now, oldest) {
		t.Errorf("%d sessions after the limit; oldest (recently used) valid: %v", len(ss.m), valid(t, ss, now, oldest))
	}
}

// Issue 32: one tenant's sign-ins never end another tenant's session.
func TestSessionsBoundedPerTenant(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ss := newMemSessions()
	other := create(t, ss, now, "globex")
	for range 3 * MaxSessionsPerTenant {
		now = now.Add(time.Millisecond)
		create(t, ss, now, "acme")
	}
	if !valid(t, ss, now, other) {
		t.Error("acme's sign-ins ended globex's session")
	}
	if n := len(ss.byTenant["acme"]); n != MaxSessionsPerTenant {
		t.Errorf("acme holds %d sessions, want its limit %d", n, MaxSessionsPerTenant)
	}
	if len(ss.m) != MaxSessionsPerTenant+1 {
		t.Errorf("%d sessions in all, want %d", len(ss.m), MaxSessionsPerTenant+1)
	}
}
