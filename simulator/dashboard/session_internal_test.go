package dashboard

import (
	"testing"
	"time"
)

func TestSessionsExpireAndAreBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ss := newSessions(func() time.Time { return now })
	first := ss.create("acme", "tok")
	if s, ok := ss.get(first.id); !ok || s.tenant != "acme" || s.csrf == first.id {
		t.Fatalf("get(new session) = %+v, %v", s, ok)
	}
	now = now.Add(sessionTTL - time.Minute)
	if !ss.valid(first.id) {
		t.Error("a session used within its TTL expired")
	}
	now = now.Add(sessionTTL + time.Minute)
	if ss.valid(first.id) {
		t.Error("a session unused past its TTL is still valid")
	}

	oldest := ss.create("", "")
	for range MaxSessionsPerTenant - 1 {
		now = now.Add(time.Millisecond)
		ss.create("", "")
	}
	if !ss.valid(oldest.id) {
		t.Fatal("the oldest session ended before the limit")
	}
	now = now.Add(time.Millisecond) // oldest was just used: the next one is the least recent
	ss.create("", "")
	if len(ss.m) != MaxSessionsPerTenant || !ss.valid(oldest.id) {
		t.Errorf("%d sessions after the limit; oldest (recently used) valid: %v", len(ss.m), ss.valid(oldest.id))
	}
}

// Issue 32: one tenant's sign-ins never end another tenant's session.
func TestSessionsBoundedPerTenant(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ss := newSessions(func() time.Time { return now })
	other := ss.create("globex", "tok-g")
	for range 3 * MaxSessionsPerTenant {
		now = now.Add(time.Millisecond)
		ss.create("acme", "tok-a")
	}
	if !ss.valid(other.id) {
		t.Error("acme's sign-ins ended globex's session")
	}
	if n := len(ss.byTenant["acme"]); n != MaxSessionsPerTenant {
		t.Errorf("acme holds %d sessions, want its limit %d", n, MaxSessionsPerTenant)
	}
	if len(ss.m) != MaxSessionsPerTenant+1 {
		t.Errorf("%d sessions in all, want %d", len(ss.m), MaxSessionsPerTenant+1)
	}
}
