package blazar_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore/sqlitetest"
)

// t0 is the manual clock's start (a whole minute, as Blazar's request dates are).
var t0 = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)

// newLease is the body `openstack reservation lease create --start-date now --end-date
// "2030-01-02 05:04" --reservation resource_type=physical:host,min=1,max=2 NAME` sends.
func newLease(name string) map[string]any {
	return map[string]any{
		"name": name, "start_date": "now", "end_date": t0.Add(2 * time.Hour).Format("2006-01-02 15:04"),
		"reservations": []any{map[string]any{"resource_type": "physical:host", "min": "1", "max": "2",
			"hypervisor_properties": "", "resource_properties": "", "before_end": nil}},
		"events": []any{}, "before_end_date": nil,
	}
}

func leaseOf(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	l, ok := body["lease"].(map[string]any)
	if !ok {
		t.Fatalf("answer %v has no lease", body)
	}
	return l
}

// A lease made through the dialect is the engine's lease: /v1 shows it (by the ID its UUID
// maps to) with its children, its history and its moves, and the dialect shows what /v1 does.
func TestLeaseIsTheV1Object(t *testing.T) {
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker())
	bl := sim.URL + httpapi.BlazarPrefix
	st, body := dialecttest.Call(t, "POST", bl+"/leases", "", newLease("l1"))
	if st != http.StatusCreated {
		t.Fatalf("create = %d %v, want 201", st, body)
	}
	l := leaseOf(t, body)
	uuid, _ := l["id"].(string)
	id, ok := dialect.IDOf("lease", uuid)
	if !ok {
		t.Fatalf("lease id %q is not a lease's UUID", uuid)
	}
	if l["start_date"] != "2030-01-02T03:04:00.000000" || l["end_date"] != "2030-01-02T05:04:00.000000" {
		t.Errorf("dates = %v, %v, want Blazar's format of now and now+2h", l["start_date"], l["end_date"])
	}
	res, _ := l["reservations"].([]any)
	evs, _ := l["events"].([]any)
	if len(res) != 1 || len(evs) != 3 {
		t.Fatalf("lease has %d reservations and %d events, want 1 and 3 (start_lease, before_end_lease, end_lease): %v", len(res), len(evs), l)
	}
	if r := res[0].(map[string]any); r["min"] != float64(1) || r["max"] != float64(2) || r["status"] != "pending" || r["lease_id"] != uuid {
		t.Errorf("reservation = %v, want min 1, max 2 (from the CLI's strings), pending, of the lease", r)
	}

	ctx := context.Background()
	o, err := sim.Client.Get(ctx, "leases", id)
	if err != nil || o.Name != "l1" {
		t.Fatalf("GET /v1/leases/%s = %v, %v, want the lease l1", id, o, err)
	}
	kids, err := sim.Client.ListAll(ctx, "events", client.ListOptions{ParentID: id})
	if err != nil || len(kids) != 3 {
		t.Fatalf("/v1 events of the lease = %v, %v, want 3", kids, err)
	}
	for _, k := range kids {
		u, _ := dialect.UUID(k.ID)
		if !strings.Contains(dialecttest.MustJSON(t, evs), u) {
			t.Errorf("/v1 event %s (UUID %s) is not among the dialect's events %v", k.ID, u, evs)
		}
	}

	// The lease's life, moved by the clock, is seen alike through both doors.
	for _, step := range []struct {
		advance time.Duration
		want    string
	}{{time.Minute, "ACTIVE"}, {3 * time.Hour, "TERMINATED"}} {
		for range 10 { // each Tick completes what is due now; phases need a few
			sim.Advance(t, step.advance)
			step.advance = time.Minute
		}
		_, body := dialecttest.Call(t, "GET", bl+"/leases/"+uuid, "", nil)
		o, err := sim.Client.Get(ctx, "leases", id)
		if err != nil || o.State != step.want || leaseOf(t, body)["status"] != step.want {
			t.Fatalf("after the clock moved: /v1 %v (%v), dialect %v; want both %s", o.State, err, leaseOf(t, body)["status"], step.want)
		}
	}
	history, err := sim.Client.Events(ctx, "leases", id)
	if err != nil || len(history) < 5 {
		t.Fatalf("/v1 history = %v, %v, want CREATING … TERMINATED", history, err)
	}

	// Listed, shown as /v1 shows it; deleted through the dialect, gone from /v1.
	st, body = dialecttest.Call(t, "GET", bl+"/leases", "", nil)
	if ls, _ := body["leases"].([]any); st != http.StatusOK || len(ls) != 1 || ls[0].(map[string]any)["id"] != uuid {
		t.Fatalf("list = %d %v, want the one lease", st, body)
	}
	if st, body := dialecttest.Call(t, "DELETE", bl+"/leases/"+uuid, "", nil); st != http.StatusNoContent {
		t.Fatalf("delete = %d %v, want 204", st, body)
	}
	for range 10 {
		sim.Advance(t, time.Minute)
	}
	if _, err := sim.Client.Get(ctx, "leases", id); !client.IsNotFound(err) {
		t.Fatalf("/v1 GET after the dialect's delete = %v, want not found", err)
	}
}

// Prolonging an active lease moves its end (and its end_lease and before_end_lease events) by
// the hour asked, as
// `openstack reservation lease set --prolong-for 1h` sends it: a PUT of the new end date.
func TestLeaseProlong(t *testing.T) {
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker())
	bl := sim.URL + httpapi.BlazarPrefix
	_, body := dialecttest.Call(t, "POST", bl+"/leases", "", newLease("l1"))
	uuid := leaseOf(t, body)["id"].(string)
	for range 10 {
		sim.Advance(t, time.Minute)
	}
	st, body := dialecttest.Call(t, "PUT", bl+"/leases/"+uuid, "", map[string]any{"end_date": t0.Add(3 * time.Hour).Format("2006-01-02 15:04")})
	if st != http.StatusOK {
		t.Fatalf("PUT = %d %v, want 200", st, body)
	}
	for range 10 {
		sim.Advance(t, time.Second)
	}
	_, body = dialecttest.Call(t, "GET", bl+"/leases/"+uuid, "", nil)
	l := leaseOf(t, body)
	if l["end_date"] != "2030-01-02T06:04:00.000000" || l["status"] != "ACTIVE" {
		t.Fatalf("after the prolong: end %v, status %v; want 2030-01-02T06:04:00.000000, ACTIVE", l["end_date"], l["status"])
	}
	// The end_lease event is at the new end, before_end_lease an hour before it, UNDONE.
	want := map[string]string{"start_lease": "2030-01-02T03:04:00.000000", "before_end_lease": "2030-01-02T05:04:00.000000", "end_lease": "2030-01-02T06:04:00.000000"}
	evs := l["events"].([]any)
	if len(evs) != 3 {
		t.Fatalf("events = %v, want start_lease, before_end_lease and end_lease", evs)
	}
	for i, typ := range []string{"start_lease", "before_end_lease", "end_lease"} {
		e := evs[i].(map[string]any)
		if e["event_type"] != typ || e["time"] != want[typ] {
			t.Errorf("events[%d] = %v at %v, want %s at %s", i, e["event_type"], e["time"], typ, want[typ])
		}
	}
	if e := evs[1].(map[string]any); e["status"] != "UNDONE" {
		t.Errorf("before_end_lease is %v after the prolong, want UNDONE", e["status"])
	}
}

// Every refusal is Blazar's error shape, with the status Blazar gives and a message that
// says what to do; none is a 500.
func TestErrors(t *testing.T) {
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker(),
		simtest.WithTokens(map[string]string{"tok-a": "a", "tok-b": "b"}), simtest.WithAdminToken("admin"))
	bl := sim.URL + httpapi.BlazarPrefix
	_, body := dialecttest.Call(t, "POST", bl+"/leases", "tok-a", newLease("taken"))
	uuid := leaseOf(t, body)["id"].(string)
	var reservation string
	for _, r := range leaseOf(t, body)["reservations"].([]any) {
		reservation = r.(map[string]any)["id"].(string)
	}
	with := func(edit func(map[string]any)) map[string]any {
		l := newLease("fresh")
		edit(l)
		return l
	}
	tests := []struct {
		name, method, path, token string
		body                      any
		status                    int
		errName, msg              string
	}{
		{"duplicate name", "POST", "/leases", "tok-a", newLease("taken"), 409, "LeaseNameAlreadyExists", "The lease with name: taken already exists"},
		{"bad start date", "POST", "/leases", "tok-a", with(func(l map[string]any) { l["start_date"] = "2030-13-01 00:00" }), 400, "InvalidDate", "2030-13-01 00:00 is an invalid date. Required format: %Y-%m-%d %H:%M"},
		{"RFC 3339 end date", "POST", "/leases", "tok-a", with(func(l map[string]any) { l["end_date"] = "2030-01-02T05:04:00Z" }), 400, "InvalidDate", "Required format"},
		{"no end date", "POST", "/leases", "tok-a", with(func(l map[string]any) { delete(l, "end_date") }), 400, "MissingParameter", "end_date"},
		{"end before start", "POST", "/leases", "tok-a", with(func(l map[string]any) { l["start_date"] = "2030-01-03 00:00" }), 400, "InvalidInput", "end_date"},
		{"no name", "POST", "/leases", "tok-a", with(func(l map[string]any) { l["name"] = "" }), 400, "MissingParameter", "name"},
		{"bad min", "POST", "/leases", "tok-a", with(func(l map[string]any) { l["reservations"].([]any)[0].(map[string]any)["min"] = "one" }), 400, "InvalidInput", `reservations[0].min: "one" is not an integer`},
		{"custom event", "POST", "/leases", "tok-a", with(func(l map[string]any) { l["events"] = []any{map[string]any{"event_type": "x"}} }), 400, "InvalidInput", "drop --event"},
		{"before_end_date", "POST", "/leases", "tok-a", with(func(l map[string]any) { l["before_end_date"] = "2030-01-02 04:00" }), 400, "InvalidInput", "before_end_lease"},
		{"bad JSON", "POST", "/leases", "tok-a", "[", 400, "MalformedRequestBody", "invalid JSON"},
		{"too large", "POST", "/leases", "tok-a", map[string]any{"name": strings.Repeat("x", 2<<20)}, 413, "RequestEntityTooLarge", "over the limit of 1048576 bytes"},
		{"unknown UUID", "GET", "/leases/" + strings.Repeat("0", 8) + "-0000-8000-8000-000000000000", "tok-a", nil, 404, "NotFound", "not found"},
		{"a reservation's UUID", "GET", "/leases/" + reservation, "tok-a", nil, 404, "NotFound", reservation},
		{"a name", "GET", "/leases/taken", "tok-a", nil, 404, "NotFound", "taken"},
		{"another tenant's", "GET", "/leases/" + uuid, "tok-b", nil, 404, "NotFound", uuid},
		{"another tenant's delete", "DELETE", "/leases/" + uuid, "tok-b", nil, 404, "NotFound", uuid},
		{"rename", "PUT", "/leases/" + uuid, "tok-a", map[string]any{"name": "new"}, 400, "InvalidInput", "renaming"},
		{"bad new end", "PUT", "/leases/" + uuid, "tok-a", map[string]any{"end_date": "tomorrow"}, 400, "InvalidDate", "tomorrow"},
		{"busy", "PUT", "/leases/" + uuid, "tok-a", map[string]any{"end_date": "2030-01-02 06:00"}, 409, "InvalidStatus", "CREATING"},
		{"no token", "GET", "/leases", "", nil, 401, "NotAuthorized", "X-Auth-Token"},
		{"unknown token", "GET", "/leases", "nope", nil, 401, "NotAuthorized", "unknown token"},
		{"admin token", "GET", "/leases", "admin", nil, 403, "NotAuthorized", "tenant's token"},
		{"other route", "GET", "/hosts", "tok-a", nil, 404, "NotFound", "GET/POST /leases"},
	}
	for _, tt := range tests {
		st, body := dialecttest.Call(t, tt.method, bl+tt.path, tt.token, tt.body)
		msg, _ := body["error_message"].(string)
		if st != tt.status || body["error_code"] != float64(tt.status) || body["error_name"] != tt.errName || !strings.Contains(msg, tt.msg) {
			t.Errorf("%s: %s %s = %d %v, want %d %s with %q", tt.name, tt.method, tt.path, st, body, tt.status, tt.errName, tt.msg)
		}
	}
	// Tenant b has no leases; tenant a has its one.
	if _, body := dialecttest.Call(t, "GET", bl+"/leases", "tok-b", nil); len(body["leases"].([]any)) != 0 {
		t.Errorf("tenant b lists %v, want none", body)
	}
}

// A tenant's http_error fault rule for leases answers the dialect's requests too, in
// Blazar's shape; an Idempotency-Key makes a create's retry get the first lease (not the
// duplicate-name refusal).
func TestFaultsAndIdempotency(t *testing.T) {
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker())
	bl := sim.URL + httpapi.BlazarPrefix
	ctx := context.Background()
	st1, b1 := dialecttest.Call(t, "POST", bl+"/leases", "", newLease("once"), "Idempotency-Key", "k1")
	st2, b2 := dialecttest.Call(t, "POST", bl+"/leases", "", newLease("once"), "Idempotency-Key", "k1")
	if st1 != http.StatusCreated || st2 != http.StatusCreated || leaseOf(t, b1)["id"] != leaseOf(t, b2)["id"] {
		t.Fatalf("create and its retry = %d %v, %d %v; want 201 with one lease", st1, b1, st2, b2)
	}
	if _, err := sim.Client.AddFault(ctx, client.FaultRule{Kind: "lease", Mode: "http_error", HTTPStatus: 503, Code: "unavailable", Message: "blazar is down", Count: 1}); err != nil {
		t.Fatal(err)
	}
	st, body := dialecttest.Call(t, "GET", bl+"/leases", "", nil)
	if st != http.StatusServiceUnavailable || body["error_message"] != "blazar is down" || body["error_code"] != float64(503) {
		t.Fatalf("with the fault = %d %v, want 503 blazar is down", st, body)
	}
	if st, body := dialecttest.Call(t, "GET", bl+"/leases", "", nil); st != http.StatusOK {
		t.Fatalf("after the fault's one firing = %d %v, want 200", st, body)
	}
}

// Lease names are unique per tenant through the dialect: a name /v1 gave a lease is seen
// once the dialect reads the names again (names.Refresh on the clock), and a deleted lease's
// name is free again.
func TestLeaseNames(t *testing.T) {
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker())
	bl := sim.URL + httpapi.BlazarPrefix
	ctx := context.Background()
	st, body := dialecttest.Call(t, "POST", bl+"/leases", "", newLease("a"))
	if st != http.StatusCreated {
		t.Fatalf("create a = %d %v", st, body)
	}
	uuid := leaseOf(t, body)["id"].(string)
	if _, err := sim.Client.Create(ctx, "leases", client.CreateRequest{Name: "b", Spec: map[string]any{"end_date": t0.Add(time.Hour).Format(time.RFC3339)}}); err != nil {
		t.Fatal(err)
	}
	sim.Advance(t, 2*time.Second)
	for _, name := range []string{"a", "b"} {
		if st, body := dialecttest.Call(t, "POST", bl+"/leases", "", newLease(name)); st != http.StatusConflict {
			t.Errorf("create %s again = %d %v, want 409", name, st, body)
		}
	}
	if st, body := dialecttest.Call(t, "DELETE", bl+"/leases/"+uuid, "", nil); st != http.StatusNoContent {
		t.Fatalf("delete a = %d %v", st, body)
	}
	// Within names.Refresh of the last read: the name's lease is read and found gone.
	id, _ := dialect.IDOf("lease", uuid)
	for i := 0; ; i++ {
		if _, err := sim.Client.Get(ctx, "leases", id); client.IsNotFound(err) {
			break
		}
		if i == 10 {
			t.Fatal("the deleted lease is still there after 0.5 s on the clock")
		}
		sim.Advance(t, 50*time.Millisecond)
	}
	if st, body := dialecttest.Call(t, "POST", bl+"/leases", "", newLease("a")); st != http.StatusCreated {
		t.Errorf("create a after its delete = %d %v, want 201", st, body)
	}
}

// A lease's UUID outlives the process: a simulator restarted on the same SQLite file answers
// the UUID the first one gave with the same lease.
func TestUUIDAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	st := sqlitetest.Open(t, path)
	sim := simtest.Start(t, simtest.WithStore(st), simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker())
	_, body := dialecttest.Call(t, "POST", sim.URL+httpapi.BlazarPrefix+"/leases", "", newLease("kept"))
	uuid := leaseOf(t, body)["id"].(string)
	sim.HTTP.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	again := simtest.Start(t, simtest.WithStore(sqlitetest.Open(t, path)), simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker())
	st2, body := dialecttest.Call(t, "GET", again.URL+httpapi.BlazarPrefix+"/leases/"+uuid, "", nil)
	if st2 != http.StatusOK || leaseOf(t, body)["name"] != "kept" || leaseOf(t, body)["id"] != uuid {
		t.Fatalf("GET %s after the restart = %d %v, want the lease kept", uuid, st2, body)
	}
}
