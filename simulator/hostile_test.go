package simulator

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// TestAPIHostileTimesRefusedAtAccept: a time time.Parse takes but the store cannot encode (a
// zone offset past 23:59) is a 400 naming the field and the bound, on create and on PATCH,
// never an accepted object the worker then fails to save.
func TestAPIHostileTimesRefusedAtAccept(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	end := h.clock.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	for _, bad := range []string{"2030-01-02T15:04:05+24:00", "2030-01-02T15:04:05-24:00", "2030-01-02T15:04:05+24:30", "2030-01-02T15:04:05+23:60"} {
		r := h.do(http.MethodPost, "/v1/leases", client.CreateRequest{Name: "l", Spec: map[string]any{"start_date": bad, "end_date": end}})
		e := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid)
		if !strings.Contains(e.Message, "spec.start_date") || !strings.Contains(e.Message, "hours 00 to 23 and minutes 00 to 59") {
			t.Errorf("create with start_date %s: message %q does not name the field and the bound", bad, e.Message)
		}
	}
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: map[string]any{
		"start_date": h.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339), "end_date": end}})
	h.mustSettle("leases", lease.ID, "PENDING")
	r := h.do(http.MethodPatch, objPath("leases", lease.ID), map[string]any{"spec": map[string]any{"end_date": "2030-01-02T15:04:05+24:00"}})
	if e := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid); !strings.Contains(e.Message, "spec.end_date") {
		t.Errorf("PATCH end_date +24:00: message %q does not name the field", e.Message)
	}
}

// TestAPIPatchCannotNullAlwaysSetField: a PATCH null of a field every object holds (a pending
// lease's start_date, which an omitted value makes now) is a 400; the lease keeps its start
// and still starts at it.
func TestAPIPatchCannotNullAlwaysSetField(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	start := h.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	lease := h.create("leases", client.CreateRequest{Name: "l", Spec: map[string]any{
		"start_date": start, "end_date": h.clock.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)}})
	h.mustSettle("leases", lease.ID, "PENDING")
	for _, field := range []string{"start_date", "end_date"} {
		r := h.do(http.MethodPatch, objPath("leases", lease.ID), map[string]any{"spec": map[string]any{field: nil}})
		if e := wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid); !strings.Contains(e.Message, "spec."+field) || !strings.Contains(e.Message, "instead of null") {
			t.Errorf("PATCH %s: null: message %q does not name the field and the fix", field, e.Message)
		}
	}
	if got := h.get("leases", lease.ID).Spec["start_date"]; got != start {
		t.Fatalf("start_date = %v after the refused nulls, want %s", got, start)
	}
	h.advance(time.Hour)
	h.mustSettle("leases", lease.ID, "ACTIVE")
}

// TestAPIChunkedRequestClosesConnection: a request framed by Transfer-Encoding (here with a
// Content-Length too, which Go's server drops) is answered with Connection: close and the
// connection ends there: the bytes after its chunked body never run as a second request.
func TestAPIChunkedRequestClosesConnection(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	u, err := url.Parse(h.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a hang only: both answers come at once.
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	smuggled := "POST /v1/machines HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"2\r\n{}\r\n0\r\n\r\n" +
		"GET /healthz HTTP/1.1\r\nHost: sim\r\n\r\n"
	if _, err := conn.Write([]byte(smuggled)); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	first, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("first answer: %v", err)
	}
	_ = first.Body.Close()
	// ReadResponse takes Connection: close out of the header into Close.
	if !first.Close {
		t.Errorf("answer to the chunked request: %s without Connection: close", first.Status)
	}
	if second, err := http.ReadResponse(rd, nil); err == nil {
		t.Fatalf("the bytes after the chunked body ran as a second request: %s", second.Status)
	}
}
