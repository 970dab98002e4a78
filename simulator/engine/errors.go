package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Error is the API's one error type (wire.Error): a wire code (the HTTP layer maps it to its
// one status with wire.StatusOf), a message that says what to do, optional details, and how
// long to wait before a retry (busy). Every error the engine returns to a request is one, or
// becomes one through AsError.
type Error = wire.Error

func errorf(code wire.Code, format string, args ...any) *Error {
	return wire.Errorf(code, format, args...)
}

// storeRetryAfter is how long a client waits before it retries a request the store could not
// serve (an outage: the database unreachable, the disk full).
const storeRetryAfter = time.Second

// AsError turns any error into an API error, at the engine's edge: one the engine made keeps
// its code, lifecycle's typed errors keep their meaning, store sentinels map to codes, a store
// outage (store.ErrUnavailable) is unavailable with a Retry-After, and anything else is
// internal. The last two keep their cause in Err, for the log, and answer no internal text.
func AsError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var it *lifecycle.InvalidTransitionError
	if errors.As(err, &it) {
		return &Error{Code: wire.CodeInvalidTransition, Message: it.Error(),
			Details: wire.TransitionDetails{Kind: it.Kind, State: it.From, Action: it.Action, Allowed: nonNil(it.Allowed)}}
	}
	var ua *lifecycle.UnknownActionError
	if errors.As(err, &ua) {
		return &Error{Code: wire.CodeInvalid, Message: ua.Error()}
	}
	var fe *lifecycle.FieldError
	if errors.As(err, &fe) {
		if fe.State != "" {
			return &Error{Code: wire.CodeInvalidTransition, Message: fe.Error(),
				Details: wire.TransitionDetails{Kind: fe.Kind, State: fe.State, Action: "update", Allowed: []string{}}}
		}
		return &Error{Code: wire.CodeInvalid, Message: fe.Error(), Details: map[string]string{"field": "spec." + fe.Field}}
	}
	var uk *lifecycle.UnknownKindError
	if errors.As(err, &uk) {
		return &Error{Code: wire.CodeNotFound, Message: uk.Error()}
	}
	var qe *store.QuotaError
	if errors.As(err, &qe) {
		return quotaError(qe)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(wire.CodeNotFound, "not found")
	case errors.Is(err, store.ErrVersion):
		return errorf(wire.CodeConflict, "the object changed; read it again and retry")
	}
	if errors.Is(err, store.ErrUnavailable) {
		return &Error{Code: wire.CodeUnavailable, Message: "the store cannot serve this request now (not the request's fault); retry after Retry-After",
			RetryAfter: storeRetryAfter, Err: err}
	}
	return &Error{Code: wire.CodeInternal, Message: "internal error: the server failed on this request", Err: err}
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// quotaError is the refusal of a request that would take its tenant past the object quota: it
// names the quota, how many objects the request makes and how many are left.
func quotaError(q *store.QuotaError) *Error {
	left := max(q.Max-q.Held, 0)
	return &Error{Code: wire.CodeForbidden,
		Message: fmt.Sprintf("object quota (max_objects %d): this request makes %d objects, the tenant holds %d, so %d are left; delete some first or ask for fewer",
			q.Max, q.Asked, q.Held, left),
		Details: map[string]string{"quota": "max_objects", "limit": fmt.Sprint(q.Max), "asked": fmt.Sprint(q.Asked),
			"held": fmt.Sprint(q.Held), "left": fmt.Sprint(left)}}
}
