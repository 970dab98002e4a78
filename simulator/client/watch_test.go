package client

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// streamed answers a create or an action with ?wait=static as the simulator does: the object
// at once, then the lines of rest, one JSON document each. A nil in rest holds the answer open
// until the client goes away.
func streamed(t *testing.T, status int, first any, rest ...any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if r.URL.Query().Get("wait") != "static" {
				t.Errorf("GET %s, want a long poll", r.URL)
			}
			writeJSON(w, http.StatusOK, machine("RUNNING", true)) // the fallback
			return
		}
		if r.URL.Query().Get("wait") != "static" || r.URL.Query().Get("timeout") == "" {
			t.Errorf("POST %s, want ?wait=static&timeout=...", r.URL)
		}
		w.Header().Set("Content-Type", ndjson)
		w.WriteHeader(status)
		enc := json.NewEncoder(w)
		_ = enc.Encode(first)
		w.(http.Flusher).Flush()
		for _, line := range rest {
			if line == nil {
				<-r.Context().Done()
				return
			}
			_ = enc.Encode(line)
		}
	}
}

func TestCreateWait(t *testing.T) {
	notFound := ErrorBody{Error: ErrorDetail{Code: string(CodeNotFound), Message: "not found"}}
	internal := ErrorBody{Error: ErrorDetail{Code: string(CodeInternal), Message: "disk full"}}
	tests := []struct {
		name    string
		handler func(t *testing.T) http.HandlerFunc
		// requests the server sees in all; 1 when the answer carried the static object.
		requests int32
		want     string // the state Wait returns; "" when it fails with not_found
	}{
		{"streamed to the end", func(t *testing.T) http.HandlerFunc {
			return streamed(t, http.StatusAccepted, machine("DEPLOYING", false), machine("RUNNING", true))
		}, 1, "RUNNING"},
		{"static at once", func(t *testing.T) http.HandlerFunc {
			return streamed(t, http.StatusCreated, machine("RUNNING", true))
		}, 1, "RUNNING"},
		{"the server's wait timed out", func(t *testing.T) http.HandlerFunc {
			return streamed(t, http.StatusAccepted, machine("DEPLOYING", false), machine("DEPLOYING", false))
		}, 2, "RUNNING"},
		{"the answer ended early", func(t *testing.T) http.HandlerFunc {
			return streamed(t, http.StatusAccepted, machine("DEPLOYING", false))
		}, 2, "RUNNING"},
		{"a transient error ended the wait", func(t *testing.T) http.HandlerFunc {
			return streamed(t, http.StatusAccepted, machine("DEPLOYING", false), internal)
		}, 2, "RUNNING"},
		{"the object is gone", func(t *testing.T) http.HandlerFunc {
			return streamed(t, http.StatusAccepted, machine("DEPLOYING", false), notFound)
		}, 1, ""},
		{"a server that does not stream", func(t *testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					writeJSON(w, http.StatusOK, machine("RUNNING", true))
					return
				}
				writeJSON(w, http.StatusAccepted, machine("DEPLOYING", false))
			}
		}, 2, "RUNNING"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := serve(t, tt.handler(t))
			c := newTestClient(t, srv.URL)
			var seen []string
			first, watch, err := c.CreateWait(t.Context(), "machines", CreateRequest{Name: "vm1"}, WaitOptions{
				OnProgress: func(o *Object) { seen = append(seen, o.State) },
			})
			if err != nil || first.ID != "abc" {
				t.Fatalf("CreateWait() = %+v, %v, want the new object", first, err)
			}
			o, err := watch.Wait(t.Context())
			switch {
			case tt.want == "":
				var we *WaitError
				if !errors.As(err, &we) || !IsNotFound(err) || we.LastState != first.State {
					t.Errorf("Wait() = %+v, %v, want a not_found WaitError with the last state %s", o, err, first.State)
				}
			case err != nil || o.State != tt.want || !o.Static:
				t.Errorf("Wait() = %+v, %v, want %s", o, err, tt.want)
			case first.Static == (len(seen) > 0):
				t.Errorf("OnProgress saw %q; want the landing reported unless the first answer was static", seen)
			}
			if got := calls.Load(); got != tt.requests {
				t.Errorf("the server saw %d requests, want %d", got, tt.requests)
			}
		})
	}
}

// TestActWaitCancelled: a wait on a streamed action ends when its context does, naming the
// last state, although the server holds the answer open.
func TestActWaitCancelled(t *testing.T) {
	srv, _ := serve(t, streamed(t, http.StatusAccepted, machine("STOPPING", false), nil))
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithCancel(t.Context())
	o, watch, err := c.ActWait(ctx, "machines", "abc", "stop", ActionRequest{}, WaitOptions{})
	if err != nil || o.State != "STOPPING" {
		t.Fatalf("ActWait() = %+v, %v", o, err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = watch.Wait(ctx)
	var we *WaitError
	if !errors.As(err, &we) || !errors.Is(err, context.Canceled) || we.LastState != "STOPPING" {
		t.Errorf("Wait() after cancel = %v, want a WaitError wrapping context.Canceled with last state STOPPING", err)
	}
}

// TestWatchReusesConnection: an answer read to its last line leaves its connection for the
// next request, as a plain answer does.
func TestWatchReusesConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ndjson)
		w.WriteHeader(http.StatusAccepted)
		for _, o := range []Object{machine("DEPLOYING", false), machine("RUNNING", true)} {
			_ = json.NewEncoder(w).Encode(o)
			w.(http.Flusher).Flush()
		}
		// The answer's end comes apart from its last line: a client that stops reading at
		// the line and closes loses the connection.
		time.Sleep(20 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)
	for range 3 {
		_, watch, err := c.CreateWait(t.Context(), "machines", CreateRequest{Name: "vm1"}, WaitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := watch.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 waiting creates one after the other opened %d connections, want 1", n)
	}
}
