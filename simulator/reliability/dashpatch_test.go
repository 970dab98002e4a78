package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dashboard"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// TestDashboardTenancy: one tenant's sign-ins never end another's session, one tenant's
// activity does not move another's change counter, the cookie is Secure behind a trusted TLS
// proxy (and only then), and the admin token signs in without seeing a tenant's objects.
func TestDashboardTenancy(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "a", "tok-b": "b"}), simtest.WithAdminToken("root"),
		simtest.WithServerOptions(func(o *httpapi.ServerOptions) { o.TrustProxy = true }))
	tried, violations := 0, 0
	check := func(ok bool, format string, args ...any) {
		tried++
		if !ok {
			violations++
			t.Errorf(format, args...)
		}
	}
	type sess struct {
		Tenant string `json:"tenant"`
		CSRF   string `json:"csrf"`
	}
	signIn := func(hc *http.Client, token string, header map[string]string) (*http.Response, sess) {
		req, _ := http.NewRequest(http.MethodPost, sim.URL+"/ui/session", strings.NewReader(`{"token":"`+token+`"}`))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var s sess
		_ = json.NewDecoder(res.Body).Decode(&s)
		return res, s
	}
	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Timeout: 10 * time.Second}
	}
	snapshotSeq := func(hc *http.Client) (string, string) {
		res, err := hc.Get(sim.URL + "/ui/snapshot")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var snap struct {
			Seq     string            `json:"seq"`
			Objects []json.RawMessage `json:"objects"`
		}
		_ = json.NewDecoder(res.Body).Decode(&snap)
		return snap.Seq, fmt.Sprint(len(snap.Objects))
	}

	b := browser()
	res, _ := signIn(b, "tok-b", map[string]string{"X-Forwarded-Proto": "https"})
	cs := res.Cookies()
	check(len(cs) == 1 && cs[0].Secure, "cookie behind a trusted TLS proxy: %+v, want Secure", cs)
	seqB, _ := snapshotSeq(b)
	n := scale(2, 3) * dashboard.MaxSessionsPerTenant
	for range n {
		res, _ := signIn(http.DefaultClient, "tok-a", nil)
		check(res.StatusCode == http.StatusOK, "tenant a's sign-in: %d", res.StatusCode)
		if res.StatusCode == http.StatusOK && len(res.Cookies()) == 1 && res.Cookies()[0].Secure {
			check(false, "a cookie over plain HTTP without the proxy's word is Secure")
		}
	}
	acct, _ := sim.Engine.Registry().Kind("account")
	for i := range 50 {
		if _, err := sim.Engine.Create(t.Context(), "a", acct, clientReq(fmt.Sprint("a", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	st, body := get(t, b, sim.URL+"/ui/session")
	check(st == http.StatusOK && strings.Contains(body, `"signed_in":true`), "tenant b's session after %d sign-ins of tenant a: %d %s", n, st, body)
	seqAfter, _ := snapshotSeq(b)
	check(seqAfter == seqB, "tenant b's change counter moved from %s to %s with tenant a's activity", seqB, seqAfter)

	admin := browser()
	_, s := signIn(admin, "root", nil)
	check(s.Tenant == "admin", "admin session's tenant = %q", s.Tenant)
	_, objects := snapshotSeq(admin)
	check(objects == "0", "the admin session sees %s objects, want none", objects)
	req, _ := http.NewRequest(http.MethodGet, sim.URL+"/ui/api/v1/sim/clock", nil)
	r, err := admin.Do(req)
	check(err == nil && r.StatusCode == http.StatusOK, "the admin session reads the clock: %v %v", r, err)
	if r != nil {
		r.Body.Close()
	}
	checkRow(t, row{name: "dashboard tenancy", tried: tried, violations: violations,
		note: fmt.Sprintf("%d sign-ins of one tenant; other tenant's session kept, its counter unmoved; cookie flags; admin sign-in", n)})
}

// TestMergePatchRoundTrip: for every kind a client creates on its own, the spec read back and
// PATCHed as it is is no change (never a refusal of an immutable or updatable_in field; the
// version moves only to record the defaults it wrote out, and the same patch again moves
// nothing), and
// the whole spec sent back with a changed optional field applies. A violation is a refusal or a
// version moved by a patch that changes nothing.
func TestMergePatchRoundTrip(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(now)), simtest.WithoutWorker(), simtest.WithTimeScale(1))
	tried, violations, fivexx := 0, 0, 0
	for _, k := range sim.Engine.Registry().Kinds() {
		if k.Parent != nil || k.MadeByParent || len(k.Fields) == 0 {
			continue
		}
		spec := k.SampleSpec(now)
		if _, ok := spec["end_date"]; ok { // a lease: it starts and stays ACTIVE over the advances
			spec["start_date"], spec["end_date"] = now.Add(time.Hour).Format(time.RFC3339), now.Add(1000*time.Hour).Format(time.RFC3339)
		}
		st, body, _ := call(http.MethodPost, sim.URL+"/v1/"+k.Collection, client.CreateRequest{Name: "rt", Spec: spec})
		if st != http.StatusAccepted && st != http.StatusCreated {
			t.Fatalf("create %s: %d %s", k.Name, st, body)
		}
		var o client.Object
		_ = json.Unmarshal(body, &o)
		for range 10 {
			sim.Advance(t, time.Hour)
		}
		_, body, _ = call(http.MethodGet, sim.URL+"/v1/"+k.Collection+"/"+o.ID, nil)
		_ = json.Unmarshal(body, &o)
		st, body, _ = call(http.MethodPatch, sim.URL+"/v1/"+k.Collection+"/"+o.ID, client.PatchRequest{Spec: o.Spec})
		tried++
		var after client.Object
		_ = json.Unmarshal(body, &after)
		// The values the simulator filled in are written now (defaulted empties): that is
		// the one change a patch of the spec as it is may record, once.
		recorded := len(o.Defaulted) > 0 && after.Defaulted != nil && len(after.Defaulted) == 0
		switch {
		case st >= 500:
			fivexx++
		case st >= 300 || (after.Version != o.Version && !recorded) || !reflect.DeepEqual(after.Spec, o.Spec):
			violations++
			t.Errorf("%s in %s: PATCH of its spec as it is = %d %s (version %d → %d)", k.Name, o.State, st, body, o.Version, after.Version)
		}
		if st < 300 {
			tried++
			st, body, _ = call(http.MethodPatch, sim.URL+"/v1/"+k.Collection+"/"+o.ID, client.PatchRequest{Spec: o.Spec})
			var again client.Object
			_ = json.Unmarshal(body, &again)
			if st >= 300 || again.Version != after.Version {
				violations++
				t.Errorf("%s in %s: the same PATCH again = %d %s (version %d → %d)", k.Name, o.State, st, body, after.Version, again.Version)
			}
		}
	}
	checkRow(t, row{name: "merge patch round trip", tried: tried, violations: violations, fivexx: fivexx,
		note: "every kind's spec PATCHed back as it is: refusals or versions moved"})
}

func get(t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	res, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	_, _ = fmt.Fprint(&b, "")
	buf := make([]byte, 4096)
	n, _ := res.Body.Read(buf)
	b.Write(buf[:n])
	return res.StatusCode, b.String()
}

func clientReq(name string) client.CreateRequest { return client.CreateRequest{Name: name} }
