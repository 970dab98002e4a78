package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

var allCodes = []Code{
	CodeNotFound, CodeBusy, CodeInvalidTransition, CodeConflict, CodeInvalid,
	CodeUnauthorized, CodeRateLimited, CodeUnavailable, CodeInternal,
	CodeForbidden, CodeTooLarge, CodeCanceled, CodeKeyReused,
}

func TestStatusOfCodeOf(t *testing.T) {
	tests := []struct {
		give Code
		want int
	}{
		{CodeNotFound, http.StatusNotFound},
		{CodeBusy, http.StatusConflict},
		{CodeInvalidTransition, http.StatusUnprocessableEntity},
		{CodeConflict, http.StatusPreconditionFailed},
		{CodeInvalid, http.StatusBadRequest},
		{CodeUnauthorized, http.StatusUnauthorized},
		{CodeRateLimited, http.StatusTooManyRequests},
		{CodeUnavailable, http.StatusServiceUnavailable},
		{CodeInternal, http.StatusInternalServerError},
		{CodeForbidden, http.StatusForbidden},
		{CodeTooLarge, http.StatusRequestEntityTooLarge},
		{CodeCanceled, StatusClientClosedRequest},
		{CodeKeyReused, http.StatusUnprocessableEntity},
	}
	if len(tests) != len(allCodes) {
		t.Fatalf("the table covers %d codes, want all %d", len(tests), len(allCodes))
	}
	for _, tt := range tests {
		if got := StatusOf(tt.give); got != tt.want {
			t.Errorf("StatusOf(%q) = %d, want %d", tt.give, got, tt.want)
		}
		if got := CodeOf(tt.want); got != tt.give && tt.give != CodeKeyReused {
			t.Errorf("CodeOf(%d) = %q, want %q", tt.want, got, tt.give)
		}
	}

	fallbacks := []struct {
		give int
		want Code
	}{
		{http.StatusBadGateway, CodeInternal},
		{http.StatusGatewayTimeout, CodeInternal},
		{http.StatusTeapot, CodeInvalid},
		{http.StatusMethodNotAllowed, CodeInvalid},
	}
	for _, tt := range fallbacks {
		if got := CodeOf(tt.give); got != tt.want {
			t.Errorf("CodeOf(%d) = %q, want %q", tt.give, got, tt.want)
		}
	}
	if got := StatusOf("no_such_code"); got != http.StatusInternalServerError {
		t.Errorf("StatusOf(%q) = %d, want 500", "no_such_code", got)
	}
}

// helpers maps each code to its Is* helper; every code has exactly one.
var helpers = map[Code]func(error) bool{
	CodeNotFound:          IsNotFound,
	CodeBusy:              IsBusy,
	CodeInvalidTransition: IsInvalidTransition,
	CodeConflict:          IsConflict,
	CodeInvalid:           IsInvalid,
	CodeUnauthorized:      IsUnauthorized,
	CodeRateLimited:       IsRateLimited,
	CodeUnavailable:       IsUnavailable,
	CodeInternal:          IsInternal,
	CodeForbidden:         IsForbidden,
	CodeTooLarge:          IsTooLarge,
	CodeCanceled:          IsCanceled,
	CodeKeyReused:         IsKeyReused,
}

// TestErrorRoundTrip has the server answer each code's envelope at StatusOf(code) and checks
// the client's *Error and that exactly the matching helper recognises it.
func TestErrorRoundTrip(t *testing.T) {
	transient := map[Code]bool{CodeBusy: true, CodeRateLimited: true, CodeUnavailable: true, CodeInternal: true}
	for _, code := range allCodes {
		t.Run(string(code), func(t *testing.T) {
			details := map[string]string{"hint": "h-" + string(code)}
			srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				writeError(w, code, "message for "+string(code), details)
			})
			c := newTestClient(t, srv.URL, noRetries)

			_, err := c.Get(t.Context(), "machines", "abc")
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Get() error = %v (%T), want *Error", err, err)
			}
			if e.Code != code || e.Status != StatusOf(code) || e.Message != "message for "+string(code) {
				t.Errorf("Get() error = %+v, want code %q, status %d and the server's message", e, code, StatusOf(code))
			}
			if want := `{"hint":"h-` + string(code) + `"}`; fmt.Sprintf("%s", e.Details) != want {
				t.Errorf("Details = %s, want %s", e.Details, want)
			}
			if !HasCode(err, code) {
				t.Errorf("HasCode(err, %q) = false, want true", code)
			}
			for c, is := range helpers {
				if got, want := is(err), c == code; got != want {
					t.Errorf("helper for %q on a %q error = %v, want %v", c, code, got, want)
				}
				// Wrapping must not hide the code.
				if got, want := is(fmt.Errorf("context: %w", err)), c == code; got != want {
					t.Errorf("helper for %q on a wrapped %q error = %v, want %v", c, code, got, want)
				}
			}
			if got := IsTransient(err); got != transient[code] {
				t.Errorf("IsTransient(%q error) = %v, want %v", code, got, transient[code])
			}
		})
	}
	if len(helpers) != len(allCodes) {
		t.Errorf("%d helpers for %d codes", len(helpers), len(allCodes))
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	srv, n := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>\n  <body>Bad Gateway from the proxy</body>\n</html>\n"))
	})
	c := newTestClient(t, srv.URL)

	_, err := c.Get(t.Context(), "machines", "abc")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Get() error = %v (%T), want *Error", err, err)
	}
	if e.Status != http.StatusBadGateway || e.Code != CodeInternal {
		t.Errorf("Get() error = %+v, want status 502 and code internal", e)
	}
	if !strings.Contains(e.Message, "<body>Bad Gateway from the proxy</body>") {
		t.Errorf("Message = %q, want the body's text", e.Message)
	}
	// 502 is retried; after the retries the last answer is still an *Error.
	if got := n.Load(); got != 4 {
		t.Errorf("server saw %d requests, want 4 (1 + RetryMax 3)", got)
	}
}

func TestEmptyErrorBody(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	})
	c := newTestClient(t, srv.URL)
	_, err := c.Get(t.Context(), "machines", "abc")
	if !IsNotFound(err) {
		t.Fatalf("Get() error = %v, want not_found from the bare 404", err)
	}
	if want := "not_found (404 Not Found): empty response body"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestErrorTransition(t *testing.T) {
	want := TransitionDetails{Kind: "machine", State: "HALTED", Action: "pause", Allowed: []string{"start", "delete"}}
	srv, n := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, CodeInvalidTransition, "cannot pause a HALTED machine", want)
	})
	c := newTestClient(t, srv.URL)

	_, err := c.Act(t.Context(), "machines", "abc", "pause", ActionRequest{})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Act() error = %v, want *Error", err)
	}
	got, ok := e.Transition()
	if !ok || got.State != want.State || got.Action != want.Action || strings.Join(got.Allowed, ",") != "start,delete" {
		t.Errorf("Transition() = %+v, %v, want %+v, true", got, ok, want)
	}
	if n.Load() != 1 {
		t.Errorf("server saw %d requests, want 1: invalid_transition is never retried", n.Load())
	}
	if _, ok := (&Error{Code: CodeBusy, Details: e.Details}).Transition(); ok {
		t.Error("Transition() on a busy error = ok, want not ok")
	}
}

func TestIsTransientOther(t *testing.T) {
	tests := []struct {
		name string
		give error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"canceled", context.Canceled, false},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), false},
		{"connection", &transportError{retryable: true, err: errors.New("connection refused")}, true},
		{"bad scheme", &transportError{retryable: false, err: errors.New("unsupported protocol scheme")}, false},
		{"bare 504", &Error{Status: http.StatusGatewayTimeout, Code: "gateway"}, true},
		{"501", &Error{Status: http.StatusNotImplemented, Code: "not_implemented"}, false},
	}
	for _, tt := range tests {
		if got := IsTransient(tt.give); got != tt.want {
			t.Errorf("IsTransient(%s: %v) = %v, want %v", tt.name, tt.give, got, tt.want)
		}
	}
}
