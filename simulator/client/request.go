package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// request is one logical API call; its retries are the same request sent again.
type request struct {
	method string
	path   string // escaped, from the root of the endpoint
	query  url.Values
	body   any // sent as JSON when non-nil
	header http.Header
	out    any // decoded from a 2xx answer with a body, when non-nil
	// respHeader, when non-nil, receives the 2xx answer's header.
	respHeader *http.Header
	// limit bounds the answer decoded into out (maxBodyBytes when 0).
	limit int64
	// rest, when non-nil and the answer streams (application/x-ndjson, an answer to
	// ?wait=static), receives the open answer after out was decoded from its first line.
	rest *Watch
}

// do sends r (with retries) and decodes the answer. It returns the HTTP status of a 2xx answer;
// other answers are returned as *Error.
func (c *Client) do(ctx context.Context, r request) (int, error) {
	target := c.endpoint + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	var body any
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return 0, fmt.Errorf("%s %s: encode request: %w", r.method, r.path, err)
		}
		body = b
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if r.method != http.MethodGet && r.method != http.MethodHead {
		// One key per logical call: every retry of this request sends the same one, so the
		// server applies the call at most once.
		key, _ := ctx.Value(idempotencyKey{}).(string)
		if key == "" {
			key = NewIdempotencyKey()
		}
		req.Header.Set("Idempotency-Key", key)
	}

	resp, err := c.rc.Do(req)
	if err != nil {
		var te *transportError
		if errors.As(err, &te) {
			return 0, err // names the method and URL already
		}
		return 0, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	streaming := false
	defer func() {
		if !streaming {
			resp.Body.Close()
		}
	}()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, errorFrom(resp)
	}
	if r.respHeader != nil {
		*r.respHeader = resp.Header
	}
	if r.out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes))
		return resp.StatusCode, nil
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, cmp.Or(r.limit, maxBodyBytes)))
	if err := dec.Decode(r.out); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: decode %d answer: %w", r.method, r.path, resp.StatusCode, err)
	}
	if r.rest != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), NDJSON) {
		r.rest.body, r.rest.dec, streaming = resp.Body, dec, true
	}
	return resp.StatusCode, nil
}

// errorFrom builds the *Error of a non-2xx answer, from its envelope when it has one.
func errorFrom(resp *http.Response) *Error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	e := &Error{Status: resp.StatusCode, Code: CodeOf(resp.StatusCode), RequestID: resp.Header.Get(wire.HeaderRequestID)}
	if d, ok := retryAfter(resp.Header); ok {
		e.RetryAfter = d
	}
	var env ErrorBody
	if err := json.Unmarshal(data, &env); err == nil && env.Error.Code != "" {
		ee := errorOf(env, resp.StatusCode)
		ee.RetryAfter, ee.RequestID = e.RetryAfter, cmp.Or(e.RequestID, ee.RequestID)
		return ee
	}
	text := strings.Join(strings.Fields(string(data)), " ")
	if text == "" {
		e.Message = "empty response body"
		return e
	}
	if len(text) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	e.Message = "unexpected response: " + text
	return e
}
