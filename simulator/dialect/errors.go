package dialect

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Error is an error a dialect makes itself (an ID it does not hold, a body it refuses): it is
// answered with its status, name and message as they are.
type Error struct {
	Status int
	// Name is the dialect's name for the error (Blazar's exception, Sahara's error name);
	// empty in a dialect whose errors have none (CB-Tumblebug).
	Name    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// OpenStackError is the error answer of the OpenStack services (Blazar, Sahara).
type OpenStackError struct {
	ErrorCode    int    `json:"error_code"`
	ErrorMessage string `json:"error_message"`
	ErrorName    string `json:"error_name"`
}

// OpenStackBody is the Body of a dialect that answers errors as OpenStackError.
func OpenStackBody(status int, name, msg string) any {
	return OpenStackError{ErrorCode: status, ErrorMessage: msg, ErrorName: name}
}

// Errors is how a dialect answers errors: its own (*Error) as they are, the engine's with the
// status of their code, except that an object that cannot move now (busy, or not from this
// state) is a 409, as the seed systems answer it. Each dialect supplies only its names and its
// body's shape.
type Errors struct {
	// AsError turns any error into the engine's API error (engine.AsError: this package
	// imports no engine).
	AsError func(error) *wire.Error
	// Names are the dialect's names for the engine's codes.
	Names map[wire.Code]string
	// ServerName names a server error (5xx) and a code Names lacks.
	ServerName string
	// Body is the answer's body for a status, name and message.
	Body func(status int, name, msg string) any
}

// Of is the status and body err is answered with. A server error's message names the
// request's ID (the server's log holds the cause), never the cause.
func (d Errors) Of(err error, requestID string) (int, any) {
	var de *Error
	if errors.As(err, &de) {
		return de.Status, d.Body(de.Status, de.Name, de.Message)
	}
	we := d.AsError(err)
	status := we.Status
	switch {
	case status != 0: // an injected HTTP error keeps its status
	case we.Code == wire.CodeInvalidTransition || we.Code == wire.CodeBusy:
		status = http.StatusConflict
	default:
		status = wire.StatusOf(we.Code)
	}
	name := d.Names[we.Code]
	msg := we.Message
	if status >= 500 {
		name = d.ServerName
		if we.Status == 0 {
			msg = fmt.Sprintf("%s (request ID %s in the server's log)", msg, requestID)
		}
	}
	if name == "" {
		name = d.ServerName
	}
	return status, d.Body(status, name, msg)
}

// Write answers err on w as Of says, with the Retry-After of an error that has one (busy,
// rate limited, unavailable).
func (d Errors) Write(w http.ResponseWriter, err error) {
	status, body := d.Of(err, w.Header().Get(wire.HeaderRequestID))
	var we *wire.Error
	if errors.As(err, &we) && we.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(int(we.RetryAfter.Seconds()+0.999)))
	}
	JSON(w, status, body)
}
