package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// browserClient is an HTTP client with a cookie jar, as a browser has.
func browserClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}
}

type session struct {
	SignedIn     bool   `json:"signed_in"`
	AuthRequired bool   `json:"auth_required"`
	Tenant       string `json:"tenant"`
	CSRF         string `json:"csrf"`
}

func send(t *testing.T, hc *http.Client, method, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func signIn(t *testing.T, hc *http.Client, base, token string) session {
	t.Helper()
	status, body := send(t, hc, http.MethodPost, base+"/ui/session", `{"token":"`+token+`"}`, nil)
	if status != http.StatusOK {
		t.Fatalf("sign in with %q = %d %s", token, status, body)
	}
	var s session
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSessionAndCSRF: with tokens, nothing is served without a session; a session reaches
// the API as its tenant; state-changing requests need the session's CSRF token and this
// site's origin; sign-out ends the session.
func TestSessionAndCSRF(t *testing.T) {
	s := startSim(t, 1, map[string]string{"tok-acme": "acme", "tok-globex": "globex"})
	if _, err := s.client(t, "tok-globex").Create(context.Background(), "accounts", client.CreateRequest{Name: "globex"}); err != nil {
		t.Fatal(err)
	}
	hc := browserClient(t)

	status, body := send(t, hc, http.MethodGet, s.URL+"/ui/session", "", nil)
	if status != http.StatusOK || !strings.Contains(body, `"signed_in":false`) || !strings.Contains(body, `"auth_required":true`) {
		t.Fatalf("session before sign-in = %d %s", status, body)
	}
	for _, path := range []string{"/ui/snapshot", "/ui/api/v1/sim/faults", "/ui/stream?after=0", "/ui/diagram/machine"} {
		if status, body := send(t, hc, http.MethodGet, s.URL+path, "", nil); status != http.StatusUnauthorized {
			t.Errorf("GET %s without a session = %d %s, want 401", path, status, body)
		}
	}
	if status, _ := send(t, hc, http.MethodPost, s.URL+"/ui/session", `{"token":"nope"}`, nil); status != http.StatusUnauthorized {
		t.Errorf("sign-in with a wrong token = %d, want 401", status)
	}
	if status, _ := send(t, hc, http.MethodPost, s.URL+"/ui/session", `{"token":"tok-acme"}`, map[string]string{"Origin": "https://evil.example"}); status != http.StatusForbidden {
		t.Errorf("sign-in from another site = %d, want 403", status)
	}

	sess := signIn(t, hc, s.URL, "tok-acme")
	if sess.Tenant != "acme" || len(sess.CSRF) < 32 {
		t.Fatalf("session = %+v", sess)
	}
	// Reads go through as acme.
	status, body = send(t, hc, http.MethodGet, s.URL+"/ui/api/v1/accounts", "", nil)
	if status != http.StatusOK || strings.Contains(body, "globex") {
		t.Errorf("acme's accounts = %d %s", status, body)
	}
	// Writes need the CSRF token, and this origin.
	create := `{"name":"acme-1"}`
	tests := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no CSRF token", nil, http.StatusForbidden},
		{"wrong CSRF token", map[string]string{"X-CSRF-Token": strings.Repeat("0", 64)}, http.StatusForbidden},
		{"another site", map[string]string{"X-CSRF-Token": sess.CSRF, "Origin": "https://evil.example"}, http.StatusForbidden},
		{"cross-site fetch", map[string]string{"X-CSRF-Token": sess.CSRF, "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"CSRF token and same origin", map[string]string{"X-CSRF-Token": sess.CSRF, "Origin": s.URL}, http.StatusCreated},
	}
	for _, tt := range tests {
		if status, body := send(t, hc, http.MethodPost, s.URL+"/ui/api/v1/accounts", create, tt.header); status != tt.want {
			t.Errorf("%s: POST /ui/api/v1/accounts = %d %s, want %d", tt.name, status, body, tt.want)
		}
	}
	accts, err := s.client(t, "tok-acme").ListAll(context.Background(), "accounts", client.ListOptions{})
	if err != nil || len(accts) != 1 {
		t.Errorf("acme's accounts after the writes = %v, %v; want the one the CSRF-carrying request made", accts, err)
	}
	// A bearer header sent by the page is not trusted: the session's token is used.
	status, body = send(t, hc, http.MethodGet, s.URL+"/ui/api/v1/accounts", "", map[string]string{"Authorization": "Bearer tok-globex"})
	if status != http.StatusOK || strings.Contains(body, `"globex"`) {
		t.Errorf("with a foreign bearer header = %d %s", status, body)
	}

	// Sign-out needs the CSRF token too, then the session is gone.
	if status, _ := send(t, hc, http.MethodDelete, s.URL+"/ui/session", "", nil); status != http.StatusForbidden {
		t.Errorf("sign-out without CSRF = %d, want 403", status)
	}
	if status, _ := send(t, hc, http.MethodDelete, s.URL+"/ui/session", "", map[string]string{"X-CSRF-Token": sess.CSRF}); status != http.StatusNoContent {
		t.Errorf("sign-out = %d, want 204", status)
	}
	if status, _ := send(t, hc, http.MethodGet, s.URL+"/ui/api/v1/accounts", "", nil); status != http.StatusUnauthorized {
		t.Errorf("after sign-out = %d, want 401", status)
	}
}

// TestOpenSession: without tokens the page gets a session at once (for its CSRF token), and
// writes still need that token.
func TestOpenSession(t *testing.T) {
	s := startSim(t, 1, nil)
	hc := browserClient(t)
	status, body := send(t, hc, http.MethodGet, s.URL+"/", "", nil)
	if status != http.StatusOK || !strings.Contains(body, "/ui/assets/app.js") {
		t.Fatalf("GET / = %d", status)
	}
	for _, bad := range []string{"http://", "https://"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page refers to %q: it must work offline", bad)
		}
	}
	var sess session
	_, body = send(t, hc, http.MethodGet, s.URL+"/ui/session", "", nil)
	if err := json.Unmarshal([]byte(body), &sess); err != nil || !sess.SignedIn || sess.AuthRequired || sess.CSRF == "" {
		t.Fatalf("open session = %s (%v)", body, err)
	}
	if status, _ := send(t, hc, http.MethodPost, s.URL+"/ui/api/v1/sim/reset", "", nil); status != http.StatusForbidden {
		t.Errorf("reset without CSRF = %d, want 403", status)
	}
	if status, _ := send(t, hc, http.MethodPost, s.URL+"/ui/api/v1/sim/reset", "", map[string]string{"X-CSRF-Token": sess.CSRF}); status != http.StatusNoContent {
		t.Errorf("reset with CSRF = %d, want 204", status)
	}
	// Another browser (no cookie) cannot use this one's token.
	if status, _ := send(t, browserClient(t), http.MethodPost, s.URL+"/ui/api/v1/sim/reset", "", map[string]string{"X-CSRF-Token": sess.CSRF}); status != http.StatusUnauthorized {
		t.Errorf("reset with a stolen CSRF token and no session = %d, want 401", status)
	}
}

// TestAssets: the assets are embedded; the Mermaid bundle is served gzipped to browsers that
// accept it and unpacked to the others.
func TestAssets(t *testing.T) {
	s := startSim(t, 1, nil)
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, tt := range []struct {
		path, acceptEncoding, wantEncoding, wantType string
	}{
		{"/ui/assets/app.js", "", "", "text/javascript"},
		{"/ui/assets/style.css", "", "", "text/css"},
		{"/ui/assets/mermaid.min.js", "gzip", "gzip", "text/javascript"},
		{"/ui/assets/mermaid.min.js", "", "", "text/javascript"},
	} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+tt.path, nil)
		if tt.acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", tt.acceptEncoding)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != tt.wantEncoding || !strings.HasPrefix(res.Header.Get("Content-Type"), tt.wantType) {
			t.Errorf("GET %s (Accept-Encoding %q) = %d, %q, %q", tt.path, tt.acceptEncoding, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Content-Type"))
		}
		if tt.wantEncoding == "" && tt.path == "/ui/assets/mermaid.min.js" && !strings.Contains(string(b[:min(len(b), 4096)]), "mermaid") {
			t.Errorf("unpacked Mermaid bundle starts %q", b[:min(len(b), 80)])
		}
	}
	if status, _ := send(t, hc, http.MethodGet, s.URL+"/ui/nope", "", nil); status != http.StatusNotFound {
		t.Errorf("GET /ui/nope = %d, want 404", status)
	}
}

// TestStream: the stream sends the tenant's changes as server-sent events from a snapshot's
// position, and a resync after a reset.
func TestStream(t *testing.T) {
	s := startSim(t, 0.01, nil)
	hc := browserClient(t)
	hc.Timeout = 0
	send(t, hc, http.MethodGet, s.URL+"/ui/session", "", nil) // the open session
	_, body := send(t, hc, http.MethodGet, s.URL+"/ui/snapshot", "", nil)
	var snap struct {
		Seq     string `json:"seq"`
		Objects []any  `json:"objects"`
	}
	if err := json.Unmarshal([]byte(body), &snap); err != nil || snap.Objects == nil {
		t.Fatalf("snapshot = %s (%v)", body, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/ui/stream?after="+url.QueryEscape(snap.Seq), nil)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream Content-Type = %q", ct)
	}
	events := make(chan [2]string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for {
			ev, data, ok := simtest.NextEvent(sc)
			if !ok {
				return
			}
			events <- [2]string{ev, data}
		}
	}()
	next := func(want string) string {
		t.Helper()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatalf("stream ended waiting for %s", want)
				}
				if e[0] == want {
					return e[1]
				}
			case <-ctx.Done():
				t.Fatalf("no %s event", want)
			}
		}
	}
	c := s.client(t, "")
	acct, err := c.Create(context.Background(), "accounts", client.CreateRequest{Name: "streamed"})
	if err != nil {
		t.Fatal(err)
	}
	if data := next("change"); !strings.Contains(data, acct.ID) || !strings.Contains(data, `"CONFIRMED"`) {
		t.Errorf("change event = %s", data)
	}
	if err := c.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	next("resync")
}

// TestSnapshotShowsLeaseEvents: the dashboard shows a lease's three events, as /v1 and the
// Blazar API do: start_lease, end_lease and before_end_lease an hour before the end.
func TestSnapshotShowsLeaseEvents(t *testing.T) {
	s := startSim(t, 0.01, nil)
	end := s.engine.Clock().Now().UTC().Add(48 * time.Hour).Truncate(time.Second)
	lease, err := s.client(t, "").Create(context.Background(), "leases", client.CreateRequest{Name: "l", Spec: map[string]any{
		"start_date": end.Add(-24 * time.Hour).Format(time.RFC3339), "end_date": end.Format(time.RFC3339)}})
	if err != nil {
		t.Fatal(err)
	}
	hc := browserClient(t)
	send(t, hc, http.MethodGet, s.URL+"/ui/session", "", nil) // the open session
	_, body := send(t, hc, http.MethodGet, s.URL+"/ui/snapshot", "", nil)
	var snap struct {
		Objects []struct {
			ID       string `json:"id"`
			Kind     string `json:"kind"`
			Name     string `json:"name"`
			ParentID string `json:"parent_id"`
			State    string `json:"state"`
		} `json:"objects"`
	}
	if err := json.Unmarshal([]byte(body), &snap); err != nil {
		t.Fatalf("snapshot = %s (%v)", body, err)
	}
	// The list shows them by name; an object's page reads it through the dashboard's API.
	got := map[string]any{}
	for _, o := range snap.Objects {
		if o.Kind != "event" || o.ParentID != lease.ID {
			continue
		}
		status, body := send(t, hc, http.MethodGet, s.URL+"/ui/api/v1/events/"+o.ID, "", nil)
		var ev client.Object
		if err := json.Unmarshal([]byte(body), &ev); status != http.StatusOK || err != nil {
			t.Fatalf("GET /ui/api/v1/events/%s = %d %s", o.ID, status, body)
		}
		got[o.Name] = fmt.Sprint(ev.Spec["event_type"], " ", o.State, " ", ev.Spec["time"])
	}
	want := map[string]any{"l-start_lease": "start_lease UNDONE " + end.Add(-24*time.Hour).Format(time.RFC3339),
		"l-end_lease":        "end_lease UNDONE " + end.Format(time.RFC3339),
		"l-before_end_lease": "before_end_lease UNDONE " + end.Add(-time.Hour).Format(time.RFC3339)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the snapshot's events of the lease = %v, want %v", got, want)
	}
}

// TestSnapshotShowsDialectObjects: objects made through the seed systems' own APIs (a
// Blazar lease, a Sahara cluster from its templates, a CB-Tumblebug MCI) are the objects the
// dashboard shows: its list has them by name, and its object API answers each as /v1 does,
// with the same history. No worker runs, so the histories hold still while both read them.
func TestSnapshotShowsDialectObjects(t *testing.T) {
	st := simtest.Start(t, simtest.WithoutWorker())
	s := &sim{URL: st.URL, engine: st.Engine}
	hc := browserClient(t)
	post := func(path string, body any) map[string]any {
		t.Helper()
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		status, out := send(t, hc, http.MethodPost, s.URL+path, string(raw), map[string]string{"Content-Type": "application/json"})
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); status >= 300 || err != nil {
			t.Fatalf("POST %s = %d %s", path, status, out)
		}
		return m
	}
	end := s.engine.Clock().Now().UTC().Add(48 * time.Hour).Format("2006-01-02 15:04")
	post("/blazar/v1/leases", map[string]any{"name": "bl", "start_date": "now", "end_date": end,
		"reservations": []any{map[string]any{"resource_type": "physical:host", "min": "1", "max": "2"}}, "events": []any{}})
	ngt := post("/sahara/v2/node-group-templates", map[string]any{"name": "ng1", "plugin_name": "vanilla",
		"plugin_version": "2.7.1", "flavor_id": "m1.small", "node_processes": []string{"namenode", "datanode"}})["node_group_template"].(map[string]any)["id"]
	ct := post("/sahara/v2/cluster-templates", map[string]any{"name": "ct1", "plugin_name": "vanilla", "plugin_version": "2.7.1",
		"node_groups": []any{map[string]any{"name": "ng1", "count": 1, "node_group_template_id": ngt}}})["cluster_template"].(map[string]any)["id"]
	post("/sahara/v2/clusters", map[string]any{"name": "sc", "plugin_name": "vanilla", "plugin_version": "2.7.1",
		"cluster_template_id": ct, "default_image_id": "0b3f4f5e-1111-4222-8333-944445555666"})
	post("/tumblebug/ns/default/mciDynamic", map[string]any{"name": "tm", "subGroups": []any{
		map[string]any{"name": "web", "subGroupSize": 2, "specId": "aws+ap-northeast-2+t3.small", "imageId": "ubuntu22.04"}}})

	send(t, hc, http.MethodGet, s.URL+"/ui/session", "", nil) // the open session
	_, body := send(t, hc, http.MethodGet, s.URL+"/ui/snapshot", "", nil)
	var snap struct {
		Objects []struct{ ID, Kind, Name string } `json:"objects"`
	}
	if err := json.Unmarshal([]byte(body), &snap); err != nil {
		t.Fatalf("snapshot = %s (%v)", body, err)
	}
	c := s.client(t, "")
	found := map[string]bool{}
	for _, o := range snap.Objects {
		want := map[string]string{"lease": "bl", "cluster": "sc", "mci": "tm"}[o.Kind]
		if want == "" || o.Name != want {
			continue
		}
		found[o.Kind] = true
		collection := o.Kind + "s"
		status, body := send(t, hc, http.MethodGet, s.URL+"/ui/api/v1/"+collection+"/"+o.ID, "", nil)
		var seen client.Object
		if err := json.Unmarshal([]byte(body), &seen); status != http.StatusOK || err != nil {
			t.Fatalf("GET /ui/api/v1/%s/%s = %d %s", collection, o.ID, status, body)
		}
		v1, err := c.Get(context.Background(), collection, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if seen.ID != v1.ID || seen.State != v1.State || fmt.Sprint(seen.Spec) != fmt.Sprint(v1.Spec) {
			t.Errorf("the dashboard's %s %s = %s %v, /v1's = %s %v", o.Kind, o.ID, seen.State, seen.Spec, v1.State, v1.Spec)
		}
		_, evBody := send(t, hc, http.MethodGet, s.URL+"/ui/api/v1/"+collection+"/"+o.ID+"/events", "", nil)
		evs, err := c.Events(context.Background(), collection, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(evBody, fmt.Sprintf(`"seq":%d`, len(evs))) {
			t.Errorf("the dashboard's history of %s %s = %s, want its %d events as /v1 has them", o.Kind, o.ID, evBody, len(evs))
		}
	}
	if len(found) != 3 {
		t.Errorf("the dashboard lists %v of the lease, cluster and MCI made through the dialects: %s", found, body)
	}
}
