package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// newHTTPClient is a keep-alive client with room for every benchmark client's connection.
func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        4096,
			MaxIdleConnsPerHost: 4096,
			IdleConnTimeout:     5 * time.Minute,
			DisableCompression:  true,
		},
	}
}

// send makes one request and reads the whole answer (so the connection is reused); keep
// says whether to return the body.
func send(ctx context.Context, hc *http.Client, method, url string, hdr http.Header, body []byte, keep bool) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if keep {
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil, err
}

// classify maps a request's result to an outcome; a 409 is busy when busyOK.
func classify(status int, err error, busyOK bool) outcome {
	switch {
	case err != nil:
		return broken
	case status >= 200 && status < 300:
		return ok
	case status == http.StatusConflict && busyOK:
		return busy
	default:
		return failed
	}
}

// statusError describes an unexpected answer during setup.
func statusError(what string, status int, body []byte) error {
	if len(body) > 300 {
		body = body[:300]
	}
	return fmt.Errorf("%s: HTTP %d: %s", what, status, bytes.TrimSpace(body))
}
