package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Defaults of WaitOptions.
const (
	DefaultPollTimeout        = 25 * time.Second
	DefaultMinBackoff         = 200 * time.Millisecond
	DefaultMaxBackoff         = 5 * time.Second
	DefaultMaxTransientErrors = 3
)

// heldPoll is how long an answer must have taken to show that the server held the long poll
// (rather than ignoring ?wait=static), whatever the poll's timeout.
const heldPoll = time.Second

// WaitOptions tunes WaitStatic. The zero value uses the defaults.
type WaitOptions struct {
	// PollTimeout is the longest one long poll may be held by the server; it is shortened to
	// fit the context's deadline. Zero means DefaultPollTimeout.
	PollTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between polls when the server answers without
	// holding the poll, and after transient errors. Zero means the defaults.
	MinBackoff, MaxBackoff time.Duration
	// MaxTransientErrors is how many transient errors in a row (after the client's own
	// retries) are tolerated: 0 means DefaultMaxTransientErrors, negative means none.
	MaxTransientErrors int
	// OnProgress, when set, is called with the first answer and then whenever the object's
	// state changes, on the caller's goroutine.
	OnProgress func(*Object)
	// Requests, when set, has the number of HTTP requests WaitStatic sent (retries included)
	// added to it, so callers can report requests per transition.
	Requests *int
}

func (o WaitOptions) withDefaults() WaitOptions {
	if o.PollTimeout <= 0 {
		o.PollTimeout = DefaultPollTimeout
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	switch {
	case o.MaxTransientErrors == 0:
		o.MaxTransientErrors = DefaultMaxTransientErrors
	case o.MaxTransientErrors < 0:
		o.MaxTransientErrors = 0
	}
	return o
}

// WaitError is a wait that ended before the object was static: the context ended, the object
// is gone (IsNotFound), or an error that is not transient (or too many transient ones). It
// unwraps to the cause, so errors.Is(err, context.DeadlineExceeded) and IsNotFound work.
type WaitError struct {
	// Collection and ID name the object waited for.
	Collection, ID string
	// LastState is the last state seen; empty when no answer came.
	LastState string
	// Object is the last answer, or nil.
	Object *Object
	// Err is the cause.
	Err error
}

func (e *WaitError) Error() string {
	if e.LastState == "" {
		return fmt.Sprintf("waiting for %s/%s: %v", e.Collection, e.ID, e.Err)
	}
	return fmt.Sprintf("waiting for %s/%s: last state %s: %v", e.Collection, e.ID, e.LastState, e.Err)
}

// Unwrap returns the cause.
func (e *WaitError) Unwrap() error { return e.Err }

// WaitStatic waits until the object is in a static state (Object.Static) and returns it. A
// static state may be an error state or not the one wanted: the caller judges it against the
// kind.
//
// It long-polls (GET ?wait=static&timeout=...), each poll held at most opts.PollTimeout and
// ending before ctx's deadline. When the server answers a poll at once with the object still
// in transition (it does not long-poll), WaitStatic polls with capped exponential backoff and
// jitter instead. Transient errors (busy, 429, 5xx, connection errors) are tolerated up to
// opts.MaxTransientErrors in a row, waiting Retry-After or a backoff between them.
//
// It fails with a *WaitError: at once with not_found when the object is gone (after a destroy
// that is success: check IsNotFound), and with ctx.Err() naming the last state seen when ctx
// ends.
func (c *Client) WaitStatic(ctx context.Context, collection, id string, opts WaitOptions) (*Object, error) {
	return c.waitStatic(ctx, collection, id, opts, nil)
}

// waitStatic is WaitStatic going on from last, the object as last seen (nil for none).
func (c *Client) waitStatic(ctx context.Context, collection, id string, opts WaitOptions, last *Object) (*Object, error) {
	p, err := objectPath(collection, id)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	ctx = withRequestCounter(ctx, opts.Requests)

	fail := func(err error) (*Object, error) {
		we := &WaitError{Collection: collection, ID: id, Object: last, Err: err}
		if last != nil {
			we.LastState = last.State
		}
		return nil, we
	}
	transient, early := 0, 0 // errors in a row; answers in a row the server did not hold
	for {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		timeout := pollTimeout(ctx, c.clock.Now(), opts.PollTimeout)
		q := url.Values{"wait": {"static"}, "timeout": {timeout.String()}}
		obj := new(Object)
		start := c.clock.Now()
		_, err := c.do(ctx, request{method: http.MethodGet, path: p, query: q, out: obj})
		held := c.clock.Now().Sub(start)
		if err != nil {
			if ctx.Err() != nil {
				return fail(ctx.Err())
			}
			if IsNotFound(err) || !IsTransient(err) || transient >= opts.MaxTransientErrors {
				return fail(err)
			}
			wait := jitter(expBackoff(opts.MinBackoff, opts.MaxBackoff, transient))
			if e := (*Error)(nil); errors.As(err, &e) && e.RetryAfter > 0 {
				wait = min(e.RetryAfter, opts.MaxBackoff)
			}
			transient++
			if err := sleep(ctx, wait); err != nil {
				return fail(err)
			}
			continue
		}
		transient = 0
		if opts.OnProgress != nil && (last == nil || obj.State != last.State) {
			opts.OnProgress(obj)
		}
		last = obj
		if obj.Static {
			return obj, nil
		}
		if held >= timeout*9/10 || held >= heldPoll {
			early = 0 // the server held the poll: ask again at once
			continue
		}
		if err := sleep(ctx, jitter(expBackoff(opts.MinBackoff, opts.MaxBackoff, early))); err != nil {
			return fail(err)
		}
		early++
	}
}

// pollTimeout is how long the server may hold the next poll, asked at now: at most limit, and
// ending a little before ctx's deadline so that the answer (and the state it carries) arrives
// in time.
func pollTimeout(ctx context.Context, now time.Time, limit time.Duration) time.Duration {
	d := limit
	if dl, ok := ctx.Deadline(); ok {
		rem := dl.Sub(now)
		rem -= min(rem/10, time.Second)
		d = min(d, rem)
	}
	return max(d, time.Millisecond).Round(time.Millisecond)
}

// sleep waits d, or less when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
