package httpapi

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// The request journal keeps each tenant's recent API requests and their answers in a ring of
// its own, so a failed CI job can ask the simulator what it was sent (GET /v1/sim/journal),
// as WireMock's /__admin/requests answers. It is bounded: --journal-size entries per tenant,
// bodies cut at --journal-body-bytes, and only the tenants of the configured tokens (or the
// one open tenant) have a ring.
const (
	// DefaultJournalSize is how many requests a tenant's journal keeps by default.
	DefaultJournalSize = 1000
	// MaxJournalSize bounds --journal-size.
	MaxJournalSize = 100_000
	// MaxJournalBodyBytes bounds --journal-body-bytes.
	MaxJournalBodyBytes = 64 << 10
)

// journalRoute is the journal's own route: reading the journal is not journaled.
const journalRoute = "/v1/sim/journal"

// journal is every tenant's ring.
type journal struct {
	size, bodyBytes int
	now             func() time.Time
	mu              sync.Mutex
	rings           map[string]*ring
}

// ring is one tenant's entries: entries[next] is the oldest once the ring is full.
type ring struct {
	entries []wire.JournalEntry
	next    int
	seq     int64
}

func newJournal(size, bodyBytes int, now func() time.Time) *journal {
	return &journal{size: size, bodyBytes: bodyBytes, now: now, rings: map[string]*ring{}}
}

// add appends an entry to a tenant's ring, numbering it.
func (j *journal) add(tenant string, e wire.JournalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.rings[tenant]
	if r == nil {
		r = &ring{entries: make([]wire.JournalEntry, 0, min(j.size, 64))}
		j.rings[tenant] = r
	}
	r.seq++
	e.Seq = r.seq
	if len(r.entries) < j.size {
		r.entries = append(r.entries, e)
		return
	}
	r.entries[r.next] = e
	r.next = (r.next + 1) % j.size
}

// list returns a tenant's entries that match, oldest first, at most limit, and how many
// entries the ring has let go.
func (j *journal) list(tenant string, match func(*wire.JournalEntry) bool, limit int) ([]wire.JournalEntry, int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.rings[tenant]
	if r == nil {
		return []wire.JournalEntry{}, 0
	}
	out := []wire.JournalEntry{}
	for i := range r.entries {
		e := &r.entries[(r.next+i)%len(r.entries)]
		if match(e) {
			out = append(out, *e)
		}
	}
	// The newest ones when more match than asked for: a CI job wants what it sent last.
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, r.seq - int64(len(r.entries))
}

// clear empties a tenant's ring (a reset); its numbering goes on.
func (j *journal) clear(tenant string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if r := j.rings[tenant]; r != nil {
		clear(r.entries)
		r.entries, r.next = r.entries[:0], 0
	}
}

// capture keeps the first n bytes of what passes through it.
type capture struct {
	n   int
	buf bytes.Buffer
	cut bool
}

func (c *capture) keep(p []byte) {
	if room := c.n - c.buf.Len(); room < len(p) {
		p, c.cut = p[:max(room, 0)], true
	}
	c.buf.Write(p)
}

// text is what was kept, as valid UTF-8.
func (c *capture) text() string { return strings.ToValidUTF8(c.buf.String(), string(utf8.RuneError)) }

// teeBody keeps what the handler reads of a request body.
type teeBody struct {
	r interface {
		Read([]byte) (int, error)
		Close() error
	}
	c *capture
}

func (t teeBody) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.c.keep(p[:n])
	return n, err
}

func (t teeBody) Close() error { return t.r.Close() }

// teeWriter keeps what the handler writes of an answer.
type teeWriter struct {
	http.ResponseWriter
	c *capture
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.c.keep(p)
	return t.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (flushes of stream answers).
func (t teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// journaled records every tenant request under /v1 in its tenant's journal, once answered.
// Requests refused before a tenant is known (no or a wrong token), the admin's and reads of
// the journal itself are not recorded.
func (s *Server) journaled(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if !strings.HasPrefix(req.URL.Path, "/v1/") {
			return next(c)
		}
		start := time.Now()
		var reqBody, resBody *capture
		if s.journal.bodyBytes > 0 {
			reqBody, resBody = &capture{n: s.journal.bodyBytes}, &capture{n: s.journal.bodyBytes}
			if req.Body != nil && req.Body != http.NoBody {
				req.Body = teeBody{r: req.Body, c: reqBody}
			}
			res := c.Response()
			res.Writer = teeWriter{ResponseWriter: res.Writer, c: resBody}
		}
		err := next(c)
		ten, ok := c.Get(tenantKey).(string)
		if !ok || c.Path() == journalRoute {
			return err
		}
		e := wire.JournalEntry{Time: s.journal.now().UTC(), Method: req.Method, Path: req.URL.Path, Query: clip(req.URL.RawQuery),
			Status: c.Response().Status, DurationMS: float64(time.Since(start).Microseconds()) / 1000, RequestID: requestID(c),
			IdempotencyKey: clip(req.Header.Get(headerIdempotencyKey)), UserAgent: clip(req.UserAgent())}
		if err != nil {
			ae, status := answerOf(err)
			e.Status, e.ErrorCode, e.ErrorMessage = status, string(ae.Code), ae.Message
		}
		if reqBody != nil {
			e.RequestBody, e.ResponseBody, e.BodiesCut = reqBody.text(), resBody.text(), reqBody.cut || resBody.cut
		}
		s.journal.add(ten, e)
		return err
	}
}

// getJournal answers the tenant's journal, filtered by method, path (a prefix), status (a
// code such as 404 or a class such as 4xx), request_id and after (a seq), the newest limit.
func (s *Server) getJournal(c echo.Context) error {
	if s.journal == nil {
		return errorf(wire.CodeNotFound, "the request journal is off: start lifecyclesim with --journal-size N (N > 0) to keep one")
	}
	q := c.QueryParams()
	limit := s.journal.size
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return errorf(wire.CodeInvalid, "limit %q must be a number from 1 to %d (the journal's size)", l, s.journal.size)
		}
		limit = min(n, s.journal.size)
	}
	var after int64
	if a := q.Get("after"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < 0 {
			return errorf(wire.CodeInvalid, "after %q must be an entry's seq (a whole number)", a)
		}
		after = n
	}
	status, err := statusFilter(q.Get("status"))
	if err != nil {
		return err
	}
	method, path, id := strings.ToUpper(q.Get("method")), q.Get("path"), q.Get("request_id")
	items, dropped := s.journal.list(tenant(c), func(e *wire.JournalEntry) bool {
		return e.Seq > after && (method == "" || e.Method == method) && strings.HasPrefix(e.Path, path) &&
			(id == "" || e.RequestID == id) && status(e.Status)
	}, limit)
	return c.JSON(http.StatusOK, wire.JournalList{Items: items, Size: s.journal.size, Dropped: dropped})
}

// statusFilter reads ?status=: a code (404) or a class (4xx); "" matches every status.
func statusFilter(v string) (func(int) bool, error) {
	if v == "" {
		return func(int) bool { return true }, nil
	}
	if len(v) == 3 && v[0] >= '1' && v[0] <= '5' && strings.EqualFold(v[1:], "xx") {
		class := int(v[0]-'0') * 100
		return func(st int) bool { return st >= class && st < class+100 }, nil
	}
	code, err := strconv.Atoi(v)
	if err != nil || code < 100 || code > 599 {
		return nil, errorf(wire.CodeInvalid, "status %q must be an HTTP status such as 404 or a class such as 4xx", v)
	}
	return func(st int) bool { return st == code }, nil
}
