package simulator

import (
	"errors"
	"fmt"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// Error is an API error: a code (mapped to one HTTP status by client.StatusOf), a message that
// says what to do, and optional details.
type Error struct {
	Code       client.Code
	Message    string
	Details    any
	RetryAfter time.Duration
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

func errorf(code client.Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// asAPIError turns any error into an API error: lifecycle's typed errors keep their meaning,
// store sentinels map to codes, anything else is internal.
func asAPIError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var it *lifecycle.InvalidTransitionError
	if errors.As(err, &it) {
		return &Error{Code: client.CodeInvalidTransition, Message: it.Error(),
			Details: client.TransitionDetails{Kind: it.Kind, State: it.From, Action: it.Action, Allowed: nonNil(it.Allowed)}}
	}
	var ua *lifecycle.UnknownActionError
	if errors.As(err, &ua) {
		return &Error{Code: client.CodeInvalid, Message: ua.Error()}
	}
	var fe *lifecycle.FieldError
	if errors.As(err, &fe) {
		if fe.State != "" {
			return &Error{Code: client.CodeInvalidTransition, Message: fe.Error(),
				Details: client.TransitionDetails{Kind: fe.Kind, State: fe.State, Action: "update", Allowed: []string{}}}
		}
		return &Error{Code: client.CodeInvalid, Message: fe.Error(), Details: map[string]string{"field": "spec." + fe.Field}}
	}
	var uk *lifecycle.UnknownKindError
	if errors.As(err, &uk) {
		return &Error{Code: client.CodeNotFound, Message: uk.Error()}
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return errorf(client.CodeNotFound, "not found")
	case errors.Is(err, ErrVersion):
		return errorf(client.CodeConflict, "the object changed; read it again and retry")
	}
	return &Error{Code: client.CodeInternal, Message: err.Error()}
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
