package dialect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// InjectedError is the answer of an http_error fault rule that matched a dialect's request:
// the rule's status, code and message (or one that names the rule).
func InjectedError(f *wire.FaultRule) error {
	msg := f.Message
	if msg == "" {
		msg = "injected HTTP error (fault " + f.ID + ")"
	}
	return &wire.Error{Status: f.HTTPStatus, Code: wire.Code(f.Code), Message: msg}
}

type tenantKey struct{}

// WithTenant is r carrying the caller's tenant, which a dialect's ServeHTTP resolved, to its
// routes (Tenant).
func WithTenant(r *http.Request, tenant string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), tenantKey{}, tenant))
}

// Tenant is the tenant WithTenant put in r ("" for none).
func Tenant(r *http.Request) string {
	t, _ := r.Context().Value(tenantKey{}).(string)
	return t
}

// Body is how a dialect reads a JSON request body (unknown keys are ignored, as the seed
// systems ignore them) and names what it refuses.
type Body struct {
	// Limit bounds the body, in bytes: a larger one is a 413 that names the limit.
	Limit int64
	// TooLarge and Malformed are the dialect's names for a body over Limit and for one that is
	// not JSON (empty in a dialect whose errors have no names).
	TooLarge, Malformed string
	// Empty is the error for an empty body; nil lets the caller check what it needs.
	Empty error
}

// Decode reads r's body into v.
func (b Body) Decode(w http.ResponseWriter, r *http.Request, v any) error {
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, b.Limit)).Decode(v)
	var mb *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mb):
		return &Error{Status: http.StatusRequestEntityTooLarge, Name: b.TooLarge,
			Message: fmt.Sprintf("the request body is over the limit of %d bytes", mb.Limit)}
	case errors.Is(err, io.EOF):
		return b.Empty
	}
	return &Error{Status: http.StatusBadRequest, Name: b.Malformed, Message: fmt.Sprintf("invalid JSON body: %v", err)}
}
