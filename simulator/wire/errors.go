package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// HeaderRequestID is the header every answer carries its request's ID in: the client's own
// when it sent a valid one, else one the server made. The server's log lines of the request
// carry it too.
const HeaderRequestID = "X-Request-Id"

// Error is the API's one error type: the engine returns it, the HTTP layer answers it (with
// its code's status, StatusOf, unless Status says otherwise), and the client returns it
// decoded from the answer. Match it with errors.As and its Code, never its message.
type Error struct {
	// Status is the HTTP status of the answer: set by the client from the answer, and by the
	// server only for an answer whose status is not its code's (an injected HTTP error).
	Status  int
	Code    Code
	Message string
	// Details are the error's details: on the server any value (encoded into the answer's
	// details), in the client the answer's raw JSON (json.RawMessage).
	Details any
	// RetryAfter is how long to wait before a retry (busy, rate_limited, unavailable); the
	// answer's Retry-After.
	RetryAfter time.Duration
	// RequestID is the request's ID (HeaderRequestID), which the client records from the
	// answer: the server's log lines of the request carry it.
	RequestID string
	// Err is the cause of a server error, for the server's log: it is never answered.
	Err error
}

// Errorf is an error with a code and a message that says what to do.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (%d %s): %s", e.Code, e.Status, http.StatusText(e.Status), e.Message)
	}
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the cause of a server error (nil for the client's errors).
func (e *Error) Unwrap() error { return e.Err }

// Transition returns the details of an invalid_transition error: the object's state and the
// actions allowed from it. ok is false for other errors or when the details do not decode.
func (e *Error) Transition() (d TransitionDetails, ok bool) {
	if e.Code != CodeInvalidTransition || e.Details == nil {
		return d, false
	}
	switch v := e.Details.(type) {
	case TransitionDetails:
		return v, true
	case *TransitionDetails:
		return *v, v != nil
	case json.RawMessage:
		if len(v) == 0 || json.Unmarshal(v, &d) != nil {
			return TransitionDetails{}, false
		}
		return d, true
	}
	return d, false
}
