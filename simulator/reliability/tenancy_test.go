package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// TestTenantIsolationAndLimits checks that one tenant never sees, changes or resets another's
// objects and faults, and that the resource limits answer with their bound.
func TestTenantIsolationAndLimits(t *testing.T) {
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))), simtest.WithoutWorker(),
		simtest.WithTimeScale(1), simtest.WithTokens(map[string]string{"ta": "a", "tb": "b"}), simtest.WithAdminToken("root"),
		simtest.WithEngineOptions(func(o *engine.Options) { o.MaxObjects = 50 }))
	srv := sim.HTTP
	do := func(tok, method, path string, body any) (int, []byte) {
		var rd *strings.Reader
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, _ := json.Marshal(body)
			rd = strings.NewReader(string(b))
		}
		req, _ := http.NewRequest(method, srv.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	tried, violations, fivexx := 0, 0, 0
	check := func(ok bool, what string, st int, body []byte) {
		tried++
		if st >= 500 {
			fivexx++
		}
		if !ok {
			violations++
			t.Errorf("%s: %d %s", what, st, body)
		}
	}
	_, body := do("ta", http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "a-acct"})
	var acct client.Object
	_ = json.Unmarshal(body, &acct)
	_, body = do("ta", http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "a-cs", ParentID: acct.ID})
	var cs client.Object
	_ = json.Unmarshal(body, &cs)
	st, body := do("ta", http.MethodPost, "/v1/sim/faults", client.FaultRule{Mode: "fail"})
	var fault client.FaultRule
	_ = json.Unmarshal(body, &fault)
	check(st == http.StatusCreated, "tenant a adds a fault", st, body)

	// Tenant b sees and touches nothing of a's.
	for _, p := range []string{"/v1/accounts/" + acct.ID, "/v1/cloudspaces/" + cs.ID, "/v1/cloudspaces/" + cs.ID + "/events", "/v1/cloudspaces/" + cs.ID + "?wait=static&timeout=0s"} {
		st, body := do("tb", http.MethodGet, p, nil)
		check(st == http.StatusNotFound, "b reads "+p, st, body)
	}
	for _, coll := range []string{"accounts", "cloudspaces"} {
		st, body := do("tb", http.MethodGet, "/v1/"+coll, nil)
		check(st == http.StatusOK && !strings.Contains(string(body), acct.ID) && !strings.Contains(string(body), cs.ID), "b lists "+coll, st, body)
	}
	st, body = do("tb", http.MethodPost, "/v1/cloudspaces/"+cs.ID+"/actions/disable", nil)
	check(st == http.StatusNotFound, "b acts on a's cloudspace", st, body)
	st, body = do("tb", http.MethodDelete, "/v1/cloudspaces/"+cs.ID, nil)
	check(st == http.StatusNotFound, "b deletes a's cloudspace", st, body)
	st, body = do("tb", http.MethodPatch, "/v1/cloudspaces/"+cs.ID, client.PatchRequest{})
	check(st == http.StatusNotFound, "b patches a's cloudspace", st, body)
	st, body = do("tb", http.MethodPost, "/v1/cloudspaces", client.CreateRequest{Name: "x", ParentID: acct.ID})
	check(st == http.StatusBadRequest, "b creates under a's account", st, body)
	st, body = do("tb", http.MethodGet, "/v1/sim/faults", nil)
	check(st == http.StatusOK && !strings.Contains(string(body), fault.ID), "b lists faults", st, body)
	st, body = do("tb", http.MethodDelete, "/v1/sim/faults/"+fault.ID, nil)
	check(st == http.StatusNotFound, "b deletes a's fault", st, body)
	st, body = do("tb", http.MethodPost, "/v1/sim/reset", nil)
	check(st == http.StatusNoContent, "b resets", st, body)
	st, body = do("ta", http.MethodGet, "/v1/cloudspaces/"+cs.ID, nil)
	check(st == http.StatusOK, "a's cloudspace after b's reset", st, body)
	st, body = do("tb", http.MethodPost, "/v1/sim/clock", client.ClockAdvance{Advance: "1h"})
	check(st == http.StatusForbidden, "b moves everyone's clock", st, body)
	st, body = do("tb", http.MethodPut, "/v1/sim/config", client.SimConfig{TimeScale: 0.001})
	check(st == http.StatusForbidden, "b changes everyone's time scale", st, body)

	// Limits answer with their bound.
	limits := []struct {
		what   string
		method string
		path   string
		body   any
		status int
	}{
		{"body over 1 MiB", http.MethodPost, "/v1/accounts", `{"name":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`, http.StatusRequestEntityTooLarge},
		{"name over the limit", http.MethodPost, "/v1/accounts", client.CreateRequest{Name: strings.Repeat("n", engine.MaxNameBytes+1)}, http.StatusBadRequest},
		{"spec over the limit", http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "s", Spec: map[string]any{"b": strings.Repeat("s", engine.MaxSpecBytes)}}, http.StatusBadRequest},
		{"clock advance over the bound", http.MethodPost, "/v1/sim/clock", client.ClockAdvance{Advance: "2000000h"}, http.StatusBadRequest},
		{"time scale over the bound", http.MethodPut, "/v1/sim/config", `{"time_scale":1e308}`, http.StatusBadRequest},
		{"slow factor over the bound", http.MethodPost, "/v1/sim/faults", `{"mode":"slow","factor":1e300}`, http.StatusBadRequest},
	}
	for _, l := range limits {
		tok := "tb"
		if strings.HasPrefix(l.path, "/v1/sim/c") {
			tok = "root"
		}
		st, body := do(tok, l.method, l.path, l.body)
		check(st == l.status && strings.Contains(string(body), `"error"`), l.what, st, body)
	}
	for i := range engine.MaxFaultRules + 1 {
		st, body := do("tb", http.MethodPost, "/v1/sim/faults", client.FaultRule{Mode: "fail", Kind: "machine", Action: "stop", Message: fmt.Sprint("rule ", i)})
		if i == engine.MaxFaultRules {
			check(st == http.StatusForbidden, "fault rule over the cap", st, body)
		} else if st != http.StatusCreated {
			check(false, "fault rule under the cap", st, body)
		}
	}
	for i := range 51 {
		st, body := do("tb", http.MethodPost, "/v1/accounts", client.CreateRequest{Name: fmt.Sprint("q", i)})
		if i == 50 {
			check(st == http.StatusForbidden, "object over the quota", st, body)
		}
	}
	checkRow(t, row{name: "tenancy and limits", tried: tried, violations: violations, fivexx: fivexx})
}
