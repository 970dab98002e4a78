package simulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// startJournaled starts a simulator with two tenants, acme (Sim.Client) and beta, whose
// journals keep size entries and bodyBytes of each body.
func startJournaled(t *testing.T, size, bodyBytes int) (sim *simtest.Sim, beta *client.Client) {
	t.Helper()
	sim = simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "acme", "tok-b": "beta"}),
		simtest.WithServerOptions(func(o *httpapi.ServerOptions) { o.JournalSize, o.JournalBodyBytes = size, bodyBytes }))
	beta, err := client.New(client.Config{Endpoint: sim.URL, Token: "tok-b", RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	return sim, beta
}

// send sends one request as a tenant and returns its status.
func send(t *testing.T, sim *simtest.Sim, token, method, path, body string, header ...string) int {
	t.Helper()
	req, err := http.NewRequest(method, sim.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestJournal: the journal answers what a tenant sent, and only that tenant, with the answer's
// status, error code, request ID, idempotency key and bounded bodies; filters select from it,
// reads of it are not recorded, and a reset empties it.
func TestJournal(t *testing.T) {
	ctx := context.Background()
	sim, beta := startJournaled(t, 100, 64)
	if got := send(t, sim, "tok-a", http.MethodPost, "/v1/accounts", `{"name":"acme"}`,
		"Idempotency-Key", "key-1", "X-Request-Id", "req-create", "User-Agent", "ci-script/2"); got != http.StatusCreated {
		t.Fatalf("create = %d", got)
	}
	if got := send(t, sim, "tok-a", http.MethodGet, "/v1/machines/machine-nope", ""); got != http.StatusNotFound {
		t.Fatalf("get = %d", got)
	}
	long := `{"name":"` + strings.Repeat("x", 200) + `"}`
	if got := send(t, sim, "tok-a", http.MethodPost, "/v1/accounts", long); got != http.StatusCreated {
		t.Fatalf("long create = %d", got)
	}
	if got := send(t, sim, "tok-b", http.MethodGet, "/v1/sim/faults", ""); got != http.StatusOK {
		t.Fatalf("beta's faults = %d", got)
	}
	if got := send(t, sim, "nope", http.MethodGet, "/v1/sim/faults", ""); got != http.StatusUnauthorized {
		t.Fatalf("an unknown token = %d", got)
	}

	all, err := sim.Client.Journal(ctx, client.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 3 || all.Size != 100 || all.Dropped != 0 {
		t.Fatalf("acme's journal = %+v, want its 3 requests of 100 kept (not beta's, not the unknown token's, not the journal reads)", all)
	}
	create, notFound, cut := all.Items[0], all.Items[1], all.Items[2]
	if create.Seq != 1 || create.Method != http.MethodPost || create.Path != "/v1/accounts" || create.Status != http.StatusCreated ||
		create.RequestID != "req-create" || create.IdempotencyKey != "key-1" || create.UserAgent != "ci-script/2" ||
		create.RequestBody != `{"name":"acme"}` || !strings.Contains(create.ResponseBody, `"id":"account-`) || create.ErrorCode != "" ||
		!create.Time.Equal(create.Time.UTC()) || create.Time.IsZero() {
		t.Errorf("the create's entry = %+v", create)
	}
	if notFound.Seq != 2 || notFound.Status != http.StatusNotFound || notFound.ErrorCode != string(wire.CodeNotFound) ||
		!strings.Contains(notFound.ErrorMessage, "machine-nope") || notFound.RequestID == "" {
		t.Errorf("the 404's entry = %+v", notFound)
	}
	if !cut.BodiesCut || len(cut.RequestBody) != 64 || len(cut.ResponseBody) != 64 {
		t.Errorf("the long create's bodies are not cut at 64 bytes: %+v", cut)
	}

	tests := []struct {
		name string
		q    client.JournalQuery
		want []int64
	}{
		{"status class", client.JournalQuery{Status: "4xx"}, []int64{2}},
		{"status code", client.JournalQuery{Status: "201"}, []int64{1, 3}},
		{"method", client.JournalQuery{Method: "post"}, []int64{1, 3}},
		{"path prefix", client.JournalQuery{Path: "/v1/machines"}, []int64{2}},
		{"request ID", client.JournalQuery{RequestID: "req-create"}, []int64{1}},
		{"after", client.JournalQuery{After: 1}, []int64{2, 3}},
		{"newest", client.JournalQuery{Limit: 2}, []int64{2, 3}},
	}
	for _, tt := range tests {
		got, err := sim.Client.Journal(ctx, tt.q)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var seqs []int64
		for _, e := range got.Items {
			seqs = append(seqs, e.Seq)
		}
		if fmt.Sprint(seqs) != fmt.Sprint(tt.want) {
			t.Errorf("Journal(%s) = seqs %v, want %v", tt.name, seqs, tt.want)
		}
	}
	if b, err := beta.Journal(ctx, client.JournalQuery{}); err != nil || len(b.Items) != 1 || b.Items[0].Path != "/v1/sim/faults" {
		t.Errorf("beta's journal = %+v (%v), want its one request", b, err)
	}

	// A reset empties the tenant's journal: the reset is its first entry after.
	if err := sim.Client.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := sim.Client.Journal(ctx, client.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Items) != 1 || after.Items[0].Path != "/v1/sim/reset" || after.Items[0].Seq != 4 {
		t.Errorf("after a reset the journal = %+v, want only the reset (seq 4)", after.Items)
	}
}

// TestJournalRefusals: a filter out of bounds is a 400 naming the bound, and a switched-off
// journal is a 404 saying how to switch it on, and records nothing.
func TestJournalRefusals(t *testing.T) {
	ctx := context.Background()
	sim, _ := startJournaled(t, 10, 0)
	tests := []struct{ query, want string }{
		{"limit=0", "from 1 to 10"},
		{"status=6xx", "such as 404"},
		{"status=abc", "such as 404"},
		{"after=-1", "whole number"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodGet, sim.URL+"/v1/sim/journal?"+tt.query, nil)
		req.Header.Set("Authorization", "Bearer tok-a")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r := &response{Status: resp.StatusCode, Header: resp.Header}
		r.Body, _ = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if e := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid); !strings.Contains(e.Message, tt.want) {
			t.Errorf("?%s: message %q does not say %q", tt.query, e.Message, tt.want)
		}
	}

	off, _ := startJournaled(t, -1, 0)
	if _, err := off.Client.Kinds(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := off.Client.Journal(ctx, client.JournalQuery{})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || !strings.Contains(ae.Message, "--journal-size") {
		t.Errorf("the journal switched off answers %v, want a 404 naming --journal-size", err)
	}
}

// TestJournalBounded: under concurrent load a tenant's journal keeps its newest size entries,
// numbered without gaps, and counts the ones it let go.
func TestJournalBounded(t *testing.T) {
	ctx := context.Background()
	const size, workers, each = 50, 8, 40
	sim, _ := startJournaled(t, size, 32)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := sim.Client.Faults(ctx); err != nil {
					t.Errorf("worker %d request %d: %v", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := sim.Client.Journal(ctx, client.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != size || got.Dropped != workers*each-size {
		t.Fatalf("journal holds %d entries and dropped %d, want %d and %d", len(got.Items), got.Dropped, size, workers*each-size)
	}
	for i, e := range got.Items {
		if want := got.Dropped + int64(i) + 1; e.Seq != want || e.Path != "/v1/sim/faults" || len(e.ResponseBody) > 32 {
			t.Fatalf("entry %d = seq %d %s (%d body bytes), want seq %d of a faults read, body at most 32 bytes", i, e.Seq, e.Path, len(e.ResponseBody), want)
		}
	}
}

// BenchmarkJournal measures what the request journal adds to a request, side by side in one
// run: three simulators (journal off, on, on with 4 KiB of each body) serve the same reads —
// one object, and a list of 20 whose answer is over 4 KiB — in-process (ServeHTTP, no
// network), in interleaved rounds so the machine's load falls on all three alike. It reports
// each one's min and median time per request over the rounds, and the medians' ratios to off.
func BenchmarkJournal(b *testing.B) {
	ctx := context.Background()
	type mode struct {
		name            string
		size, bodyBytes int
		sim             *simtest.Sim
		paths           []string
		rounds          []float64 // ns per request of each round
	}
	modes := []*mode{{name: "off", size: -1}, {name: "on", size: httpapi.DefaultJournalSize}, {name: "bodies", size: httpapi.DefaultJournalSize, bodyBytes: 4096}}
	for _, m := range modes {
		m.sim = simtest.Start(b, simtest.WithServerOptions(func(o *httpapi.ServerOptions) { o.JournalSize, o.JournalBodyBytes = m.size, m.bodyBytes }))
		acct, err := m.sim.Client.Create(ctx, "accounts", client.CreateRequest{Name: "a"})
		if err != nil {
			b.Fatal(err)
		}
		var last *client.Object
		for i := range 20 {
			if last, err = m.sim.Client.Create(ctx, "disks", client.CreateRequest{Name: fmt.Sprint("d", i), ParentID: acct.ID, Spec: map[string]any{"size_gb": 10}}); err != nil {
				b.Fatal(err)
			}
		}
		m.paths = []string{"/v1/disks/" + last.ID, "/v1/disks?limit=20"}
	}
	const perRound = 20
	serve := func(m *mode) {
		for i := range perRound {
			req := httptest.NewRequest(http.MethodGet, m.paths[i%len(m.paths)], nil)
			rec := &fakeWriter{header: http.Header{}}
			m.sim.Server.ServeHTTP(rec, req)
			if rec.status != http.StatusOK {
				b.Fatalf("%s: GET %s = %d", m.name, req.URL, rec.status)
			}
		}
	}
	for _, m := range modes {
		serve(m) // warm up
	}
	b.ResetTimer()
	for b.Loop() {
		for _, m := range modes {
			start := time.Now()
			serve(m)
			m.rounds = append(m.rounds, float64(time.Since(start).Nanoseconds())/perRound)
		}
	}
	b.StopTimer()
	medians := map[string]float64{}
	for _, m := range modes {
		slices.Sort(m.rounds)
		medians[m.name] = m.rounds[len(m.rounds)/2]
		b.ReportMetric(m.rounds[0], m.name+"-min-ns/req")
		b.ReportMetric(medians[m.name], m.name+"-median-ns/req")
	}
	b.ReportMetric(medians["on"]/medians["off"], "on/off")
	b.ReportMetric(medians["bodies"]/medians["off"], "bodies/off")
}
