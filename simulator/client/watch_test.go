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
		w.Header().Set("Content-Type", NDJSON)
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
	deploying, running := machine("DEPLOYING", false), machine("RUNNING", true)
	tests := []struct {
		name string
		// lines is the answer to the create: the object, then what the server sends after
		// it. A plain answer is one JSON object, as from a server that does not stream.
		lines []any
		plain bool
		// requests the server sees in all; 1 when the answer carried the static object.
		requests int32
		want     string // the state Wait returns; "" when it fails with not_found
	}{
		{"streamed to the end", []any{deploying, running}, false, 1, "RUNNING"},
		{"static at once", []any{running}, false, 1, "RUNNING"},
		{"the server's wait timed out", []any{deploying, deploying}, false, 2, "RUNNING"},
		{"the answer ended early", []any{deploying}, false, 2, "RUNNING"},
		{"a transient error ended the wait", []any{deploying, internal}, false, 2, "RUNNING"},
		{"the object is gone", []any{deploying, notFound}, false, 1, ""},
		{"a server that does not stream", []any{deploying}, true, 2, "RUNNING"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := http.StatusAccepted
			if tt.lines[0].(Object).Static {
				status = http.StatusCreated
			}
			handler := streamed(t, status, tt.lines[0], tt.lines[1:]...)
			if tt.plain {
				handler = func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet {
						writeJSON(w, http.StatusOK, running)
						return
					}
					writeJSON(w, status, tt.lines[0])
				}
			}
			srv, calls := serve(t, handler)
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

// TestWatchTimeoutNamesLastState: the server's wait ends (its timeout) with the object still
// DEPLOYING, and the context ends before the long poll that goes on is answered: the error
// names DEPLOYING, not "unknown".
func TestWatchTimeoutNamesLastState(t *testing.T) {
	stream := streamed(t, http.StatusAccepted, machine("DEPLOYING", false), machine("DEPLOYING", false))
	// The deadline passes while the long poll that follows the stream waits (it is never
	// answered in time).
	ctx := newDeadlineCtx(t.Context(), time.Now().Add(time.Hour))
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			ctx.expire()
			<-r.Context().Done()
			return
		}
		stream(w, r)
	})
	c := newTestClient(t, srv.URL)
	_, watch, err := c.CreateWait(ctx, "machines", CreateRequest{Name: "m"}, WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = watch.Wait(ctx)
	var we *WaitError
	if !errors.As(err, &we) || !errors.Is(err, context.DeadlineExceeded) || we.LastState != "DEPLOYING" || we.Object == nil {
		t.Errorf("Wait() = %v (%+v), want a WaitError wrapping context.DeadlineExceeded with last state DEPLOYING", err, we)
	}
}

// TestWatchReusesConnection: an answer read to its last line leaves its connection for the
// next request, as a plain answer does.
func TestWatchReusesConnection(t *testing.T) {
	deploying, running := machine("DEPLOYING", false), machine("RUNNING", true)
	for _, tt := range []struct {
		name  string
		lines []Object
	}{
		{"read to its last line", []Object{deploying, running}},
		// Static at once: nothing follows, and CreateWait reads the answer to its end itself.
		{"static at once", []Object{running}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var conns atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", NDJSON)
				w.WriteHeader(http.StatusAccepted)
				for _, o := range tt.lines {
					_ = json.NewEncoder(w).Encode(o)
					w.(http.Flusher).Flush()
				}
				// The answer's end comes apart from its last line: a client that stops reading
				// at the line and closes loses the connection.
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
		})
	}
}

// TestDeleteWait: a delete removed at once answers nil (no wait); one that runs streams until
// the object is gone, which Wait reports as not_found, with no second request.
func TestDeleteWait(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete || r.URL.Query().Get("wait") != "static" || r.URL.Query().Get("mode") != "destroy" {
			t.Errorf("%s %s, want DELETE ?mode=destroy&wait=static", r.Method, r.URL)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c := newTestClient(t, srv.URL)
	if o, watch, err := c.DeleteWait(t.Context(), "machines", "abc", "destroy", WaitOptions{}); o != nil || watch != nil || err != nil {
		t.Errorf("DeleteWait of an object removed at once = %+v, %v, %v; want nil, nil, nil", o, watch, err)
	}

	gone := ErrorBody{Error: ErrorDetail{Code: string(CodeNotFound), Message: "not found"}}
	srv, calls := serve(t, streamed(t, http.StatusAccepted, machine("DESTROYING", false), gone))
	c = newTestClient(t, srv.URL)
	o, watch, err := c.DeleteWait(t.Context(), "machines", "abc", "destroy", WaitOptions{})
	if err != nil || o.State != "DESTROYING" {
		t.Fatalf("DeleteWait() = %+v, %v", o, err)
	}
	if _, err := watch.Wait(t.Context()); !IsNotFound(err) {
		t.Errorf("Wait() after a destroy = %v, want not_found", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1", n)
	}
}
