package keystone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

func post(t *testing.T, url, body string, header ...string) (*http.Response, map[string]any) {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %q is not JSON: %v", method, url, raw, err)
	}
	return resp, out
}

func passwordAuth(password string) string {
	return `{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "ci",
		"domain": {"name": "Default"}, "password": "` + password + `"}}}, "scope": {"project": {"name": "ci", "domain": {"name": "Default"}}}}}`
}

// Discovery leads to v3; a tenant's token as the password gets a token that is that tenant's
// at the dialects, and a catalog whose reservation endpoint is the Blazar dialect; a wrong
// password, the admin token and an unknown method are refused in Keystone's error shape.
func TestTokens(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "a", "tok-b": "b"}), simtest.WithAdminToken("admin"))
	ks := sim.URL + httpapi.KeystonePrefix
	resp, body := post(t, ks, "")
	if resp.StatusCode != http.StatusMultipleChoices || !strings.Contains(dialecttest.MustJSON(t, body), `"href":"`+ks+`/v3/"`) {
		t.Fatalf("GET /identity = %d %v, want 300 naming %s/v3/", resp.StatusCode, body, ks)
	}
	if resp, body := post(t, ks+"/v3", ""); resp.StatusCode != http.StatusOK || body["version"] == nil {
		t.Fatalf("GET /identity/v3 = %d %v, want the version", resp.StatusCode, body)
	}

	resp, body = post(t, ks+"/v3/auth/tokens", passwordAuth("tok-b"))
	token := resp.Header.Get("X-Subject-Token")
	if resp.StatusCode != http.StatusCreated || token == "" {
		t.Fatalf("password login = %d %v (token %q), want 201 with X-Subject-Token", resp.StatusCode, body, token)
	}
	tok, _ := body["token"].(map[string]any)
	if p, _ := tok["project"].(map[string]any); p["name"] != "b" {
		t.Errorf("token project = %v, want tenant b", tok["project"])
	}
	var blazar string
	for _, s := range tok["catalog"].([]any) {
		s := s.(map[string]any)
		if s["type"] == "reservation" {
			blazar = s["endpoints"].([]any)[0].(map[string]any)["url"].(string)
		}
	}
	if blazar != sim.URL+httpapi.BlazarPrefix {
		t.Fatalf("catalog's reservation endpoint = %q, want %s", blazar, sim.URL+httpapi.BlazarPrefix)
	}
	// The issued token is tenant b's at Blazar: it sees b's leases, not a's.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, blazar+"/leases",
		bytes.NewReader([]byte(`{"name": "mine", "start_date": "now", "end_date": "2999-01-01 00:00", "reservations": [], "events": []}`)))
	req.Header.Set("X-Auth-Token", token)
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != http.StatusCreated {
		t.Fatalf("create with the issued token = %v, %v", r, err)
	}
	r.Body.Close()
	for tenant, want := range map[string]int{"tok-a": 0, "tok-b": 1} {
		_, body := post(t, blazar+"/leases", "", "X-Auth-Token", tenant)
		if ls, _ := body["leases"].([]any); len(ls) != want {
			t.Errorf("%s lists %v, want %d leases", tenant, body, want)
		}
	}
	// An issued token validates (GET with X-Subject-Token), and names its tenant.
	resp, body = post(t, ks+"/v3/auth/tokens", "", "X-Auth-Token", token, "X-Subject-Token", token)
	vt, _ := body["token"].(map[string]any)
	if p, _ := vt["project"].(map[string]any); resp.StatusCode != http.StatusOK || p["name"] != "b" {
		t.Errorf("validating the token = %d %v, want 200 naming tenant b", resp.StatusCode, body)
	}
	if resp, _ := post(t, ks+"/v3/auth/tokens", "", "X-Auth-Token", "nope", "X-Subject-Token", token); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("validating with an unknown X-Auth-Token = %d, want 401", resp.StatusCode)
	}
	// The token method takes an issued token.
	if resp, _ := post(t, ks+"/v3/auth/tokens", `{"auth": {"identity": {"methods": ["token"], "token": {"id": "`+token+`"}}}}`); resp.StatusCode != http.StatusCreated {
		t.Errorf("token login = %d, want 201", resp.StatusCode)
	}

	tests := []struct {
		name, body string
		status     int
		msg        string
	}{
		{"wrong password", passwordAuth("nope"), 401, "unknown token"},
		{"admin token", passwordAuth("admin"), 401, "tenant's token"},
		{"no method", `{"auth": {"identity": {"methods": ["totp"]}}}`, 400, "password or token"},
		{"bad JSON", `{`, 400, "invalid JSON"},
	}
	for _, tt := range tests {
		resp, body := post(t, ks+"/v3/auth/tokens", tt.body)
		e, _ := body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if resp.StatusCode != tt.status || e["code"] != float64(tt.status) || !strings.Contains(msg, tt.msg) || resp.Header.Get("X-Subject-Token") != "" {
			t.Errorf("%s: = %d %v, want %d with %q and no token", tt.name, resp.StatusCode, body, tt.status, tt.msg)
		}
	}
}
