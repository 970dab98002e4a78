package simulator

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// TestAPIErrorCodes answers every error code once, through the envelope and its one status.
func TestAPIErrorCodes(t *testing.T) {
	h := newTestServer(t, harnessOptions{tokens: map[string]string{"tokA": "a"}})
	h.token = "tokA"
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.act("machines", m.ID, "stop", nil)

	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		headers []string
		status  int
		code    client.Code
	}{
		{"not_found object", http.MethodGet, "/v1/machines/machine-0000", nil, nil, 404, client.CodeNotFound},
		{"not_found collection", http.MethodGet, "/v1/spaceships/x", nil, nil, 404, client.CodeNotFound},
		{"busy", http.MethodPost, "/v1/machines/" + m.ID + "/actions/reboot", nil, nil, 409, client.CodeBusy},
		{"busy delete", http.MethodDelete, "/v1/machines/" + m.ID, nil, nil, 409, client.CodeBusy},
		{"conflict", http.MethodPatch, "/v1/machines/" + m.ID, client.PatchRequest{}, []string{"If-Match", "1"}, 412, client.CodeConflict},
		{"invalid", http.MethodPost, "/v1/machines", `[]`, nil, 400, client.CodeInvalid},
		{"unauthorized", http.MethodGet, "/v1/machines", nil, []string{"Authorization", ""}, 401, client.CodeUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, tt.path, tt.body, tt.headers...)
			wantAPIError(t, r, tt.status, tt.code)
			if tt.code == client.CodeBusy && r.Header.Get("Retry-After") == "" {
				t.Error("busy without Retry-After")
			}
		})
	}

	h.mustSettle("machines", m.ID, "HALTED")
	r := h.do(http.MethodPost, "/v1/machines/"+m.ID+"/actions/reboot", nil)
	d := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	var td client.TransitionDetails
	if err := json.Unmarshal(d.Details, &td); err != nil || td.Allowed == nil {
		t.Fatalf("details = %s (%v), want allowed actions", d.Details, err)
	}
	want := []string{"start", "delete", "destroy", "add_disk", "attach_disk", "detach_disk", "delete_disk", "create_template", "change_disk_limits", "clone"}
	if !slices.Equal(td.Allowed, want) {
		t.Errorf("allowed from HALTED = %v, want %v", td.Allowed, want)
	}
	if !strings.Contains(d.Message, "HALTED") || !strings.Contains(d.Message, "reboot") {
		t.Errorf("message %q should name the state and the action", d.Message)
	}

	// rate_limited and unavailable come from http_error faults.
	for _, tt := range []struct {
		status int
		code   client.Code
	}{{429, client.CodeRateLimited}, {503, client.CodeUnavailable}} {
		f := decodeAs[client.FaultRule](t, h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "machine", Mode: wire.FaultHTTPError, HTTPStatus: tt.status}))
		r := h.do(http.MethodGet, "/v1/machines/"+m.ID, nil)
		wantAPIError(t, r, tt.status, tt.code)
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("%d without Retry-After", tt.status)
		}
		h.do(http.MethodDelete, "/v1/sim/faults/"+f.ID, nil)
	}
	h.get("machines", m.ID)
}

func TestAPIUnknownRoutesAndMethods(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	for _, tt := range []struct {
		method, path string
		status       int
		code         client.Code
	}{
		{http.MethodGet, "/nope", 404, client.CodeNotFound},
		{http.MethodGet, "/v2/machines", 404, client.CodeNotFound},
		{http.MethodGet, "/v1", 404, client.CodeNotFound},
		{http.MethodGet, "/v1/cloudspaces/" + cs.ID + "/children", 404, client.CodeNotFound},
		{http.MethodGet, "/v1/sim/nope", 404, client.CodeNotFound},
		// A wrong method on a known path: 405, in the envelope.
		{http.MethodPut, "/v1/cloudspaces/" + cs.ID, 405, client.CodeInvalid},
		{http.MethodDelete, "/v1/kinds", 405, client.CodeInvalid},
		{http.MethodPost, "/healthz", 405, client.CodeInvalid},
		{http.MethodGet, "/v1/cloudspaces/" + cs.ID + "/actions/pause", 405, client.CodeInvalid},
		// DELETE /v1/{collection}/{id} exists: "sim" is read as a collection, which it is not.
		{http.MethodDelete, "/v1/sim/clock", 404, client.CodeNotFound},
		{http.MethodPatch, "/v1/cloudspaces", 405, client.CodeInvalid},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			wantAPIError(t, h.do(tt.method, tt.path, nil), tt.status, tt.code)
		})
	}
	// Past the end of a known path, echo's router may answer either way; both in the envelope.
	r := h.do(http.MethodGet, "/v1/cloudspaces/"+cs.ID+"/actions/pause/now", nil)
	if r.Status != http.StatusNotFound && r.Status != http.StatusMethodNotAllowed {
		t.Errorf("GET past a known path = %s, want 404 or 405", r)
	}
	// The cloudspace was not touched.
	if o := h.get("cloudspaces", cs.ID); o.State != "DEPLOYED" {
		t.Errorf("cloudspace is %s", o.State)
	}
}

// TestOpenAPISync checks openapi.json documents exactly the routes the server has.
func TestOpenAPISync(t *testing.T) {
	data := openAPIDoc
	if served := newTestServer(t, harnessOptions{}).do(http.MethodGet, "/openapi.json", nil).Body; string(served) != string(data) {
		t.Fatal("the served (embedded) openapi.json differs from the file httpapi/openapi.json")
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	type parameter struct{ Name, In string }
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		var shared []parameter
		if raw, ok := item["parameters"]; ok {
			_ = json.Unmarshal(raw, &shared)
		}
		for method, raw := range item {
			switch method {
			case "parameters", "summary", "description", "servers", "$ref":
				continue
			}
			op := method + " " + path
			documented[strings.ToUpper(method)+" "+path] = true
			// Every {param} of the path is declared as a path parameter.
			var o struct{ Parameters []parameter }
			if err := json.Unmarshal(raw, &o); err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			params := append(slices.Clone(shared), o.Parameters...)
			for _, seg := range strings.Split(path, "/") {
				if name, ok := strings.CutPrefix(seg, "{"); ok {
					name = strings.TrimSuffix(name, "}")
					if !slices.Contains(params, parameter{Name: name, In: "path"}) {
						t.Errorf("%s does not declare its path parameter %s", op, name)
					}
				}
			}
		}
	}

	// With metrics, so /metrics is routed too.
	s := httpapi.NewServer(engine.New(memstore.New(), nil, engine.NewManualClock(harnessT0), engine.Options{}), httpapi.ServerOptions{Metrics: httpapi.NewMetrics(httpapi.MetricsSources{Counts: memstore.New().Counts})})
	routed := map[string]bool{}
	for _, r := range s.Routes() {
		method, path, _ := strings.Cut(r, " ")
		if method == "echo_route_not_found" || method == "echo_route_any" || strings.HasSuffix(path, "/*") {
			continue // echo's catch-alls that make group middleware run on 404s
		}
		if strings.HasPrefix(path, httpapi.BlazarPrefix) || strings.HasPrefix(path, httpapi.KeystonePrefix) ||
			strings.HasPrefix(path, httpapi.SaharaPrefix) || strings.HasPrefix(path, httpapi.NetworkPrefix) {
			continue // the dialects are their systems' APIs, documented in simulator/dialects/, not /v1's
		}
		parts := strings.Split(path, "/")
		for i, p := range parts {
			if name, ok := strings.CutPrefix(p, ":"); ok {
				parts[i] = "{" + name + "}"
			}
		}
		routed[method+" "+strings.Join(parts, "/")] = true
	}
	if len(routed) < 15 {
		t.Fatalf("only %d routes: %v", len(routed), s.Routes())
	}
	for _, r := range slices.Sorted(maps.Keys(routed)) {
		if !documented[r] {
			t.Errorf("route %s is not documented in openapi.json", r)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(documented)) {
		if !routed[d] {
			t.Errorf("openapi.json documents %s, which is not routed", d)
		}
	}
}

// TestOpenAPISchemas checks the documented schemas have the fields of the wire types.
func TestOpenAPISchemas(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"Object": client.Object{}, "Operation": client.Operation{}, "ObjectList": client.ObjectList{},
		"Event": client.Event{}, "CreateRequest": client.CreateRequest{}, "ActionRequest": client.ActionRequest{},
		"PatchRequest": client.PatchRequest{}, "FaultRule": client.FaultRule{}, "Clock": client.ClockState{},
		"SimConfig": client.SimConfig{}, "Error": client.ErrorBody{},
	} {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("openapi.json has no schema %s", name)
			continue
		}
		var fields []string
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if tag != "" && tag != "-" {
				fields = append(fields, tag)
			}
		}
		slices.Sort(fields)
		if got := slices.Sorted(maps.Keys(s.Properties)); !slices.Equal(got, fields) {
			t.Errorf("schema %s has properties %v, the wire type %T has %v", name, got, v, fields)
		}
	}
}
