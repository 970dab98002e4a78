package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// objectServer answers GET /v1/cloudspaces/{id} with a DEPLOYED cloudspace (404 for "gone"),
// counting the requests; each answer waits for release when it is set.
type objectServer struct {
	gets    atomic.Int32
	release chan struct{}
}

func (s *objectServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.gets.Add(1)
	if s.release != nil {
		<-s.release
	}
	id := r.PathValue("id")
	w.Header().Set("Content-Type", "application/json")
	if id == "gone" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such cloudspace"}}`))
		return
	}
	_ = json.NewEncoder(w).Encode(client.Object{ID: id, Kind: "cloudspace", State: "DEPLOYED", Static: true})
}

func newPlanReadsForTest(t *testing.T, s *objectServer, now func() time.Time) *planReads {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /v1/cloudspaces/{id}", s)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Endpoint: srv.URL, RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	return newPlanReads(c, now)
}

// TestPlanReadsShareOneGet: the children of one parent, planned at once, wait for one GET.
func TestPlanReadsShareOneGet(t *testing.T) {
	s := &objectServer{release: make(chan struct{})}
	reads := newPlanReadsForTest(t, s, time.Now)
	const children = 50
	var wg sync.WaitGroup
	errs := make(chan error, children)
	for range children {
		wg.Go(func() {
			o, err := reads.get(context.Background(), "cloudspaces", "cs-1")
			if err == nil && o.State != "DEPLOYED" {
				err = fmt.Errorf("got a %s cloudspace, want DEPLOYED", o.State)
			}
			errs <- err
		})
	}
	// Let the one GET through once it has arrived.
	simtest.Eventually(t, time.Minute, "the GET arriving", func() bool { return s.gets.Load() > 0 })
	close(s.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := s.gets.Load(); got != 1 {
		t.Errorf("%d concurrent reads of one parent sent %d GETs, want 1", children, got)
	}
	if _, err := reads.get(context.Background(), "cloudspaces", "cs-1"); err != nil {
		t.Fatal(err)
	}
	if got := s.gets.Load(); got != 1 {
		t.Errorf("a later read sent a GET (%d in all), want the cached object", got)
	}
}

// TestPlanReadsExpire: a read older than planReadMaxAge is read again; failures are not kept.
func TestPlanReadsExpire(t *testing.T) {
	s := &objectServer{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reads := newPlanReadsForTest(t, s, func() time.Time { return now })
	ctx := context.Background()
	tests := []struct {
		name     string
		advance  time.Duration
		id       string
		wantGets int32
	}{
		{"first read", 0, "cs-1", 1},
		{"within the max age", planReadMaxAge, "cs-1", 1},
		{"past the max age", time.Millisecond, "cs-1", 2},
		{"a missing object", 0, "gone", 3},
		{"a missing object again", 0, "gone", 4},
	}
	for _, tt := range tests {
		now = now.Add(tt.advance)
		_, err := reads.get(ctx, "cloudspaces", tt.id)
		if (err != nil) != (tt.id == "gone") {
			t.Fatalf("%s: get(%q) error = %v", tt.name, tt.id, err)
		}
		if got := s.gets.Load(); got != tt.wantGets {
			t.Errorf("%s: %d GETs in all, want %d", tt.name, got, tt.wantGets)
		}
	}
}

// TestPlanReadsPutForget: objects the provider read or changed itself answer without a GET
// until forgotten.
func TestPlanReadsPutForget(t *testing.T) {
	s := &objectServer{}
	reads := newPlanReadsForTest(t, s, time.Now)
	ctx := context.Background()
	reads.put("cloudspaces", &client.Object{ID: "cs-1", State: "PAUSED", Static: true})
	o, err := reads.get(ctx, "cloudspaces", "cs-1")
	if err != nil || o.State != "PAUSED" || s.gets.Load() != 0 {
		t.Fatalf("after put: get = %v, %v with %d GETs, want the PAUSED object put and no GET", o, err, s.gets.Load())
	}
	reads.forget("cloudspaces", "cs-1")
	o, err = reads.get(ctx, "cloudspaces", "cs-1")
	if err != nil || o.State != "DEPLOYED" || s.gets.Load() != 1 {
		t.Fatalf("after forget: get = %v, %v with %d GETs, want the DEPLOYED object read with one GET", o, err, s.gets.Load())
	}
}
