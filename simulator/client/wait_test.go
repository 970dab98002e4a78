package client

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fastWait backs off for at most a few milliseconds.
var fastWait = WaitOptions{MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}

func TestWaitStaticLongPoll(t *testing.T) {
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		d, err := time.ParseDuration(q.Get("timeout"))
		if q.Get("wait") != "static" || err != nil || d <= 0 || d > DefaultPollTimeout {
			t.Errorf("query = %q, want wait=static and a timeout up to %s", r.URL.RawQuery, DefaultPollTimeout)
		}
		writeJSON(w, http.StatusOK, machine("RUNNING", true))
	})
	c := newTestClient(t, srv.URL)

	var requests int
	var seen []string
	obj, err := c.WaitStatic(t.Context(), "machines", "abc", WaitOptions{
		Requests:   &requests,
		OnProgress: func(o *Object) { seen = append(seen, o.State) },
	})
	if err != nil || obj.State != "RUNNING" {
		t.Fatalf("WaitStatic() = %+v, %v, want RUNNING", obj, err)
	}
	if requests != 1 || calls.Load() != 1 {
		t.Errorf("Requests = %d (server saw %d), want 1", requests, calls.Load())
	}
	if len(seen) != 1 || seen[0] != "RUNNING" {
		t.Errorf("OnProgress saw %q, want [RUNNING]", seen)
	}
}

// TestWaitStaticWithoutLongPoll has a server that ignores ?wait=static: it answers at once,
// twice in transition and then static, so WaitStatic has to back off between polls.
func TestWaitStaticWithoutLongPoll(t *testing.T) {
	var n atomic.Int32
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			writeJSON(w, http.StatusOK, machine("STOPPING", false))
		case 2:
			writeJSON(w, http.StatusOK, machine("HALTING", false))
		default:
			writeJSON(w, http.StatusOK, machine("HALTED", true))
		}
	})
	c := newTestClient(t, srv.URL)

	opts := fastWait
	var requests int
	var seen []string
	opts.Requests = &requests
	opts.OnProgress = func(o *Object) { seen = append(seen, o.State) }
	obj, err := c.WaitStatic(t.Context(), "machines", "abc", opts)
	if err != nil || obj.State != "HALTED" {
		t.Fatalf("WaitStatic() = %+v, %v, want HALTED", obj, err)
	}
	if requests != 3 {
		t.Errorf("Requests = %d, want 3", requests)
	}
	if want := "STOPPING HALTING HALTED"; strings.Join(seen, " ") != want {
		t.Errorf("OnProgress saw %q, want %q", strings.Join(seen, " "), want)
	}
}

// TestWaitStaticHeldPollNoBackoff has a server that holds each poll for its whole timeout: a
// held poll that ends in transition is followed by the next poll at once, with no backoff (the
// backoff here is an hour, so taking it would fail the test).
func TestWaitStaticHeldPollNoBackoff(t *testing.T) {
	var n atomic.Int32
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			d, _ := time.ParseDuration(r.URL.Query().Get("timeout"))
			time.Sleep(d)
			writeJSON(w, http.StatusOK, machine("STOPPING", false))
			return
		}
		writeJSON(w, http.StatusOK, machine("HALTED", true))
	})
	c := newTestClient(t, srv.URL)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	obj, err := c.WaitStatic(ctx, "machines", "abc", WaitOptions{PollTimeout: 20 * time.Millisecond, MinBackoff: time.Hour})
	if err != nil || obj.State != "HALTED" {
		t.Fatalf("WaitStatic() = %+v, %v, want HALTED without backing off", obj, err)
	}
}

func TestWaitStaticNotFound(t *testing.T) {
	var n atomic.Int32
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			writeJSON(w, http.StatusOK, machine("DESTROYING", false))
			return
		}
		writeError(w, CodeNotFound, "machine abc not found", nil)
	})
	c := newTestClient(t, srv.URL)

	opts := fastWait
	var requests int
	opts.Requests = &requests
	_, err := c.WaitStatic(t.Context(), "machines", "abc", opts)
	if !IsNotFound(err) {
		t.Fatalf("WaitStatic() error = %v, want not_found", err)
	}
	var we *WaitError
	if !errors.As(err, &we) || we.LastState != "DESTROYING" {
		t.Errorf("WaitStatic() error = %#v, want a *WaitError with last state DESTROYING", err)
	}
	if requests != 2 {
		t.Errorf("Requests = %d, want 2: not_found is returned at once", requests)
	}
}

func TestWaitStaticDeadline(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, machine("STOPPING", false))
	})
	c := newTestClient(t, srv.URL)

	// The wait runs to its deadline; the first answer must come before it on a loaded machine
	// (under -race) for the error to name the state.
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err := c.WaitStatic(ctx, "machines", "abc", fastWait)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitStatic() error = %v, want context.DeadlineExceeded", err)
	}
	var we *WaitError
	if !errors.As(err, &we) || we.LastState != "STOPPING" || we.Object == nil || we.Object.ID != "abc" {
		t.Errorf("WaitStatic() error = %#v, want a *WaitError with the last object in STOPPING", err)
	}
	if want := "waiting for machines/abc: last state STOPPING: context deadline exceeded"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

// TestWaitStaticDeadlineDuringLongPoll has a server that holds polls until their timeout, on
// the client's clock: each poll ends before ctx's deadline, so the error still names the state
// seen. The clock moves only as the server holds polls, so no real time passes.
func TestWaitStaticDeadlineDuringLongPoll(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := &testClock{now: t0}
	deadline := t0.Add(time.Second)
	ctx := newDeadlineCtx(t.Context(), deadline)
	var mu sync.Mutex
	var asked []time.Duration
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if !clock.Now().Before(deadline) {
			ctx.expire() // a poll asked at the deadline is cut short by it
			<-r.Context().Done()
			return
		}
		d, _ := time.ParseDuration(r.URL.Query().Get("timeout"))
		mu.Lock()
		asked = append(asked, d)
		mu.Unlock()
		clock.Advance(d) // held until its timeout, then answered
		writeJSON(w, http.StatusOK, machine("DEPLOYING", false))
	})
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Clock = clock })

	_, err := c.WaitStatic(ctx, "machines", "abc", WaitOptions{})
	var we *WaitError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &we) || we.LastState != "DEPLOYING" {
		t.Errorf("WaitStatic() error = %v, want the deadline with last state DEPLOYING", err)
	}
	// Each poll leaves a tenth of what remains (at most 1s) for its answer to arrive.
	want := []time.Duration{900 * time.Millisecond, 90 * time.Millisecond, 9 * time.Millisecond, time.Millisecond}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, want) {
		t.Errorf("the polls asked timeouts %v, want %v (the client's clock measures what the deadline leaves)", asked, want)
	}
}

func TestWaitStaticTransientErrors(t *testing.T) {
	newServer := func(failures int32) (*Client, *atomic.Int32) {
		var n atomic.Int32
		srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) <= failures {
				writeRetryAfter(w, 1) // capped by MaxBackoff
				writeError(w, CodeUnavailable, "restarting", nil)
				return
			}
			writeJSON(w, http.StatusOK, machine("RUNNING", true))
		})
		return newTestClient(t, srv.URL, noRetries), calls
	}

	c, calls := newServer(3)
	obj, err := c.WaitStatic(t.Context(), "machines", "abc", fastWait)
	if err != nil || obj.State != "RUNNING" {
		t.Errorf("WaitStatic() through 3 transient errors = %+v, %v, want RUNNING", obj, err)
	}
	if calls.Load() != 4 {
		t.Errorf("server saw %d requests, want 4", calls.Load())
	}

	c, calls = newServer(3)
	opts := fastWait
	opts.MaxTransientErrors = 2
	_, err = c.WaitStatic(t.Context(), "machines", "abc", opts)
	var we *WaitError
	if !IsUnavailable(err) || !errors.As(err, &we) || we.LastState != "" {
		t.Errorf("WaitStatic() after 3 transient errors, 2 allowed = %v, want unavailable", err)
	}
	if calls.Load() != 3 {
		t.Errorf("server saw %d requests, want 3", calls.Load())
	}
	if want := "waiting for machines/abc: unavailable (503 Service Unavailable): restarting"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestWaitStaticPermanentError(t *testing.T) {
	srv, calls := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, CodeUnauthorized, "bad token", nil)
	})
	c := newTestClient(t, srv.URL)
	if _, err := c.WaitStatic(t.Context(), "machines", "abc", fastWait); !IsUnauthorized(err) {
		t.Errorf("WaitStatic() error = %v, want unauthorized", err)
	}
	if calls.Load() != 1 {
		t.Errorf("server saw %d requests, want 1", calls.Load())
	}
}

func TestWaitStaticCancelled(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, machine("STOPPING", false))
	})
	c := newTestClient(t, srv.URL)

	ctx, cancel := context.WithCancel(t.Context())
	opts := WaitOptions{MinBackoff: time.Hour, OnProgress: func(*Object) { cancel() }}
	_, err := c.WaitStatic(ctx, "machines", "abc", opts)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("WaitStatic() error = %v, want context.Canceled", err)
	}
}

func TestPollTimeout(t *testing.T) {
	if got := pollTimeout(context.Background(), time.Now(), 25*time.Second); got != 25*time.Second {
		t.Errorf("pollTimeout(no deadline, 25s) = %s, want 25s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if got := pollTimeout(ctx, time.Now(), 25*time.Second); got != 25*time.Second {
		t.Errorf("pollTimeout(1m left, 25s) = %s, want 25s", got)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := pollTimeout(ctx, time.Now(), 25*time.Second); got < 8*time.Second || got > 9*time.Second {
		t.Errorf("pollTimeout(10s left, 25s) = %s, want about 9s", got)
	}
	ctx, cancel = context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	if got := pollTimeout(ctx, time.Now(), 25*time.Second); got != time.Millisecond {
		t.Errorf("pollTimeout(past deadline) = %s, want 1ms", got)
	}
}
