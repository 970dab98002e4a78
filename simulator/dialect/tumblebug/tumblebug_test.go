package tumblebug_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// t0 is the manual clock's start.
var t0 = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)

// exchange is one request to the simulator and its answer.
type exchange struct {
	req    *http.Request
	body   []byte // the request's body
	status int
	header http.Header
	raw    []byte
	out    map[string]any
}

// do sends a request (Basic auth with token as its password unless token is empty) and
// decodes its JSON answer.
func do(t testing.TB, method, url, token string, body any) exchange {
	t.Helper()
	var raw []byte
	if body != nil {
		if s, ok := body.(string); ok {
			raw = []byte(s)
		} else {
			var err error
			if raw, err = json.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.SetBasicAuth("default", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	x := exchange{req: req, body: raw, status: resp.StatusCode, header: resp.Header, raw: ans}
	if len(ans) > 0 {
		if err := json.Unmarshal(ans, &x.out); err != nil {
			t.Fatalf("%s %s: answer %q is not a JSON object: %v", method, url, ans, err)
		}
	}
	return x
}

// newMCI is the body of upstream's POST /ns/{nsId}/mciDynamic: two subgroups, three VMs.
func newMCI(name string) map[string]any {
	return map[string]any{
		"name": name, "description": "made through the Tumblebug dialect",
		"subGroups": []any{
			map[string]any{"name": "web", "subGroupSize": 2, "specId": "aws+ap-northeast-2+t3.small", "imageId": "ubuntu22.04"},
			map[string]any{"name": "db", "subGroupSize": 1, "specId": "gcp+asia-northeast3+e2-medium", "imageId": "ubuntu22.04"},
		},
	}
}

// settle advances the manual clock past every phase due (the MCI's three create phases and
// its VMs').
func settle(t testing.TB, sim *simtest.Sim) {
	t.Helper()
	for range 10 {
		sim.Advance(t, 2*time.Second)
	}
}

func start(t testing.TB, opts ...simtest.Option) (*simtest.Sim, string) {
	sim := simtest.Start(t, append([]simtest.Option{simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker()}, opts...)...)
	return sim, sim.URL + httpapi.TumblebugPrefix + "/ns/default"
}

// An MCI made through the dialect is the engine's mci: /v1 shows it (its uid is the UUID of
// its /v1 ID) with its VMs, its history and its moves, and the dialect shows what /v1 does.
func TestMCIIsTheV1Object(t *testing.T) {
	sim, tb := start(t)
	ctx := context.Background()
	x := do(t, "POST", tb+"/mciDynamic", "", newMCI("mci01"))
	if x.status != http.StatusOK || x.out["id"] != "mci01" {
		t.Fatalf("create = %d %s, want 200 with id mci01", x.status, x.raw)
	}
	id, ok := dialect.IDOf("mci", x.out["uid"].(string))
	if !ok {
		t.Fatalf("uid %v is not an mci's UUID", x.out["uid"])
	}
	o, err := sim.Client.Get(ctx, "mcis", id)
	if err != nil || o.Name != "mci01" {
		t.Fatalf("GET /v1/mcis/%s = %v, %v; want mci01", id, o, err)
	}
	vms, err := sim.Client.ListAll(ctx, "vms", client.ListOptions{ParentID: id})
	if err != nil || len(vms) != 3 {
		t.Fatalf("/v1 VMs of the MCI = %v, %v; want 3", vms, err)
	}
	sg := o.Spec["subgroups"].([]any)[1].(map[string]any)
	if sg["name"] != "db" || sg["csp"] != "gcp" || sg["region"] != "asia-northeast3" || sg["spec"] != "e2-medium" || sg["count"] != float64(1) {
		t.Errorf("/v1 subgroup db = %v, want gcp, asia-northeast3, e2-medium, count 1 (from specId and subGroupSize)", sg)
	}

	settle(t, sim)
	x = do(t, "GET", tb+"/mci/mci01?option=status", "", nil)
	st, _ := x.out["status"].(map[string]any)
	if x.status != http.StatusOK || st["status"] != "Running:3 (R:3/3)" || st["targetAction"] != "None" {
		t.Fatalf("status = %d %s, want {\"status\": {\"status\": \"Running:3 (R:3/3)\", targetAction None}}", x.status, x.raw)
	}
	if c := st["statusCount"].(map[string]any); c["countRunning"] != float64(3) || c["countTotal"] != float64(3) {
		t.Errorf("statusCount = %v, want 3 of 3 running", c)
	}
	if len(st["vm"].([]any)) != 3 {
		t.Errorf("status vm = %v, want 3", st["vm"])
	}

	// Upstream's control form and the seed's both move the /v1 object.
	for _, step := range []struct{ method, path, want string }{
		{"GET", "/control/mci/mci01?action=suspend", "Suspended"},
		{"POST", "/mci/mci01?action=resume", "Running"},
	} {
		x := do(t, step.method, tb+step.path, "", nil)
		if x.status != http.StatusOK || !strings.Contains(x.out["message"].(string), "poll") {
			t.Fatalf("%s %s = %d %s, want 200 with a message", step.method, step.path, x.status, x.raw)
		}
		busy := do(t, "GET", tb+"/mci/mci01", "", nil)
		if busy.out["targetAction"] == "None" {
			t.Errorf("during %s: targetAction = None, want the action", step.path)
		}
		settle(t, sim)
		o, err := sim.Client.Get(ctx, "mcis", id)
		got := do(t, "GET", tb+"/mci/mci01", "", nil)
		if err != nil || o.State != step.want || !strings.HasPrefix(got.out["status"].(string), step.want+":3") {
			t.Fatalf("after %s: /v1 %v (%v), dialect %v; want %s", step.path, o.State, err, got.out["status"], step.want)
		}
	}
	// A VM's control, upstream's form and the seed's: the VM moves, the MCI's status follows.
	if x := do(t, "GET", tb+"/control/mci/mci01/vm/web-1?action=suspend", "", nil); x.status != http.StatusOK {
		t.Fatalf("suspend VM web-1 = %d %s, want 200", x.status, x.raw)
	}
	settle(t, sim)
	var web1 *client.Object
	if vms, err = sim.Client.ListAll(ctx, "vms", client.ListOptions{ParentID: id}); err != nil {
		t.Fatal(err)
	}
	for i := range vms {
		if vms[i].Name == "mci01-web-1" {
			web1 = &vms[i]
		}
	}
	if web1 == nil || web1.State != "Suspended" {
		t.Fatalf("/v1 VM mci01-web-1 = %v, want Suspended", web1)
	}
	if x := do(t, "GET", tb+"/mci/mci01?option=status", "", nil); x.out["status"].(map[string]any)["status"] != "Partial-Running:2 (R:2/3)" {
		t.Errorf("status with one VM suspended = %s, want Partial-Running:2 (R:2/3)", x.raw)
	}
	if x := do(t, "GET", tb+"/mci/mci01/vm/web-1?option=status", "", nil); x.out["status"] != "Suspended" || x.out["id"] != "web-1" {
		t.Errorf("VM status = %s, want web-1 Suspended", x.raw)
	}
	if x := do(t, "POST", tb+"/mci/mci01/vm/web-1?action=resume", "", nil); x.status != http.StatusOK {
		t.Fatalf("seed's resume of VM web-1 = %d %s, want 200", x.status, x.raw)
	}
	settle(t, sim)
	if x := do(t, "GET", tb+"/mci/mci01", "", nil); x.out["status"] != "Running:3 (R:3/3)" {
		t.Errorf("status after the VM's resume = %v, want Running:3 (R:3/3)", x.out["status"])
	}

	history, err := sim.Client.Events(ctx, "mcis", id)
	if err != nil || len(history) < 6 {
		t.Fatalf("/v1 history = %v, %v; want the create, suspend and resume", history, err)
	}

	// Deleted through the dialect (terminating first), gone from /v1 with its VMs.
	if x := do(t, "DELETE", tb+"/mci/mci01?option=terminate", "", nil); x.status != http.StatusOK {
		t.Fatalf("delete = %d %s, want 200", x.status, x.raw)
	}
	settle(t, sim)
	if _, err := sim.Client.Get(ctx, "mcis", id); !client.IsNotFound(err) {
		t.Fatalf("/v1 GET after the dialect's delete = %v, want not found", err)
	}
	if x := do(t, "GET", tb+"/mci/mci01", "", nil); x.status != http.StatusNotFound {
		t.Fatalf("GET after delete = %d %s, want 404", x.status, x.raw)
	}
}

// An MCI's name is its ID in the namespace: one made through /v1 a moment after the dialect
// read the names is found at once, and its name is taken.
func TestNames(t *testing.T) {
	sim, tb := start(t)
	ctx := context.Background()
	if x := do(t, "GET", tb+"/mci/early", "", nil); x.status != http.StatusNotFound {
		t.Fatalf("GET before any MCI = %d %s, want 404", x.status, x.raw)
	}
	spec := map[string]any{"subgroups": []any{map[string]any{"name": "g", "csp": "aws", "region": "r"}}}
	if _, err := sim.Client.Create(ctx, "mcis", client.CreateRequest{Name: "early", Spec: spec}); err != nil {
		t.Fatal(err)
	}
	if x := do(t, "GET", tb+"/mci/early", "", nil); x.status != http.StatusOK || x.out["id"] != "early" {
		t.Fatalf("GET of the MCI /v1 just made = %d %s, want 200", x.status, x.raw)
	}
	if x := do(t, "POST", tb+"/mciDynamic", "", newMCI("early")); x.status != http.StatusConflict {
		t.Fatalf("create with its name = %d %s, want 409", x.status, x.raw)
	}
}

// Every refusal is Tumblebug's {"message"}, with a status that fits and a message that says
// what to do; none is a 500.
func TestErrors(t *testing.T) {
	sim, tb := start(t, simtest.WithTokens(map[string]string{"tok-a": "a", "tok-b": "b"}), simtest.WithAdminToken("admin"))
	do(t, "POST", tb+"/mciDynamic", "tok-a", newMCI("taken"))
	with := func(edit func(map[string]any)) map[string]any {
		m := newMCI("fresh")
		edit(m)
		return m
	}
	sg0 := func(m map[string]any) map[string]any { return m["subGroups"].([]any)[0].(map[string]any) }
	tests := []struct {
		name, method, path, token string
		body                      any
		status                    int
		msg                       string
	}{
		{"duplicate name", "POST", "/mciDynamic", "tok-a", newMCI("taken"), 409, "The mci taken already exists"},
		{"no name", "POST", "/mciDynamic", "tok-a", with(func(m map[string]any) { m["name"] = "" }), 400, "name is required"},
		{"no subgroups", "POST", "/mciDynamic", "tok-a", with(func(m map[string]any) { delete(m, "subGroups") }), 400, "subGroups is required"},
		{"bad specId", "POST", "/mciDynamic", "tok-a", with(func(m map[string]any) { sg0(m)["specId"] = "t3.small" }), 400, "csp+region+spec"},
		{"too many VMs", "POST", "/mciDynamic", "tok-a", with(func(m map[string]any) { sg0(m)["subGroupSize"] = 1000 }), 400, "count"},
		{"bad JSON", "POST", "/mciDynamic", "tok-a", "[", 400, "invalid JSON"},
		{"too large", "POST", "/mciDynamic", "tok-a", `{"name": "` + strings.Repeat("x", 2<<20) + `"}`, 413, "over the limit of 1048576 bytes"},
		{"empty body", "POST", "/mciDynamic", "tok-a", "", 400, "empty"},
		{"bad create option", "POST", "/mciDynamic?option=later", "tok-a", newMCI("later"), 400, "create without it, or with option=hold"},
		{"other namespace", "GET", "@/ns/ns1/mci", "tok-a", nil, 404, "namespace ns1 does not exist"},
		{"unknown MCI", "GET", "/mci/nope", "tok-a", nil, 404, "The mci nope does not exist"},
		{"another tenant's", "GET", "/mci/taken", "tok-b", nil, 404, "does not exist"},
		{"another tenant's control", "GET", "/control/mci/taken?action=suspend", "tok-b", nil, 404, "does not exist"},
		{"bad option", "GET", "/mci/taken?option=accessinfo", "tok-a", nil, 400, "accessinfo is not modelled"},
		{"bad list option", "GET", "/mci?option=all", "tok-a", nil, 400, "id, simple, status"},
		{"bad action", "GET", "/control/mci/taken?action=stop", "tok-a", nil, 400, "'action' should be one of these: suspend, resume"},
		{"no action (seed form)", "POST", "/mci/taken", "tok-a", nil, 400, "'action' should be one of these"},
		{"bad force", "GET", "/control/mci/taken?action=suspend&force=yes", "tok-a", nil, 400, "force"},
		{"continue a busy MCI", "GET", "/control/mci/taken?action=continue", "tok-a", nil, 409, "MCI taken is busy"},
		{"busy", "GET", "/control/mci/taken?action=suspend", "tok-a", nil, 409, "MCI taken is busy"},
		{"delete a live MCI", "DELETE", "/mci/taken", "tok-a", nil, 409, "option=terminate"},
		{"bad delete option", "DELETE", "/mci/taken?option=now", "tok-a", nil, 400, "terminate, force"},
		{"no auth", "GET", "/mci", "", nil, 401, "Basic auth"},
		{"unknown token", "GET", "/mci", "nope", nil, 401, "Basic auth"},
		{"admin token", "GET", "/mci", "admin", nil, 403, "MCIs belong to tenants: send a tenant's token"},
		{"other route", "GET", "/resources/spec", "tok-a", nil, 404, "GET /ns/{nsId}/mci"},
		{"unknown VM", "GET", "/mci/taken/vm/web-9", "tok-a", nil, 404, "The vm web-9 does not exist in MCI taken"},
		{"unknown VM's control", "GET", "/control/mci/taken/vm/web-9?action=suspend", "tok-a", nil, 404, "The vm web-9"},
		{"VM refine", "GET", "/control/mci/taken/vm/web-1?action=refine", "tok-a", nil, 400, "suspend, resume, reboot, terminate"},
		{"busy VM", "POST", "/mci/taken/vm/web-1?action=suspend", "tok-a", nil, 409, "VM web-1 is busy"},
	}
	for _, tt := range tests {
		url := tb + tt.path
		if rest, ok := strings.CutPrefix(tt.path, "@"); ok { // from /tumblebug
			url = sim.URL + httpapi.TumblebugPrefix + rest
		}
		x := do(t, tt.method, url, tt.token, tt.body)
		msg, _ := x.out["message"].(string)
		if x.status != tt.status || len(x.out) != 1 || !strings.Contains(msg, tt.msg) {
			t.Errorf("%s: %s %s = %d %s, want %d with %q", tt.name, tt.method, tt.path, x.status, x.raw, tt.status, tt.msg)
		}
	}
	settle(t, sim)
	if x := do(t, "GET", tb+"/control/mci/taken?action=resume", "tok-a", nil); x.status != http.StatusConflict || !strings.Contains(x.out["message"].(string), "Running") {
		t.Errorf("resume a running MCI = %d %s, want 409 naming Running", x.status, x.raw)
	}
	for _, action := range []string{"continue", "withdraw"} {
		if x := do(t, "POST", tb+"/mci/taken?action="+action, "tok-a", nil); x.status != http.StatusConflict || !strings.Contains(x.out["message"].(string), "is not held (it is Running)") {
			t.Errorf("%s a running MCI = %d %s, want 409: not held", action, x.status, x.raw)
		}
	}
	if x := do(t, "GET", tb+"/mci?option=id", "tok-b", nil); x.status != http.StatusOK || len(x.out["output"].([]any)) != 0 {
		t.Errorf("tenant b lists %s, want no MCIs", x.raw)
	}
	if x := do(t, "GET", tb+"/mci?option=id", "tok-a", nil); len(x.out["output"].([]any)) != 1 {
		t.Errorf("tenant a lists %s, want its one MCI", x.raw)
	}
}

// A tenant's http_error fault rule for MCIs answers the dialect's requests too, in
// Tumblebug's shape; an Idempotency-Key makes a create's retry get the first MCI (not the
// duplicate-name refusal).
func TestFaultsAndIdempotency(t *testing.T) {
	sim, tb := start(t)
	ctx := context.Background()
	req := func() exchange {
		r, err := http.NewRequestWithContext(ctx, "POST", tb+"/mciDynamic", strings.NewReader(`{"name": "once", "subGroups": [{"specId": "aws+us-east-1+t3.small", "imageId": "i"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Idempotency-Key", "k1")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return exchange{status: resp.StatusCode, out: out}
	}
	a, b := req(), req()
	if a.status != http.StatusOK || b.status != http.StatusOK || a.out["uid"] != b.out["uid"] {
		t.Fatalf("create and its retry = %d %v, %d %v; want 200 with one MCI", a.status, a.out, b.status, b.out)
	}
	if vms := a.out["vm"].([]any); len(vms) != 1 || vms[0].(map[string]any)["subGroupId"] != "g1" {
		t.Errorf("VMs = %v, want one of subgroup g1 (the default name and size)", vms)
	}
	if _, err := sim.Client.AddFault(ctx, client.FaultRule{Kind: "mci", Mode: "http_error", HTTPStatus: 503, Code: "unavailable", Message: "tumblebug is down", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if x := do(t, "GET", tb+"/mci", "", nil); x.status != http.StatusServiceUnavailable || x.out["message"] != "tumblebug is down" {
		t.Fatalf("with the fault = %d %s, want 503 tumblebug is down", x.status, x.raw)
	}
	if x := do(t, "GET", tb+"/mci", "", nil); x.status != http.StatusOK {
		t.Fatalf("after the fault's one firing = %d %s, want 200", x.status, x.raw)
	}
}

// option=hold makes the MCI and holds it before provisioning: it shows as Holding with no VMs
// whatever time passes, refuses other actions naming continue and withdraw, and a plain
// DELETE names withdraw. continue (upstream's GET …/control/…) provisions it to Running, the
// same object through /v1; withdraw (the seed's POST …?action=) and DELETE ?option=terminate
// remove a held MCI.
func TestHold(t *testing.T) {
	sim, tb := start(t)
	ctx := context.Background()
	x := do(t, "POST", tb+"/mciDynamic?option=hold", "", newMCI("held"))
	if x.status != http.StatusOK || x.out["status"] != "Holding:0 (R:0/0)" || len(x.out["vm"].([]any)) != 0 ||
		x.out["targetAction"] != "Create" || x.out["targetStatus"] != "Running" {
		t.Fatalf("held create = %d %s, want 200 Holding:0 (R:0/0) with no VM, target Create → Running", x.status, x.raw)
	}
	settle(t, sim)
	st := do(t, "GET", tb+"/mci/held?option=status", "", nil)
	if s, _ := st.out["status"].(map[string]any); s["status"] != "Holding:0 (R:0/0)" || len(s["vm"].([]any)) != 0 {
		t.Fatalf("held MCI after time passed = %s, want still Holding with no VM", st.raw)
	}
	for _, tt := range []struct{ name, method, path, msg string }{
		{"suspend", "GET", "/control/mci/held?action=suspend", "continue, withdraw"},
		{"forced terminate", "GET", "/control/mci/held?action=terminate&force=true", "continue, withdraw"},
		{"delete", "DELETE", "/mci/held", "withdraw it (GET /ns/default/control/mci/held?action=withdraw)"},
	} {
		if x := do(t, tt.method, tb+tt.path, "", nil); x.status != http.StatusConflict || !strings.Contains(x.out["message"].(string), tt.msg) {
			t.Errorf("%s a held MCI = %d %s, want 409 naming %q", tt.name, x.status, x.raw, tt.msg)
		}
	}

	x = do(t, "GET", tb+"/control/mci/held?action=continue", "", nil)
	if x.status != http.StatusOK || !strings.HasPrefix(x.out["message"].(string), "Continue the holding MCI held") {
		t.Fatalf("continue = %d %s", x.status, x.raw)
	}
	if s := do(t, "GET", tb+"/mci/held", "", nil); s.out["targetAction"] != "Create" || len(s.out["vm"].([]any)) != 3 {
		t.Errorf("continued MCI = %s, want target Create with its 3 VMs made", s.raw)
	}
	settle(t, sim)
	info := do(t, "GET", tb+"/mci/held", "", nil)
	if info.out["status"] != "Running:3 (R:3/3)" {
		t.Fatalf("continued MCI = %s, want Running:3 (R:3/3)", info.raw)
	}
	id, _ := dialect.IDOf("mci", info.out["uid"].(string))
	if o, err := sim.Client.Get(ctx, "mcis", id); err != nil || o.State != "Running" {
		t.Errorf("/v1 sees the continued MCI as %v, %v; want Running", o, err)
	}

	for _, tt := range []struct{ name, method, path string }{
		{"withdraw (seed form)", "POST", "/mci/%s?action=withdraw"},
		{"withdraw", "GET", "/control/mci/%s?action=withdraw"},
		{"delete with option=terminate", "DELETE", "/mci/%s?option=terminate"},
	} {
		name := "w" + strings.ReplaceAll(strings.ReplaceAll(tt.name, " ", "-"), "(", "")
		name = strings.ReplaceAll(strings.ReplaceAll(name, ")", ""), "=", "-")
		if x := do(t, "POST", tb+"/mciDynamic?option=hold", "", newMCI(name)); x.status != http.StatusOK {
			t.Fatalf("held create %s = %d %s", name, x.status, x.raw)
		}
		if x := do(t, tt.method, tb+strings.ReplaceAll(tt.path, "%s", name), "", nil); x.status != http.StatusOK {
			t.Errorf("%s = %d %s, want 200", tt.name, x.status, x.raw)
		}
		if x := do(t, "GET", tb+"/mci/"+name, "", nil); x.status != http.StatusNotFound {
			t.Errorf("after %s: GET = %d %s, want 404", tt.name, x.status, x.raw)
		}
	}
	if vms, err := sim.Client.ListAll(ctx, "vms", client.ListOptions{}); err != nil || len(vms) != 3 {
		t.Errorf("VMs = %d, %v; want only the continued MCI's 3", len(vms), err)
	}
}
