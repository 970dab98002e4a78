package dialect_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// testErrors answers as an OpenStack dialect does; its AsError stands in for engine.AsError.
var testErrors = dialect.Errors{
	AsError: func(err error) *wire.Error {
		var we *wire.Error
		if errors.As(err, &we) {
			return we
		}
		return &wire.Error{Code: wire.CodeInternal, Message: "internal error", Err: err}
	},
	Names:      map[wire.Code]string{wire.CodeNotFound: "NotFound", wire.CodeBusy: "InvalidStatus", wire.CodeInvalidTransition: "InvalidStatus"},
	ServerName: "ServerException",
	Body:       dialect.OpenStackBody,
}

func TestErrorsWrite(t *testing.T) {
	tests := []struct {
		name       string
		give       error
		wantStatus int
		wantBody   dialect.OpenStackError
		wantRetry  string
	}{
		{"own error as it is", fmt.Errorf("reading: %w", &dialect.Error{Status: 404, Name: "NOT_FOUND", Message: "lease x not found"}),
			404, dialect.OpenStackError{ErrorCode: 404, ErrorMessage: "lease x not found", ErrorName: "NOT_FOUND"}, ""},
		{"code with its status", wire.Errorf(wire.CodeNotFound, "no such"),
			404, dialect.OpenStackError{ErrorCode: 404, ErrorMessage: "no such", ErrorName: "NotFound"}, ""},
		{"busy is a 409 with Retry-After", &wire.Error{Code: wire.CodeBusy, Message: "busy", RetryAfter: 1500 * time.Millisecond},
			409, dialect.OpenStackError{ErrorCode: 409, ErrorMessage: "busy", ErrorName: "InvalidStatus"}, "2"},
		{"invalid transition is a 409", wire.Errorf(wire.CodeInvalidTransition, "not from ACTIVE"),
			409, dialect.OpenStackError{ErrorCode: 409, ErrorMessage: "not from ACTIVE", ErrorName: "InvalidStatus"}, ""},
		{"code without a name", wire.Errorf(wire.CodeInvalid, "bad date"),
			400, dialect.OpenStackError{ErrorCode: 400, ErrorMessage: "bad date", ErrorName: "ServerException"}, ""},
		{"server error names the request, not the cause", errors.New("disk /var/x: I/O error"),
			500, dialect.OpenStackError{ErrorCode: 500, ErrorMessage: "internal error (request ID req-1 in the server's log)", ErrorName: "ServerException"}, ""},
		{"injected status kept, message as it is", &wire.Error{Code: wire.CodeUnavailable, Status: 503, Message: "injected"},
			503, dialect.OpenStackError{ErrorCode: 503, ErrorMessage: "injected", ErrorName: "ServerException"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rec.Header().Set(wire.HeaderRequestID, "req-1")
			testErrors.Write(rec, tt.give)
			var got dialect.OpenStackError
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tt.wantStatus || got != tt.wantBody {
				t.Errorf("Write(%v) = %d %+v, want %d %+v", tt.give, rec.Code, got, tt.wantStatus, tt.wantBody)
			}
			if ra := rec.Header().Get("Retry-After"); ra != tt.wantRetry {
				t.Errorf("Write(%v) Retry-After = %q, want %q", tt.give, ra, tt.wantRetry)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
	rec := httptest.NewRecorder()
	dialect.Errors{AsError: testErrors.AsError, Body: func(_ int, _, msg string) any { return map[string]string{"message": msg} }}.
		Write(rec, &dialect.Error{Status: http.StatusForbidden, Message: "admin token"})
	if rec.Code != 403 || rec.Body.String() != "{\"message\":\"admin token\"}\n" {
		t.Errorf("a body without names = %d %q", rec.Code, rec.Body)
	}
}
