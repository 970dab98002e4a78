package simulator

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// stream is an answer read line by line as the server sends it.
type stream struct {
	t    testing.TB
	resp *http.Response
	dec  *json.Decoder
}

// stream sends a request and returns its answer once the header arrived, body unread.
func (h *harness) stream(method, path string, body any) *stream {
	h.t.Helper()
	req, err := h.newRequest(method, path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	return &stream{t: h.t, resp: resp, dec: json.NewDecoder(resp.Body)}
}

// line decodes the next line: an object, or an error envelope when the line is one.
func (s *stream) line() (client.Object, *client.ErrorDetail) {
	s.t.Helper()
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		s.t.Fatalf("reading the next line of the answer: %v", err)
	}
	var env client.ErrorBody
	if err := json.Unmarshal(raw, &env); err == nil && env.Error.Code != "" {
		return client.Object{}, &env.Error
	}
	var o client.Object
	if err := json.Unmarshal(raw, &o); err != nil {
		s.t.Fatalf("line %s is not an object: %v", raw, err)
	}
	return o, nil
}

// object decodes the next line, which must be an object in state want.
func (s *stream) object(want string, static bool) client.Object {
	s.t.Helper()
	o, e := s.line()
	if e != nil || o.State != want || o.Static != static {
		s.t.Fatalf("line = %+v (error %+v), want an object in %s (static %v)", o, e, want, static)
	}
	return o
}

// endsGone moves the clock until the object the answer waits on is gone, and checks the answer
// then ends with the not_found envelope.
func (s *stream) endsGone(h *harness, coll, id string) {
	s.t.Helper()
	waitForWatcher(s.t, h.engine, id)
	if _, exists := h.settle(coll, id); exists {
		s.t.Fatalf("%s %s is still there", coll, id)
	}
	if o, e := s.line(); e == nil || e.Code != string(client.CodeNotFound) {
		s.t.Errorf("last line = %+v %+v, want the not_found envelope", e, o)
	}
	s.end()
}

// end checks the answer ends here.
func (s *stream) end() {
	s.t.Helper()
	var extra json.RawMessage
	if err := s.dec.Decode(&extra); !errors.Is(err, io.EOF) {
		s.t.Fatalf("the answer goes on after its last line: %s (%v)", extra, err)
	}
}

// A create, an action or a delete sent with ?wait=static answers at once with the object in transition,
// so the client knows it before any wait, and on the same request again once it is static:
// one request does what a request and a long-poll do.
func TestAPIWaitOnTheStartingRequest(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()

	s := h.stream(http.MethodPost, "/v1/machines?wait=static&timeout=60s", h.sampled("machines", client.CreateRequest{Name: "web", ParentID: cs.ID}))
	if s.resp.StatusCode != http.StatusAccepted || s.resp.Header.Get("Content-Type") != client.NDJSON {
		t.Fatalf("streamed create = %d %s, want 202 %s", s.resp.StatusCode, s.resp.Header.Get("Content-Type"), client.NDJSON)
	}
	if s.resp.Header.Get("Location") == "" {
		t.Error("streamed create has no Location")
	}
	m := s.object("DEPLOYING", false) // before the clock moves: the first line does not wait
	waitForWatcher(t, h.engine, m.ID)
	h.advance(3 * time.Second)
	if o := s.object("RUNNING", true); o.ID != m.ID || o.Version <= m.Version {
		t.Errorf("second line = %s v%d, want %s after v%d", o.ID, o.Version, m.ID, m.Version)
	}
	s.end()

	s = h.stream(http.MethodPost, objPath("machines", m.ID)+"/actions/stop?wait=static", nil)
	s.object("STOPPING", false)
	waitForWatcher(t, h.engine, m.ID)
	h.advance(2 * time.Second)
	s.object("HALTED", true)
	s.end()

	// A destroy that waits ends with not_found once the object is gone.
	victim := h.runningMachine(cs.ID, "victim")
	s = h.stream(http.MethodDelete, objPath("machines", victim.ID)+"?mode=destroy&wait=static", nil)
	if s.resp.StatusCode != http.StatusAccepted {
		t.Fatalf("streamed destroy = %d, want 202", s.resp.StatusCode)
	}
	s.endsGone(h, "machines", s.object("DESTROYING", false).ID)

	// The wait's timeout ends the answer with the object as it is then.
	s = h.stream(http.MethodPost, objPath("machines", m.ID)+"/actions/start?wait=static&timeout=20ms", nil)
	s.object("STARTING", false)
	s.object("STARTING", false)
	s.end()
	h.mustSettle("machines", m.ID, "RUNNING")

	// An object static at once is one line.
	s = h.stream(http.MethodPost, "/v1/accounts?wait=static", h.sampled("accounts", client.CreateRequest{Name: "other"}))
	if s.resp.StatusCode != http.StatusCreated {
		t.Errorf("streamed create of an account = %d, want 201", s.resp.StatusCode)
	}
	s.object("CONFIRMED", true)
	s.end()

	// A wait ended by an error ends with the error's envelope: an undone cluster_inst create
	// removes the object.
	cl := h.create("cloudlets", client.CreateRequest{Name: "edge"})
	h.mustSettle("cloudlets", cl.ID, "Ready")
	h.addFault(client.FaultRule{Kind: "cluster_inst", Action: "create", Mode: wire.FaultFail, Message: "quota"})
	s = h.stream(http.MethodPost, "/v1/cluster_insts?wait=static", h.sampled("cluster_insts", client.CreateRequest{Name: "k8s", ParentID: cl.ID}))
	s.endsGone(h, "cluster_insts", s.object("CreateRequested", false).ID)

	// Bad wait parameters are refused before anything is created.
	before := len(decodeAs[client.ObjectList](t, h.do(http.MethodGet, "/v1/machines", nil)).Items)
	for _, q := range []string{"?wait=forever", "?wait=static&timeout=soon", "?wait=static&timeout=-1s"} {
		wantAPIError(t, h.do(http.MethodPost, "/v1/machines"+q, h.sampled("machines", client.CreateRequest{Name: "x", ParentID: cs.ID})), http.StatusBadRequest, client.CodeInvalid)
		wantAPIError(t, h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/reboot"+q, nil), http.StatusBadRequest, client.CodeInvalid)
	}
	if after := len(decodeAs[client.ObjectList](t, h.do(http.MethodGet, "/v1/machines", nil)).Items); after != before {
		t.Errorf("refused creates made objects: %d machines, want %d", after, before)
	}
	if o := h.get("machines", m.ID); o.State != "RUNNING" || !o.Static {
		t.Errorf("refused actions ran: machine is %s", o.State)
	}
}
