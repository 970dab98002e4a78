package client

import (
	"context"
	"errors"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Code is an API error code (see package wire).
type Code = wire.Code

// The API's error codes. Each maps to one HTTP status (StatusOf) and back (CodeOf).
const (
	CodeNotFound          = wire.CodeNotFound
	CodeBusy              = wire.CodeBusy
	CodeInvalidTransition = wire.CodeInvalidTransition
	CodeConflict          = wire.CodeConflict
	CodeInvalid           = wire.CodeInvalid
	CodeUnauthorized      = wire.CodeUnauthorized
	CodeRateLimited       = wire.CodeRateLimited
	CodeUnavailable       = wire.CodeUnavailable
	CodeInternal          = wire.CodeInternal
	CodeForbidden         = wire.CodeForbidden
	CodeTooLarge          = wire.CodeTooLarge
	CodeCanceled          = wire.CodeCanceled
	CodeKeyReused         = wire.CodeKeyReused
)

// StatusClientClosedRequest is the status recorded (in logs and metrics) for a request whose
// client went away first, as nginx's 499; no client ever reads it.
const StatusClientClosedRequest = wire.StatusClientClosedRequest

// StatusOf is the HTTP status the server answers a code with.
func StatusOf(c Code) int { return wire.StatusOf(c) }

// CodeOf is the code an HTTP status stands for, for answers without an error body.
func CodeOf(status int) Code { return wire.CodeOf(status) }

// Error is a failed API call: the API's one error type (wire.Error), with the answer's
// Status, its Details as raw JSON (json.RawMessage), the server's Retry-After hint and the
// request's ID (quote it to find the server's log line of a 5xx). Match it with errors.As, or
// the Is* helpers; Transition decodes an invalid_transition's details.
type Error = wire.Error

// TransitionDetails are the details of an invalid_transition error.
type TransitionDetails = wire.TransitionDetails

// Dependent is an object a removal was refused for (TransitionDetails.Dependents).
type Dependent = wire.Dependent

// ViaParent is Dependent.Via for a child.
const ViaParent = wire.ViaParent

// HasCode reports whether err is an API error with code c.
func HasCode(err error, c Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == c
}

// IsNotFound reports whether err says the object does not exist (or belongs to another tenant).
func IsNotFound(err error) bool { return HasCode(err, CodeNotFound) }

// IsBusy reports whether err says another action is running on the object: transient.
func IsBusy(err error) bool { return HasCode(err, CodeBusy) }

// IsInvalidTransition reports whether err says the action is not allowed from the object's
// state: permanent, never retried.
func IsInvalidTransition(err error) bool { return HasCode(err, CodeInvalidTransition) }

// IsConflict reports whether err says the If-Match version did not match.
func IsConflict(err error) bool { return HasCode(err, CodeConflict) }

// IsInvalid reports whether err says the request itself was malformed or out of range.
func IsInvalid(err error) bool { return HasCode(err, CodeInvalid) }

// IsUnauthorized reports whether err says the token is missing or wrong.
func IsUnauthorized(err error) bool { return HasCode(err, CodeUnauthorized) }

// IsRateLimited reports whether err says the caller sent too many requests: transient.
func IsRateLimited(err error) bool { return HasCode(err, CodeRateLimited) }

// IsUnavailable reports whether err says the server cannot serve now: transient.
func IsUnavailable(err error) bool { return HasCode(err, CodeUnavailable) }

// IsInternal reports whether err says the server failed: transient.
func IsInternal(err error) bool { return HasCode(err, CodeInternal) }

// IsForbidden reports whether err says the caller may not do this (admin token, quota).
func IsForbidden(err error) bool { return HasCode(err, CodeForbidden) }

// IsTooLarge reports whether err says the request body was over the server's limit.
func IsTooLarge(err error) bool { return HasCode(err, CodeTooLarge) }

// IsKeyReused reports whether err says an Idempotency-Key was sent again with another body.
func IsKeyReused(err error) bool { return HasCode(err, CodeKeyReused) }

// IsCanceled reports whether err is the answer to a request whose client went away.
func IsCanceled(err error) bool { return HasCode(err, CodeCanceled) }

// IsTransient reports whether err may go away by itself: busy, rate_limited, unavailable,
// internal (any 5xx but 501), or a connection error. The client already retries these;
// IsTransient lets a caller decide whether to go on through a longer outage. Context errors
// are not transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		switch e.Code {
		case CodeBusy, CodeRateLimited, CodeUnavailable, CodeInternal:
			return true
		}
		return retryableStatus(e.Status)
	}
	var te *transportError
	return errors.As(err, &te) && te.retryable
}

// errorOf is an error envelope's error, answered with status.
func errorOf(b ErrorBody, status int) *Error {
	e := &Error{Status: status, Code: Code(b.Error.Code), Message: b.Error.Message, RequestID: b.Error.RequestID}
	if len(b.Error.Details) > 0 {
		e.Details = b.Error.Details
	}
	return e
}
