package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// errorf is an API error with a wire code, made by the HTTP layer itself (auth, limits,
// malformed requests).
func errorf(code wire.Code, format string, args ...any) *wire.Error {
	return wire.Errorf(code, format, args...)
}

// answerOf is the API error a handler's error is answered with, and its status: the one edge
// where errors are mapped. Injected HTTP errors keep their status, echo's own errors (unknown
// route, wrong method) are mapped, and the rest go through engine.AsError and the one
// code→status map.
func answerOf(err error) (*wire.Error, int) {
	var ae *wire.Error
	if errors.As(err, &ae) && ae.Status != 0 {
		return ae, ae.Status
	}
	if errors.Is(err, context.Canceled) {
		return &wire.Error{Code: wire.CodeCanceled, Message: "the client went away before the answer"}, wire.StatusClientClosedRequest
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if he.Code == http.StatusMethodNotAllowed {
			return &wire.Error{Code: wire.CodeInvalid, Message: "method not allowed here; /openapi.json lists the API"}, he.Code
		}
		err = &wire.Error{Code: wire.CodeOf(he.Code), Message: fmt.Sprint(he.Message)}
	}
	ae = engine.AsError(err)
	return ae, wire.StatusOf(ae.Code)
}

// handleError writes every error as the API's envelope. echo's default handler does not
// unwrap wrapped errors, so this one maps them itself.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae, status := answerOf(err)
	if ae.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ae.RetryAfter.Seconds()))))
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, body(ae, status, requestID(c)))
}

// body is the envelope an error is answered in. A server error's names its request, whose log
// lines hold the detail; its message is one the engine or this layer wrote (the cause of an
// internal error or an outage, in Err, is never answered).
func body(e *wire.Error, status int, id string) wire.ErrorBody {
	b := wire.ErrorBody{Error: wire.ErrorDetail{Code: string(e.Code), Message: e.Message}}
	if e.Details != nil {
		b.Error.Details, _ = json.Marshal(e.Details)
	}
	if status >= 500 && id != "" {
		b.Error.RequestID = id
		if e.Status == 0 { // an injected HTTP error keeps the message its rule gave
			b.Error.Message += " (request ID " + id + " in the server's log)"
		}
	}
	return b
}
