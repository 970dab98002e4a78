package httpapi

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Middleware that keeps one careless or hostile client from hurting the others: deadlines per
// route, a body limit, cancelled requests told apart from failures, and panics answered.

// Deadlines of a request: reading its body and writing its answer. An accepted wait (a GET,
// create, action or delete with ?wait=static) may take its timeout plus longPollSlack
// (holdOpen); a global WriteTimeout would cut it (and a dashboard's event stream, which sets
// its own deadline through http.ResponseController).
const (
	// MaxBodyBytes bounds a request body (413 above it).
	MaxBodyBytes = 1 << 20

	requestDeadline = 30 * time.Second
	// DefaultBodyTimeout is how long a request's body may take to arrive.
	DefaultBodyTimeout = 10 * time.Second
	longPollSlack      = 15 * time.Second
)

// limitRequest bounds the body and sets the connection's read and write deadlines for this
// request. A client that drips its body or never reads a large answer is cut off at the
// deadline instead of holding a connection for ever.
func (s *Server) limitRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		// A dialect answers an oversized body itself, in its system's error shape (the
		// MaxBytesReader below stops its read at the same limit).
		limit := int64(MaxBodyBytes)
		if req.URL.Path == importPath {
			limit = MaxImportBytes
		}
		if req.ContentLength > limit && !isDialect(req.URL.Path) {
			return errorf(wire.CodeTooLarge, "the request body is %d bytes, over the limit of %d", req.ContentLength, limit)
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
		setDeadline(c, s.deadline)
		if req.ContentLength != 0 && s.bodyTimeout < s.deadline {
			// The body must arrive within the body timeout: a client that drips it does not
			// hold the connection for the whole request deadline. Once it is read, the
			// request's deadline applies again (Go's server reads on in the background then,
			// and a read deadline that passes would cancel the request).
			rc := http.NewResponseController(c.Response().Writer)
			_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout))
			req.Body = &bodyDeadline{ReadCloser: req.Body, done: func() { _ = rc.SetReadDeadline(time.Now().Add(s.deadline)) }}
		}
		return next(c)
	}
}

// bodyDeadline calls done once its body has been read to the end.
type bodyDeadline struct {
	io.ReadCloser
	done func()
	once sync.Once
}

func (b *bodyDeadline) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.done)
	}
	return n, err
}

// setDeadline bounds the connection's reading and writing of this request to d from now. Not
// every writer supports deadlines (httptest's recorder does not): then there is no connection
// to protect.
func setDeadline(c echo.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	rc := http.NewResponseController(c.Response().Writer)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
}

// holdOpen lets a wait the handler accepted (its body read, its parameters valid) run past
// the request deadline: its timeout plus longPollSlack. A query string alone extends nothing.
func holdOpen(c echo.Context, timeout time.Duration) { setDeadline(c, timeout+longPollSlack) }

// closeChunked closes the connection after answering a request whose body is framed by
// Transfer-Encoding. The project's clients always send Content-Length; others may stream a
// chunked body, and are answered (a 411 would refuse them for nothing), but their connection
// is not reused: a request that came with both headers (Go's server drops Content-Length
// before any handler sees it) may have been framed differently by a proxy in front, and the
// bytes after its chunked body must not run as a second request (RFC 9112, section 6.1).
func closeChunked(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(c.Request().TransferEncoding) > 0 {
			c.Response().Header().Set(echo.HeaderConnection, "close")
		}
		return next(c)
	}
}

// canceled answers a request whose client went away as canceled (499, as nginx logs it), not
// as a server error: whatever the handler failed with, it failed because nobody waits.
func canceled(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err != nil && c.Request().Context().Err() != nil {
			return fmt.Errorf("%w (%w)", err, c.Request().Context().Err())
		}
		return err
	}
}

// recoverPanic answers a panicking handler with a 500 in the API's envelope (never a dropped
// connection), logs the stack and counts it.
func recoverPanic(m *Metrics, log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				r := recover()
				if r == nil {
					return
				}
				if r == http.ErrAbortHandler {
					panic(r)
				}
				if m != nil {
					m.panics.Inc()
				}
				if log != nil {
					log.Error("panic", slog.String("path", c.Request().URL.Path), slog.String("request_id", requestID(c)), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
				}
				err = &wire.Error{Code: wire.CodeInternal, Message: "internal error: the server failed on this request (it is logged)"}
			}()
			return next(c)
		}
	}
}
