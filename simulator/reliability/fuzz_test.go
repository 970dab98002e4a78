package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// fuzzServer is a simulator on a manual clock with tokens, metrics and one object of each of
// a few kinds, for requests to aim at.
func fuzzServer(t testing.TB) (*httpapi.Server, *httpapi.Metrics) {
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))), simtest.WithoutWorker(),
		simtest.WithTimeScale(1), simtest.WithTokens(map[string]string{"t1": "acme", "t2": "other"}), simtest.WithAdminToken("root"), simtest.WithMetrics())
	return sim.Server, sim.Metrics
}

// serveOne sends one request to the handler and checks the answer: never a 5xx, and every
// error in the envelope.
func serveOne(t testing.TB, s http.Handler, method, path, body, token string) (status int, problem string) {
	req := httptest.NewRequest(http.MethodGet, "/", strings.NewReader(body))
	req.Method, req.URL.Path, req.URL.RawQuery = method, path, ""
	if p, q, ok := strings.Cut(path, "?"); ok {
		req.URL.Path, req.URL.RawQuery = p, q
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		return rec.Code, fmt.Sprintf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
	}
	if rec.Code >= 400 && method != http.MethodHead {
		var env client.ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error.Code == "" {
			return rec.Code, fmt.Sprintf("%s %s %q: %d without the error envelope: %s", method, path, body, rec.Code, rec.Body)
		}
	}
	return rec.Code, ""
}

// FuzzHandler sends arbitrary requests to the HTTP handler: no panic, no 5xx, every error in
// the envelope. Its seed corpus runs with go test; go test -fuzz=FuzzHandler explores further.
func FuzzHandler(f *testing.F) {
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body, s.token)
	}
	s, _ := fuzzServer(f)
	f.Fuzz(func(t *testing.T, method, path, body, token string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(method+path, " \r\n\t") || method == "" {
			t.Skip()
		}
		if _, problem := serveOne(t, s, method, path, body, token); problem != "" {
			t.Error(problem)
		}
	})
}

var seeds = []struct{ method, path, body, token string }{
	{"GET", "/healthz", "", ""},
	{"POST", "/v1/accounts", `{"name":"a"}`, "t1"},
	{"POST", "/v1/accounts", `{"name":`, "t1"},
	{"POST", "/v1/accounts", `{"name":"a","spec":{"x":[1,2,{"y":null}]}}`, "t1"},
	{"POST", "/v1/cloudspaces", `{"name":"c","parent_id":"account-0000000000000000"}`, "t1"},
	{"GET", "/v1/machines?limit=0", "", "t1"},
	{"GET", "/v1/machines?limit=99999999999999999999", "", "t1"},
	{"GET", "/v1/machines/x?wait=static&timeout=-1s", "", "t1"},
	{"GET", "/v1/machines/x?wait=static&timeout=9999999999h", "", "t1"},
	{"PATCH", "/v1/machines/x", `{"spec":{}}`, "t1"},
	{"DELETE", "/v1/machines/x?mode=boom", "", "t1"},
	{"POST", "/v1/machines/x/actions/%00", "{}", "t1"},
	{"POST", "/v1/sim/clock", `{"advance":"2000000h"}`, "root"},
	{"POST", "/v1/sim/clock", `{"advance":"1h"}`, "t1"},
	{"PUT", "/v1/sim/config", `{"time_scale":1e308}`, "root"},
	{"PUT", "/v1/sim/config", `{"time_scale":NaN}`, "root"},
	{"POST", "/v1/sim/faults", `{"mode":"slow","factor":1e300}`, "t1"},
	{"POST", "/v1/sim/faults", `{"mode":"http_error","http_status":429,"count":1}`, "t2"},
	{"POST", "/v1/sim/reset", "", "t2"},
	{"BREW", "/v1/kinds", "", "t1"},
	{"GET", "/v1/kinds/%ff", "", "t1"},
	{"GET", "/v1/sim/system/x/y/z", "", "bad"},
	{"POST", "/v1/sim/system/machines/x/lose", "", "t1"},
}

// TestFuzzSweep runs the fuzz target's checks over random requests built from the seeds'
// parts (deterministic), for the table.
func TestFuzzSweep(t *testing.T) {
	s, m := fuzzServer(t)
	rng := rand.New(rand.NewPCG(3, 4))
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "BREW"}
	junk := []string{"", "{", "}", "null", "[]", `{"name":""}`, `{"name":"x","parent_id":1}`, `{"spec":{"a":1e400}}`, "\x00\xff", `{"advance":"-5h"}`, `{"mode":"hang","count":-1}`}
	n := scale(3000, 60000)
	fivexx := 0
	for range n {
		sd := seeds[rng.IntN(len(seeds))]
		method, path, body := sd.method, sd.path, sd.body
		switch rng.IntN(4) {
		case 0:
			method = methods[rng.IntN(len(methods))]
		case 1:
			body = junk[rng.IntN(len(junk))]
		case 2:
			path += []string{"/x", "?wait=static&timeout=0s", "/../..", "%", "?limit=-1", "/actions/start"}[rng.IntN(6)]
		}
		status, problem := serveOne(t, s, method, path, body, []string{"", "t1", "t2", "root", "bad"}[rng.IntN(5)])
		if status >= 500 {
			fivexx++
		}
		if problem != "" && status < 500 {
			t.Error(problem)
		}
	}
	panics := 0
	if mfs, err := m.Registry.Gather(); err == nil {
		for _, mf := range mfs {
			if mf.GetName() == "lifecyclesim_http_panics_total" {
				panics = int(mf.GetMetric()[0].GetCounter().GetValue())
			}
		}
	}
	checkRow(t, row{name: "HTTP fuzz sweep", tried: n, fivexx: fivexx, panics: panics})
}
