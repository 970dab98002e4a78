package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countedSessions is a SessionStore that counts the reads of sessions.
type countedSessions struct {
	*memSessions
	reads atomic.Int64
}

func (c *countedSessions) Session(ctx context.Context, key []byte, now time.Time, ttl time.Duration) (Session, bool, error) {
	c.reads.Add(1)
	return c.memSessions.Session(ctx, key, now, ttl)
}

// feedSource is a Source whose changes the test sends, one Update per Changes call.
type feedSource struct{ updates chan Update }

func (f feedSource) Snapshot(context.Context, string) (Snapshot, error) {
	return Snapshot{Seq: "p0"}, nil
}

func (f feedSource) Changes(ctx context.Context, _, _ string) (Update, error) {
	select {
	case u := <-f.updates:
		return u, nil
	case <-ctx.Done():
		return Update{}, ctx.Err()
	}
}

func (f feedSource) Diagram(string) (string, bool) { return "", false }

// An open stream reads its session again at most once per sessionRecheck, not for every change
// it sends (a shared SessionStore is a database), and still ends with "signedout" once the
// session is gone.
func TestStreamRechecksSessionPeriodically(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	sessions := &countedSessions{memSessions: newMemSessions()}
	src := feedSource{updates: make(chan Update)}
	srv := httptest.NewServer(New(Options{Source: src, Now: clock, Sessions: sessions}))
	defer srv.Close()
	hc, jar := jarClient(t)
	res, err := hc.Get(srv.URL + "/ui/session") // the open session
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	base, _ := url.Parse(srv.URL)
	cookies := jar.Cookies(base)
	if len(cookies) != 1 {
		t.Fatalf("cookies after the open session: %v", cookies)
	}

	before := sessions.reads.Load()
	res, err = hc.Get(srv.URL + "/ui/stream?after=p0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := make(chan string)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events <- ev
			}
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
			return ""
		}
	}
	const changes = 50
	for i := range changes {
		src.updates <- Update{Seq: fmt.Sprint("p", i+1)}
		if ev := next(); ev != "change" {
			t.Fatalf("event %d = %q, want change", i, ev)
		}
	}
	if got := sessions.reads.Load() - before; got != 1 {
		t.Errorf("a stream that sent %d changes within %s read its session %d times, want once (as it opened)", changes, sessionRecheck, got)
	}

	if err := sessions.EndSession(t.Context(), digest(cookies[0].Value)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(sessionRecheck)
	mu.Unlock()
	// The stream rechecks before it sends its next change: the change is never sent.
	select {
	case src.updates <- Update{Seq: "p-last"}:
	case ev := <-events:
		t.Fatalf("event before the next change = %q", ev)
	}
	if ev := next(); ev != "signedout" {
		t.Errorf("event once the session was rechecked = %q, want signedout (and not the change)", ev)
	}
}

// A sign-out through this dashboard ends its open streams before it is answered: the stream
// sends signedout and never the next change, whatever the time since its last recheck.
func TestStreamEndsAtSignOut(t *testing.T) {
	src := feedSource{updates: make(chan Update)}
	srv := httptest.NewServer(New(Options{Source: src, Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }}))
	defer srv.Close()
	hc, _ := jarClient(t)
	res, err := hc.Get(srv.URL + "/ui/session") // the open session
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		CSRF string `json:"csrf"`
	}
	if err := json.NewDecoder(res.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	stream, err := hc.Get(srv.URL + "/ui/stream?after=p0")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	events := make(chan string, 4)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events <- ev
			}
		}
	}()
	src.updates <- Update{Seq: "p1"}
	if ev := <-events; ev != "change" {
		t.Fatalf("first event = %q, want change", ev)
	}
	req, err := http.NewRequest(http.MethodDelete, srv.URL+"/ui/session", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-CSRF-Token", info.CSRF)
	res, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("sign-out = %d", res.StatusCode)
	}
	// The stream no longer takes changes; if it did, the change would come before signedout.
	select {
	case src.updates <- Update{Seq: "p2"}:
	case <-time.After(100 * time.Millisecond):
	}
	var got []string
	for ev := range events {
		got = append(got, ev)
	}
	if len(got) != 1 || got[0] != "signedout" {
		t.Errorf("events after the sign-out = %q, want [signedout]", got)
	}
}

// jarClient is an HTTP client with a cookie jar, as a browser has, and its jar.
func jarClient(t *testing.T) (*http.Client, *cookiejar.Jar) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}, jar
}
