package dialecttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Call sends a request to a simulator with an OpenStack client's X-Auth-Token (none if
// token is empty) and header's name-value pairs, and decodes its JSON answer (nil for none).
// A string body is sent as it is (a malformed one, say), any other as JSON (none if nil).
func Call(t testing.TB, method, url, token string, body any, header ...string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch body := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(body)
	default:
		rd = bytes.NewReader([]byte(MustJSON(t, body)))
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: answer %q is not a JSON object: %v", method, url, raw, err)
		}
	}
	return resp.StatusCode, out
}

// MustJSON is v as JSON.
func MustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
