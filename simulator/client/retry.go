package client

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// retryAfter parses a Retry-After header: seconds, or an HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// retryPolicy retries connection errors, 429, 5xx except 501, and 409 (busy: an action is
// running on the object) unless the context says the caller waits for the object itself. It
// never retries other 4xx, invalid_transition above all.
func retryPolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		// Connection errors are retried; bad schemes, redirect loops and TLS trust are not.
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	if resp.StatusCode == StatusOf(CodeBusy) && ctx.Value(noBusyRetryKey{}) != nil {
		return false, nil
	}
	return retryableStatus(resp.StatusCode), nil
}

type noBusyRetryKey struct{}

// NewIdempotencyKey returns a new random Idempotency-Key.
func NewIdempotencyKey() string { return crand.Text() }

type idempotencyKey struct{}

// WithIdempotencyKey returns a context whose POST, PATCH and DELETE requests carry key as their
// Idempotency-Key (instead of one new key per call): a caller that lost a create's answer (an
// interrupt cancelled it in flight) sends the same request again with the same key and gets
// the object the first made, if it was made, instead of a second one.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// WithoutBusyRetry returns a context whose requests answer busy at once instead of retrying
// after Retry-After: for a caller that, told the object is busy, waits for it to be static
// (a long-poll wakes as soon as the running action lands; retries wait the server's estimate).
func WithoutBusyRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, noBusyRetryKey{}, true)
}

func retryableStatus(status int) bool {
	switch {
	case status == http.StatusTooManyRequests, status == StatusOf(CodeBusy):
		return true
	case status == 0, status >= 500 && status != http.StatusNotImplemented:
		return true
	}
	return false
}

// backoff waits what the server's Retry-After asks (capped by maxWait), or else a capped
// exponential backoff with jitter.
func backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := retryAfter(resp.Header); ok {
			return min(d, maxWait)
		}
	}
	return jitter(expBackoff(minWait, maxWait, attempt))
}

// expBackoff is minWait·2^attempt, capped by maxWait.
func expBackoff(minWait, maxWait time.Duration, attempt int) time.Duration {
	d := minWait
	for range attempt {
		if d >= maxWait/2 {
			return maxWait
		}
		d *= 2
	}
	return min(d, maxWait)
}

// jitter spreads d over [d/2, d] so that clients retrying together do not stay in step.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// lastAnswer runs when the retries are spent or a request cannot be retried: it hands back the
// last HTTP answer, so do turns it into the *Error callers match, or the transport error.
func lastAnswer(resp *http.Response, err error, attempts int) (*http.Response, error) {
	if resp != nil && err == nil {
		return resp, nil
	}
	if resp != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes))
		resp.Body.Close()
	}
	if err == nil {
		return nil, fmt.Errorf("giving up after %d attempts", attempts)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		retryable, _ := retryablehttp.DefaultRetryPolicy(context.Background(), nil, err)
		return nil, &transportError{
			method: strings.ToUpper(ue.Op), url: ue.URL, attempts: attempts,
			retryable: retryable, err: ue.Err,
		}
	}
	return nil, err
}

// transportError is a request that got no HTTP answer at all.
type transportError struct {
	method, url string
	attempts    int
	retryable   bool // a connection error, not a bad URL or an untrusted certificate
	err         error
}

func (e *transportError) Error() string {
	s := fmt.Sprintf("%s %s: %v", e.method, e.url, e.err)
	if e.attempts > 1 {
		s += fmt.Sprintf(" (gave up after %d attempts)", e.attempts)
	}
	return s
}

func (e *transportError) Unwrap() error { return e.err }

type requestCounterKey struct{}

// withRequestCounter makes every HTTP request sent under ctx, retries included, add one to *n.
// The hook runs on the goroutine of the call, so n needs no lock while one call uses it.
func withRequestCounter(ctx context.Context, n *int) context.Context {
	if n == nil {
		return ctx
	}
	return context.WithValue(ctx, requestCounterKey{}, n)
}

func countRequest(_ retryablehttp.Logger, req *http.Request, _ int) {
	if n, ok := req.Context().Value(requestCounterKey{}).(*int); ok {
		*n++
	}
}
