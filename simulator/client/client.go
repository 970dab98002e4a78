package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Defaults New uses for zero Config fields.
const (
	DefaultRetryMax     = 4
	DefaultMinRetryWait = 500 * time.Millisecond
	DefaultMaxRetryWait = 15 * time.Second
	DefaultUserAgent    = "lifecyclesim-go-client"
)

// Limits on how much of an answer is read, so a broken server cannot exhaust memory.
const (
	maxBodyBytes  = 32 << 20
	maxErrorBytes = 1 << 20
)

// Config configures a Client. Only Endpoint is required.
type Config struct {
	// Endpoint is the API's base URL, e.g. http://127.0.0.1:8080. A path prefix is kept.
	Endpoint string
	// Token is sent as "Authorization: Bearer <token>" when set.
	Token string
	// UserAgent is sent with every request; empty means DefaultUserAgent.
	UserAgent string
	// RetryMax is how many times a failed request is retried: 0 means DefaultRetryMax and a
	// negative value disables retries.
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the wait between retries; zero means the defaults.
	// RetryWaitMax also caps a server's Retry-After.
	RetryWaitMin, RetryWaitMax time.Duration
	// HTTPClient sends the requests; nil means a pooled client without a global timeout
	// (every call is bounded by its context instead, which long-polls need).
	HTTPClient *http.Client
	// Logger receives the retry logs; nil means silence.
	Logger retryablehttp.LeveledLogger
	// Clock tells the time waits are measured by: how long the server held a long-poll, how
	// long a context's deadline leaves for the next one. nil means the system clock; tests give
	// one they move.
	Clock Clock
}

// Clock tells the time (Config.Clock).
type Clock interface {
	Now() time.Time
}

// systemClock is the system's clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Client calls the lifecyclesim API. It is safe for concurrent use.
type Client struct {
	endpoint  string // without a trailing slash
	token     string
	userAgent string
	rc        *retryablehttp.Client
	clock     Clock
}

// New returns a client for cfg.Endpoint, or an error saying which setting to fix.
func New(cfg Config) (*Client, error) {
	endpoint, err := parseEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	retryMax := cfg.RetryMax
	switch {
	case retryMax == 0:
		retryMax = DefaultRetryMax
	case retryMax < 0:
		retryMax = 0
	}
	waitMin, waitMax := cfg.RetryWaitMin, cfg.RetryWaitMax
	if waitMin < 0 || waitMax < 0 {
		return nil, fmt.Errorf("retry waits must not be negative (RetryWaitMin %s, RetryWaitMax %s)", waitMin, waitMax)
	}
	if waitMin == 0 {
		waitMin = DefaultMinRetryWait
		if waitMax > 0 {
			waitMin = min(waitMin, waitMax) // a short RetryWaitMax alone shortens both
		}
	}
	if waitMax == 0 {
		waitMax = max(DefaultMaxRetryWait, waitMin)
	}
	if waitMax < waitMin {
		return nil, fmt.Errorf("RetryWaitMax %s is shorter than RetryWaitMin %s", waitMax, waitMin)
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	rc := &retryablehttp.Client{
		HTTPClient:     cfg.HTTPClient, // nil: retryablehttp installs a pooled client
		RetryWaitMin:   waitMin,
		RetryWaitMax:   waitMax,
		RetryMax:       retryMax,
		RequestLogHook: countRequest,
		CheckRetry:     retryPolicy,
		Backoff:        backoff,
		ErrorHandler:   lastAnswer,
	}
	if cfg.Logger != nil {
		rc.Logger = cfg.Logger
	}
	var clock Clock = systemClock{}
	if cfg.Clock != nil {
		clock = cfg.Clock
	}
	return &Client{endpoint: endpoint, token: cfg.Token, userAgent: ua, rc: rc, clock: clock}, nil
}

func parseEndpoint(s string) (string, error) {
	const example = "e.g. http://127.0.0.1:8080"
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("endpoint is empty: set it to the API's base URL, %s", example)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("endpoint %q is not an absolute http(s) URL, %s", s, example)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("endpoint %q must not carry a query, fragment or user info, %s", s, example)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// Endpoint is the API's base URL the client calls.
func (c *Client) Endpoint() string { return c.endpoint }

// ListOptions filters and pages a list. Zero fields are not sent.
type ListOptions struct {
	// ParentID keeps the objects living under that parent.
	ParentID string
	// State keeps the objects in that state.
	State string
	// Limit is the page size; zero means the server's default.
	Limit int
	// After is the cursor of the page to read: the previous page's Next.
	After string
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	if o.ParentID != "" {
		q.Set("parent_id", o.ParentID)
	}
	if o.State != "" {
		q.Set("state", o.State)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.After != "" {
		q.Set("after", o.After)
	}
	return q
}

// Kinds returns every kind the server serves, compiled (their lookups built) and ready for
// route search and plan validation.
func (c *Client) Kinds(ctx context.Context) ([]*lifecycle.Kind, error) {
	var list struct {
		Items []*lifecycle.Kind `json:"items"`
	}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/kinds", out: &list}); err != nil {
		return nil, err
	}
	for _, k := range list.Items {
		if err := k.Compile(); err != nil {
			return nil, fmt.Errorf("kind %q from the server is invalid: %w", k.Name, err)
		}
	}
	return list.Items, nil
}

// Kind returns one kind by name, compiled.
func (c *Client) Kind(ctx context.Context, name string) (*lifecycle.Kind, error) {
	if name == "" {
		return nil, errors.New("get kind: missing kind name")
	}
	var k lifecycle.Kind
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/kinds/" + url.PathEscape(name), out: &k}); err != nil {
		return nil, err
	}
	if err := k.Compile(); err != nil {
		return nil, fmt.Errorf("kind %q from the server is invalid: %w", name, err)
	}
	return &k, nil
}

// Create creates an object in collection (e.g. "machines"). The answer is usually the object
// in its first transition state (202); wait for it with WaitStatic. Retries reuse one
// Idempotency-Key, so a retried create never makes a second object.
func (c *Client) Create(ctx context.Context, collection string, req CreateRequest) (*Object, error) {
	return c.create(ctx, collection, req, nil)
}

func (c *Client) create(ctx context.Context, collection string, req CreateRequest, w *Watch) (*Object, error) {
	p, err := collectionPath(collection)
	if err != nil {
		return nil, err
	}
	return c.started(ctx, request{method: http.MethodPost, path: p, body: req}, w)
}

// started sends a request that starts an operation and decodes the object it answers with
// (nil for a 204: a delete that removed the object at once); with w it asks the server to wait
// for a static state on the same request, and w takes the rest of the answer.
func (c *Client) started(ctx context.Context, r request, w *Watch) (*Object, error) {
	obj := new(Object)
	r.out = obj
	if w != nil {
		w.ask(ctx, &r)
	}
	status, err := c.do(ctx, r)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return obj, nil
}

// Get reads an object.
func (c *Client) Get(ctx context.Context, collection, id string) (*Object, error) {
	p, err := objectPath(collection, id)
	if err != nil {
		return nil, err
	}
	var obj Object
	var h http.Header
	if _, err := c.do(ctx, request{method: http.MethodGet, path: p, out: &obj, respHeader: &h}); err != nil {
		return nil, err
	}
	if t, err := http.ParseTime(h.Get("Date")); err == nil {
		obj.ReadAt = t
	}
	return &obj, nil
}

// List reads one page of a collection.
func (c *Client) List(ctx context.Context, collection string, opts ListOptions) (*ObjectList, error) {
	p, err := collectionPath(collection)
	if err != nil {
		return nil, err
	}
	var list ObjectList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: p, query: opts.query(), out: &list}); err != nil {
		return nil, err
	}
	return &list, nil
}

// MaxPage is the largest page the simulator serves.
const MaxPage = wire.MaxPage

// ListAll reads every page of a collection from opts.After on, following the Next cursors.
// Without opts.Limit the pages are as large as the server allows (MaxPage), so an MCI's
// 10,000 VMs take 10 requests, not 100.
func (c *Client) ListAll(ctx context.Context, collection string, opts ListOptions) ([]Object, error) {
	if opts.Limit == 0 {
		opts.Limit = MaxPage
	}
	var all []Object
	for {
		page, err := c.List(ctx, collection, opts)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if page.Next == "" {
			return all, nil
		}
		if page.Next == opts.After {
			return nil, fmt.Errorf("list %s: the server returned cursor %q again", collection, page.Next)
		}
		opts.After = page.Next
	}
}

// Act runs an action on an object; the answer is the object in the action's first transition
// state. An action not allowed from the object's state fails with invalid_transition
// (IsInvalidTransition, never retried); one on a busy object is retried after Retry-After and
// fails with busy once the retries are spent.
func (c *Client) Act(ctx context.Context, collection, id, action string, req ActionRequest) (*Object, error) {
	return c.act(ctx, collection, id, action, req, nil)
}

func (c *Client) act(ctx context.Context, collection, id, action string, req ActionRequest, w *Watch) (*Object, error) {
	p, err := objectPath(collection, id)
	if err != nil {
		return nil, err
	}
	if action == "" {
		return nil, fmt.Errorf("act on %s/%s: missing action name", collection, id)
	}
	return c.started(ctx, request{method: http.MethodPost, path: p + "/actions/" + url.PathEscape(action), body: req}, w)
}

// Patch changes an object's spec fields. With ifMatch > 0 it only applies to that version of
// the object and fails with conflict (IsConflict) otherwise. Kinds whose spec changes run an
// update action answer with the object in transition.
func (c *Client) Patch(ctx context.Context, collection, id string, ifMatch int64, req PatchRequest) (*Object, error) {
	p, err := objectPath(collection, id)
	if err != nil {
		return nil, err
	}
	out := new(Object)
	r := request{method: http.MethodPatch, path: p, body: req, out: out}
	if ifMatch > 0 {
		r.header = http.Header{"If-Match": {strconv.FormatInt(ifMatch, 10)}}
	}
	if _, err := c.do(ctx, r); err != nil {
		return nil, err
	}
	return out, nil
}

// Delete deletes an object; mode is "destroy" (permanent), "delete" (recycle bin) or empty
// (the server's default). It returns the object in transition, or nil when the object was
// removed at once (204).
func (c *Client) Delete(ctx context.Context, collection, id, mode string) (*Object, error) {
	return c.delete(ctx, collection, id, mode, nil)
}

func (c *Client) delete(ctx context.Context, collection, id, mode string, w *Watch) (*Object, error) {
	p, err := objectPath(collection, id)
	if err != nil {
		return nil, err
	}
	r := request{method: http.MethodDelete, path: p}
	if mode != "" {
		r.query = url.Values{"mode": {mode}}
	}
	return c.started(ctx, r, w)
}

// Events returns an object's transition history, oldest first. Events outlive their object.
func (c *Client) Events(ctx context.Context, collection, id string) ([]Event, error) {
	p, err := objectPath(collection, id)
	if err != nil {
		return nil, err
	}
	var list EventList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: p + "/events", out: &list}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// Health checks that the server answers /healthz with status ok.
func (c *Client) Health(ctx context.Context) error {
	var h struct {
		Status string `json:"status"`
	}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/healthz", out: &h}); err != nil {
		return err
	}
	if h.Status != "ok" {
		return fmt.Errorf("health check of %s: status %q, want \"ok\"", c.endpoint, h.Status)
	}
	return nil
}

// Ready asks whether the simulator is ready to serve (GET /readyz: its store answers); an
// error says why not. Health only says the process answers.
func (c *Client) Ready(ctx context.Context) error {
	var h struct {
		Status string `json:"status"`
	}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/readyz", out: &h}); err != nil {
		return err
	}
	if h.Status != "ready" {
		return fmt.Errorf("readiness check of %s: status %q, want \"ready\"", c.endpoint, h.Status)
	}
	return nil
}

func collectionPath(collection string) (string, error) {
	if collection == "" {
		return "", errors.New("missing collection (the URL segment, e.g. machines)")
	}
	return "/v1/" + url.PathEscape(collection), nil
}

func objectPath(collection, id string) (string, error) {
	p, err := collectionPath(collection)
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", fmt.Errorf("missing %s id", collection)
	}
	return p + "/" + url.PathEscape(id), nil
}
