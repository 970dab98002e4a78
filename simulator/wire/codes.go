package wire

import "net/http"

// Code is an API error code.
type Code string

// The API's error codes. Each maps to one HTTP status (StatusOf) and back (CodeOf).
const (
	CodeNotFound          Code = "not_found"
	CodeBusy              Code = "busy"
	CodeInvalidTransition Code = "invalid_transition"
	CodeConflict          Code = "conflict"
	CodeInvalid           Code = "invalid"
	CodeUnauthorized      Code = "unauthorized"
	CodeRateLimited       Code = "rate_limited"
	CodeUnavailable       Code = "unavailable"
	CodeInternal          Code = "internal"
	// CodeForbidden: the caller is known but may not do this (a simulator-wide control
	// without the admin token, a tenant over its object quota or fault-rule cap).
	CodeForbidden Code = "forbidden"
	// CodeTooLarge: the request body is over the server's limit.
	CodeTooLarge Code = "too_large"
	// CodeCanceled: the client went away before the answer; nobody reads it (499).
	CodeCanceled Code = "canceled"
	// CodeKeyReused: an Idempotency-Key sent again with another body (422, like
	// invalid_transition: CodeOf(422) gives invalid_transition).
	CodeKeyReused Code = "idempotency_key_reused"
)

var codeStatus = map[Code]int{
	CodeNotFound:          http.StatusNotFound,
	CodeBusy:              http.StatusConflict,
	CodeInvalidTransition: http.StatusUnprocessableEntity,
	CodeConflict:          http.StatusPreconditionFailed,
	CodeInvalid:           http.StatusBadRequest,
	CodeUnauthorized:      http.StatusUnauthorized,
	CodeRateLimited:       http.StatusTooManyRequests,
	CodeUnavailable:       http.StatusServiceUnavailable,
	CodeInternal:          http.StatusInternalServerError,
	CodeForbidden:         http.StatusForbidden,
	CodeTooLarge:          http.StatusRequestEntityTooLarge,
	CodeCanceled:          StatusClientClosedRequest,
	CodeKeyReused:         http.StatusUnprocessableEntity,
}

// StatusClientClosedRequest is the status recorded (in logs and metrics) for a request whose
// client went away first, as nginx's 499; no client ever reads it.
const StatusClientClosedRequest = 499

// StatusOf is the HTTP status the server answers a code with.
func StatusOf(c Code) int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// CodeOf is the code an HTTP status stands for, for answers without an error body.
func CodeOf(status int) Code {
	if status == http.StatusUnprocessableEntity {
		return CodeInvalidTransition // shared with idempotency_key_reused, the rarer one
	}
	for c, s := range codeStatus {
		if s == status {
			return c
		}
	}
	if status >= 500 {
		return CodeInternal
	}
	return CodeInvalid
}

// TransitionDetails are the details of an invalid_transition error.
type TransitionDetails struct {
	Kind    string   `json:"kind"`
	State   string   `json:"state"`
	Action  string   `json:"action"`
	Allowed []string `json:"allowed"`
	// BlockedBy is the ID of the related object (an ancestor, a linked object) whose state
	// refused the action, and Need the states it must be in; empty when the object itself
	// refused it.
	BlockedBy string   `json:"blocked_by,omitempty"`
	Need      []string `json:"need,omitempty"`
	// InUseBy are the IDs of objects (at most ten) whose refusing link (`delete: refuse`)
	// names the object a removal was refused of: they must be deleted, or name another
	// object, first.
	InUseBy []string `json:"in_use_by,omitempty"`
	// Dependents are the objects (at most ten) a removal was refused for: live children
	// whose parent relation says `delete: refuse` (Via parent_id) and objects whose refusing
	// link names the object (Via the link's field). Each must be gone, or name another
	// object, before the object can be removed. Empty for other refusals.
	Dependents []Dependent `json:"dependents,omitempty"`
}

// Dependent is an object that keeps another from being removed (TransitionDetails.Dependents).
type Dependent struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	State string `json:"state"`
	// Via is the dependent's field that names the object: parent_id for a child, the link's
	// field for a linking object.
	Via string `json:"via"`
}

// ViaParent is Dependent.Via for a child (its parent_id names the object).
const ViaParent = "parent_id"

// NDJSON is the media type of an answer that streams, one JSON document a line: a create, an
// action or a delete sent with ?wait=static.
const NDJSON = "application/x-ndjson"

// Fault modes (FaultRule.Mode).
const (
	FaultFail      = "fail"
	FaultHang      = "hang"
	FaultSlow      = "slow"
	FaultHTTPError = "http_error"
	FaultDrop      = "drop"
)
