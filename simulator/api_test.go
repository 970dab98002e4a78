package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

func TestAPIKinds(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	r := h.do(http.MethodGet, "/v1/kinds", nil)
	wantStatus(t, r, "GET /v1/kinds", http.StatusOK)
	list := decodeAs[struct {
		Items []lifecycle.Kind `json:"items"`
	}](t, r)
	var names []string
	for _, k := range list.Items {
		names = append(names, k.Name)
	}
	for _, want := range []string{"machine", "cloudspace", "disk", "lease", "cluster_inst", "cluster", "mci", "vm"} {
		if !slices.Contains(names, want) {
			t.Errorf("GET /v1/kinds lists %v, missing %s", names, want)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("kinds are not sorted by name: %v", names)
	}

	r = h.do(http.MethodGet, "/v1/kinds/machine", nil)
	wantStatus(t, r, "GET /v1/kinds/machine", http.StatusOK)
	k := decodeAs[lifecycle.Kind](t, r)
	if err := k.Compile(); err != nil {
		t.Fatalf("the served machine kind does not compile: %v", err)
	}
	if k.Collection != "machines" || k.Initial != "VIRTUAL" || !k.IsStatic("RUNNING") || !k.IsTransition("STOPPING") {
		t.Errorf("GET /v1/kinds/machine = %+v", k)
	}

	wantAPIError(t, h.do(http.MethodGet, "/v1/kinds/spaceship", nil), http.StatusNotFound, client.CodeNotFound)
}

func TestAPICreate(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()

	r := h.do(http.MethodPost, "/v1/machines", client.CreateRequest{Name: "web", ParentID: cs.ID, Spec: map[string]any{"image_id": "img", "memory": 2048}})
	wantStatus(t, r, "POST /v1/machines", http.StatusAccepted)
	m := decodeAs[client.Object](t, r)
	if m.State != "DEPLOYING" || m.Static || m.Operation == nil || m.Operation.Action != "deploy" || m.Operation.Phase != "DEPLOYING" {
		t.Errorf("new machine = %+v, want DEPLOYING with the deploy operation", m)
	}
	if m.Kind != "machine" || m.Name != "web" || m.ParentID != cs.ID || m.Version != 1 || m.Spec["memory"] != 2048.0 {
		t.Errorf("new machine = %+v", m)
	}
	now := h.manual.Now()
	if want := now.Add(3 * time.Second); !m.Operation.DueAt.Equal(want) {
		t.Errorf("deploy due at %v, want %v (3s at time scale 1)", m.Operation.DueAt, want)
	}
	if loc := r.Header.Get("Location"); loc != "/v1/machines/"+m.ID {
		t.Errorf("Location = %q, want /v1/machines/%s", loc, m.ID)
	}
	if !m.CreatedAt.Equal(now) || !m.UpdatedAt.Equal(now) {
		t.Errorf("created_at, updated_at = %v, %v, want the clock's %v", m.CreatedAt, m.UpdatedAt, now)
	}

	// An instant create answers 201 with the object already static.
	r = h.do(http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "other"})
	wantStatus(t, r, "POST /v1/accounts", http.StatusCreated)
	if a := decodeAs[client.Object](t, r); !a.Static || a.State != "CONFIRMED" || a.Operation != nil {
		t.Errorf("new account = %+v, want static CONFIRMED", a)
	}
	if !strings.HasPrefix(r.Header.Get("Location"), "/v1/accounts/") {
		t.Errorf("Location = %q", r.Header.Get("Location"))
	}

	// Idempotency-Key: a retry answers the object the first request made.
	req := client.CreateRequest{Name: "db", ParentID: cs.ID, Spec: map[string]any{"image_id": "img"}}
	first := decodeAs[client.Object](t, h.do(http.MethodPost, "/v1/machines", req, "Idempotency-Key", "key-1"))
	h.advance(time.Second)
	r = h.do(http.MethodPost, "/v1/machines", req, "Idempotency-Key", "key-1")
	wantStatus(t, r, "retried POST", http.StatusAccepted)
	if again := decodeAs[client.Object](t, r); again.ID != first.ID || again.Version != first.Version {
		t.Errorf("retry made %s v%d, want the first request's %s v%d", again.ID, again.Version, first.ID, first.Version)
	}
	if loc := r.Header.Get("Location"); loc != "/v1/machines/"+first.ID {
		t.Errorf("retry Location = %q", loc)
	}
	list := decodeAs[client.ObjectList](t, h.do(http.MethodGet, "/v1/machines?parent_id="+cs.ID, nil))
	if len(list.Items) != 2 {
		t.Errorf("after a retried create there are %d machines, want 2", len(list.Items))
	}
	// Once settled, the replay still answers the same object, as it is now.
	h.mustSettle("machines", first.ID, "RUNNING")
	r = h.do(http.MethodPost, "/v1/machines", req, "Idempotency-Key", "key-1")
	wantStatus(t, r, "retried POST after settling", http.StatusCreated, http.StatusAccepted)
	if again := decodeAs[client.Object](t, r); again.ID != first.ID || again.State != "RUNNING" {
		t.Errorf("replay = %s %s, want %s RUNNING", again.ID, again.State, first.ID)
	}
	// Another key makes another object.
	other := decodeAs[client.Object](t, h.do(http.MethodPost, "/v1/machines", req, "Idempotency-Key", "key-2"))
	if other.ID == first.ID {
		t.Error("a different Idempotency-Key answered the same object")
	}

	// Bad requests.
	for _, tt := range []struct {
		name string
		path string
		body any
	}{
		{"no name", "/v1/machines", client.CreateRequest{ParentID: cs.ID}},
		{"bad JSON", "/v1/machines", `{"name": `},
		{"unknown field", "/v1/machines", `{"name": "x", "parent_id": "` + cs.ID + `", "colour": "red"}`},
		{"parent on a root kind", "/v1/accounts", client.CreateRequest{Name: "x", ParentID: cs.ID}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantAPIError(t, h.do(http.MethodPost, tt.path, tt.body), http.StatusBadRequest, client.CodeInvalid)
		})
	}
	wantAPIError(t, h.do(http.MethodPost, "/v1/spaceships", client.CreateRequest{Name: "x"}), http.StatusNotFound, client.CodeNotFound)
}

func TestAPIGetAndLongPoll(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID})

	got := h.get("machines", m.ID)
	if got.ID != m.ID || got.State != "DEPLOYING" || got.Version != m.Version {
		t.Errorf("GET = %+v, want the created machine", got)
	}
	wantAPIError(t, h.do(http.MethodGet, "/v1/machines/machine-nope", nil), http.StatusNotFound, client.CodeNotFound)
	// An object is found only in its own collection.
	wantAPIError(t, h.do(http.MethodGet, "/v1/cloudspaces/"+m.ID, nil), http.StatusNotFound, client.CodeNotFound)

	// The long-poll times out answering the object as it is.
	r := h.do(http.MethodGet, objPath("machines", m.ID)+"?wait=static&timeout=20ms", nil)
	wantStatus(t, r, "wait=static with a short timeout", http.StatusOK)
	if o := decodeAs[client.Object](t, r); o.Static || o.State != "DEPLOYING" {
		t.Errorf("timed-out long-poll = %s static=%v, want DEPLOYING", o.State, o.Static)
	}

	// It wakes as soon as the object becomes static.
	done := make(chan *response, 1)
	go func() {
		r, err := h.request(http.MethodGet, objPath("machines", m.ID)+"?wait=static&timeout=60s", nil)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	waitForWatcher(t, h.engine, m.ID)
	h.advance(3 * time.Second)
	select {
	case r := <-done:
		if r == nil {
			t.FailNow()
		}
		wantStatus(t, r, "long-poll", http.StatusOK)
		if o := decodeAs[client.Object](t, r); !o.Static || o.State != "RUNNING" {
			t.Errorf("long-poll woke with %s static=%v, want RUNNING", o.State, o.Static)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the long-poll did not wake when the machine became static")
	}

	// On a static object it answers at once.
	r = h.do(http.MethodGet, objPath("machines", m.ID)+"?wait=static", nil)
	if o := decodeAs[client.Object](t, r); o.State != "RUNNING" {
		t.Errorf("wait on a static object = %s", o.State)
	}
	// Waiting on an object removed meanwhile answers not_found.
	h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=destroy", nil)
	go func() {
		r, err := h.request(http.MethodGet, objPath("machines", m.ID)+"?wait=static&timeout=60s", nil)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	waitForWatcher(t, h.engine, m.ID)
	h.advance(2 * time.Second)
	select {
	case r := <-done:
		if r != nil {
			wantAPIError(t, r, http.StatusNotFound, client.CodeNotFound)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the long-poll did not wake when the machine was destroyed")
	}

	for _, q := range []string{"?wait=forever", "?wait=static&timeout=soon", "?wait=static&timeout=-1s"} {
		wantAPIError(t, h.do(http.MethodGet, objPath("machines", m.ID)+q, nil), http.StatusBadRequest, client.CodeInvalid)
	}
}

// waitForWatcher waits until the test's one long-poll waits for its object to change, so the
// change that follows exercises the wake-up rather than the first read.
func waitForWatcher(t testing.TB, e *engine.Engine, id string) {
	t.Helper()
	simtest.Eventually(t, time.Minute, "a long-poll waiting on "+id, func() bool { return e.LongPolls() > 0 })
}

func TestAPILongPollWithWorker(t *testing.T) {
	h := newTestServer(t, harnessOptions{worker: true, timeScale: 0.001})
	a := h.create("accounts", client.CreateRequest{Name: "acme"})
	cs := h.create("cloudspaces", client.CreateRequest{Name: "net", ParentID: a.ID})
	waitStatic := func(coll, id, want string) {
		t.Helper()
		for range 100 { // each long-poll may time out on a slow machine; the state is what counts
			r := h.do(http.MethodGet, objPath(coll, id)+"?wait=static&timeout=5s", nil)
			wantStatus(t, r, "long-poll", http.StatusOK)
			if o := decodeAs[client.Object](t, r); o.Static {
				if o.State != want {
					t.Fatalf("%s settled in %s, want %s", id, o.State, want)
				}
				return
			}
		}
		t.Fatalf("%s never became static", id)
	}
	waitStatic("cloudspaces", cs.ID, "DEPLOYED")
	m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID})
	waitStatic("machines", m.ID, "RUNNING")
	h.act("machines", m.ID, "stop", nil)
	waitStatic("machines", m.ID, "HALTED")
	h.act("machines", m.ID, "start", nil)
	waitStatic("machines", m.ID, "RUNNING")
	checkEventLog(t, h.events("machines", m.ID))
}

func TestAPIList(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	acct, cs := h.openvcloud()
	cs2 := h.create("cloudspaces", client.CreateRequest{Name: "net2", ParentID: acct.ID})
	h.mustSettle("cloudspaces", cs2.ID, "DEPLOYED")
	var inCS, all []string
	for i := range 5 {
		m := h.runningMachine(cs.ID, fmt.Sprintf("m%d", i))
		inCS = append(inCS, m.ID)
	}
	other := h.runningMachine(cs2.ID, "elsewhere")
	all = append(slices.Clone(inCS), other.ID)
	slices.Sort(inCS)
	slices.Sort(all)
	h.act("machines", inCS[1], "stop", nil)
	h.mustSettle("machines", inCS[1], "HALTED")

	list := func(q string) client.ObjectList {
		t.Helper()
		r := h.do(http.MethodGet, "/v1/machines"+q, nil)
		wantStatus(t, r, "GET /v1/machines"+q, http.StatusOK)
		return decodeAs[client.ObjectList](t, r)
	}
	idsOf := func(l client.ObjectList) []string {
		out := []string{}
		for _, o := range l.Items {
			out = append(out, o.ID)
		}
		return out
	}
	if got := idsOf(list("")); !slices.Equal(got, all) {
		t.Errorf("list = %v, want %v (ordered by ID)", got, all)
	}
	if got := idsOf(list("?parent_id=" + cs.ID)); !slices.Equal(got, inCS) {
		t.Errorf("list parent_id = %v, want %v", got, inCS)
	}
	if got := idsOf(list("?state=HALTED")); !slices.Equal(got, []string{inCS[1]}) {
		t.Errorf("list state=HALTED = %v, want [%s]", got, inCS[1])
	}
	if got := idsOf(list("?state=RUNNING&parent_id=" + cs2.ID)); !slices.Equal(got, []string{other.ID}) {
		t.Errorf("list state+parent = %v, want [%s]", got, other.ID)
	}
	if got := list("?state=PAUSED"); got.Items == nil || len(got.Items) != 0 || got.Next != "" {
		t.Errorf("empty list = %+v, want items [] and no next", got)
	}
	if r := h.do(http.MethodGet, "/v1/machines?state=PAUSED", nil); !strings.Contains(string(r.Body), `"items":[]`) {
		t.Errorf("empty list body = %s, want items: []", r.Body)
	}

	// Pagination walks every object once.
	var paged []string
	after, pages := "", 0
	for {
		q := "?limit=2"
		if after != "" {
			q += "&after=" + after
		}
		l := list(q)
		pages++
		if len(l.Items) > 2 {
			t.Fatalf("page of limit 2 has %d items", len(l.Items))
		}
		paged = append(paged, idsOf(l)...)
		if l.Next == "" {
			break
		}
		if l.Next != l.Items[len(l.Items)-1].ID {
			t.Errorf("next = %q, want the last item's ID", l.Next)
		}
		after = l.Next
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
	}
	if !slices.Equal(paged, all) {
		t.Errorf("paged = %v, want %v", paged, all)
	}
	if pages != (len(all)+1)/2 {
		t.Errorf("%d objects in pages of 2 took %d pages, want %d: a full last page has no next cursor", len(all), pages, (len(all)+1)/2)
	}

	for _, q := range []string{"?limit=0", "?limit=1001", "?limit=ten"} {
		wantAPIError(t, h.do(http.MethodGet, "/v1/machines"+q, nil), http.StatusBadRequest, client.CodeInvalid)
	}
	wantAPIError(t, h.do(http.MethodGet, "/v1/spaceships", nil), http.StatusNotFound, client.CodeNotFound)
}

func TestAPIActions(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")

	r := h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", nil)
	wantStatus(t, r, "stop", http.StatusAccepted)
	o := decodeAs[client.Object](t, r)
	if o.State != "STOPPING" || o.Static || o.Operation == nil || o.Operation.Action != "stop" || o.Version != m.Version+1 {
		t.Errorf("stop answered %+v, want STOPPING with version %d", o, m.Version+1)
	}

	// busy while it runs, with Retry-After.
	r = h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/pause", nil)
	wantAPIError(t, r, http.StatusConflict, client.CodeBusy)
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("busy Retry-After = %q, want a positive number of seconds", r.Header.Get("Retry-After"))
	}

	o = h.mustSettle("machines", m.ID, "HALTED")
	// invalid_transition names what is allowed.
	r = h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/pause", nil)
	d := wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	var td client.TransitionDetails
	if err := json.Unmarshal(d.Details, &td); err != nil {
		t.Fatalf("details %s: %v", d.Details, err)
	}
	if td.Kind != "machine" || td.State != "HALTED" || td.Action != "pause" || !slices.Contains(td.Allowed, "start") || slices.Contains(td.Allowed, "pause") {
		t.Errorf("details = %+v, want HALTED with start allowed", td)
	}
	if r.Header.Get("Retry-After") != "" {
		t.Error("invalid_transition carries Retry-After: it is permanent")
	}

	// Params are merged into the spec.
	o = h.act("machines", m.ID, "start", map[string]any{"boot": "disk"})
	if o.Spec["boot"] != "disk" || o.Spec["memory"] != 2048.0 {
		t.Errorf("spec after start with params = %v", o.Spec)
	}
	h.mustSettle("machines", m.ID, "RUNNING")

	// An unknown action, a system action and a bad body are invalid requests.
	wantAPIError(t, h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/fly", nil), http.StatusBadRequest, client.CodeInvalid)
	wantAPIError(t, h.do(http.MethodPost, objPath("cloudspaces", cs.ID)+"/actions/resume", nil), http.StatusBadRequest, client.CodeInvalid)
	wantAPIError(t, h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", `{"forse": true}`), http.StatusBadRequest, client.CodeInvalid)
	wantAPIError(t, h.do(http.MethodPost, objPath("machines", "machine-nope")+"/actions/stop", nil), http.StatusNotFound, client.CodeNotFound)

	// force: CB-Tumblebug's terminate from Failed needs it.
	mci := h.create("mcis", client.CreateRequest{Name: "infra"})
	h.mustSettle("mcis", mci.ID, "Running")
	// Its VM fails to suspend, so the MCI (the aggregate of its VMs) is Failed.
	h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "vm", Action: "suspend", Mode: wire.FaultFail, Count: 1})
	h.act("mcis", mci.ID, "suspend", nil)
	h.mustSettle("mcis", mci.ID, "Failed")
	r = h.do(http.MethodPost, objPath("mcis", mci.ID)+"/actions/terminate", nil)
	d = wantAPIError(t, r, http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	if !strings.Contains(d.Message, "force") {
		t.Errorf("terminate from Failed without force: %q, want it to mention force", d.Message)
	}
	r = h.do(http.MethodPost, objPath("mcis", mci.ID)+"/actions/terminate", client.ActionRequest{Force: true})
	wantStatus(t, r, "forced terminate", http.StatusAccepted)
	h.mustSettle("mcis", mci.ID, "Terminated")

	checkEventLog(t, h.events("machines", m.ID))
}

func TestAPIPatch(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")

	// A kind without an update action takes the change at once.
	r := h.do(http.MethodPatch, objPath("machines", m.ID), client.PatchRequest{Spec: map[string]any{"memory": 4096, "label": "blue"}},
		"If-Match", strconv.FormatInt(m.Version, 10))
	wantStatus(t, r, "PATCH", http.StatusOK)
	o := decodeAs[client.Object](t, r)
	if o.Spec["memory"] != 4096.0 || o.Spec["label"] != "blue" || o.Version != m.Version+1 || !o.Static || o.State != "RUNNING" {
		t.Errorf("patched machine = %+v", o)
	}
	// A null removes a field; a quoted (ETag-style) If-Match is accepted.
	r = h.do(http.MethodPatch, objPath("machines", m.ID), `{"spec": {"label": null}}`, "If-Match", fmt.Sprintf(`"%d"`, o.Version))
	wantStatus(t, r, "PATCH with null", http.StatusOK)
	if o = decodeAs[client.Object](t, r); o.Spec["label"] != nil || o.Spec["memory"] != 4096.0 {
		t.Errorf("spec after removing label = %v", o.Spec)
	}
	// A stale version is a conflict, and changes nothing.
	r = h.do(http.MethodPatch, objPath("machines", m.ID), client.PatchRequest{Spec: map[string]any{"memory": 1}}, "If-Match", strconv.FormatInt(m.Version, 10))
	wantAPIError(t, r, http.StatusPreconditionFailed, client.CodeConflict)
	if got := h.get("machines", m.ID); got.Spec["memory"] != 4096.0 || got.Version != o.Version {
		t.Errorf("a conflicting PATCH changed the machine: %+v", got)
	}
	for _, bad := range []string{"latest", "0", "-3"} {
		r = h.do(http.MethodPatch, objPath("machines", m.ID), client.PatchRequest{Spec: map[string]any{"memory": 1}}, "If-Match", bad)
		wantAPIError(t, r, http.StatusBadRequest, client.CodeInvalid)
	}
	// Without If-Match the change applies to whatever version is there.
	r = h.do(http.MethodPatch, objPath("machines", m.ID), client.PatchRequest{Spec: map[string]any{"memory": 8192}})
	wantStatus(t, r, "PATCH without If-Match", http.StatusOK)
	// Busy objects refuse changes.
	h.act("machines", m.ID, "reboot", nil)
	wantAPIError(t, h.do(http.MethodPatch, objPath("machines", m.ID), client.PatchRequest{Spec: map[string]any{"memory": 1}}), http.StatusConflict, client.CodeBusy)
	wantAPIError(t, h.do(http.MethodPatch, objPath("machines", "machine-nope"), client.PatchRequest{}), http.StatusNotFound, client.CodeNotFound)

	// A kind with an update action starts it.
	cl := h.create("cloudlets", client.CreateRequest{Name: "edge"})
	h.mustSettle("cloudlets", cl.ID, "Ready")
	ci := h.create("cluster_insts", client.CreateRequest{Name: "k8s", ParentID: cl.ID, Spec: map[string]any{"flavor": "m4.small", "num_nodes": 3}})
	ci = h.mustSettle("cluster_insts", ci.ID, "Ready")
	r = h.do(http.MethodPatch, objPath("cluster_insts", ci.ID), client.PatchRequest{Spec: map[string]any{"num_nodes": 5}}, "If-Match", strconv.FormatInt(ci.Version, 10))
	wantStatus(t, r, "PATCH cluster_inst", http.StatusAccepted)
	o = decodeAs[client.Object](t, r)
	if o.State != "UpdateRequested" || o.Operation == nil || o.Operation.Action != "update" || o.Spec["num_nodes"] != 5.0 {
		t.Errorf("patched cluster_inst = %+v, want the update action running", o)
	}
	if o = h.mustSettle("cluster_insts", ci.ID, "Ready"); o.Spec["num_nodes"] != 5.0 {
		t.Errorf("cluster_inst after its update = %v", o.Spec)
	}
	evs := h.events("cluster_insts", ci.ID)
	if got := eventStates(evs); !slices.Equal(got[len(got)-3:], []string{"UpdateRequested", "Updating", "Ready"}) {
		t.Errorf("cluster_inst update went %v", got)
	}
}

func TestAPIDelete(t *testing.T) {
	reg := lifecycle.Builtin()
	widgets, err := lifecycle.Parse("widgets.yaml", []byte(`
kinds:
  - name: widget
    family: test
    collection: widgets
    states: {static: [ON, GONE], gone: [GONE]}
    create: {to: ON}
    deletion: {destroy: [remove]}
    actions:
      - {name: remove, from: [ON], to: GONE}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(widgets...); err != nil {
		t.Fatal(err)
	}
	h := newTestServer(t, harnessOptions{reg: reg})
	_, cs := h.openvcloud()
	m1 := h.runningMachine(cs.ID, "m1")
	m2 := h.runningMachine(cs.ID, "m2")

	// mode=delete: the recycle bin; the object stays readable.
	r := h.do(http.MethodDelete, objPath("machines", m1.ID)+"?mode=delete", nil)
	wantStatus(t, r, "DELETE mode=delete", http.StatusAccepted)
	if o := decodeAs[client.Object](t, r); o.State != "DELETING" {
		t.Errorf("DELETE mode=delete answered %s, want DELETING", o.State)
	}
	h.mustSettle("machines", m1.ID, "DELETED")
	h.get("machines", m1.ID)

	// mode=destroy (the default): permanent.
	r = h.do(http.MethodDelete, objPath("machines", m2.ID), nil)
	wantStatus(t, r, "DELETE", http.StatusAccepted)
	if o := decodeAs[client.Object](t, r); o.State != "DESTROYING" {
		t.Errorf("DELETE answered %s, want DESTROYING", o.State)
	}
	if _, exists := h.settle("machines", m2.ID); exists {
		t.Fatal("a destroyed machine still exists")
	}
	wantAPIError(t, h.do(http.MethodGet, objPath("machines", m2.ID), nil), http.StatusNotFound, client.CodeNotFound)
	wantAPIError(t, h.do(http.MethodDelete, objPath("machines", m2.ID), nil), http.StatusNotFound, client.CodeNotFound)
	// Its history outlives it.
	evs := h.events("machines", m2.ID)
	checkEventLog(t, evs)
	if last := evs[len(evs)-1]; last.From != "DESTROYING" || last.To != "DESTROYED" {
		t.Errorf("last event of a destroyed machine = %+v", last)
	}
	// The recycle bin can be emptied.
	r = h.do(http.MethodDelete, objPath("machines", m1.ID)+"?mode=destroy", nil)
	wantStatus(t, r, "destroy from DELETED", http.StatusAccepted)
	if _, exists := h.settle("machines", m1.ID); exists {
		t.Error("destroying a deleted machine left it")
	}

	// An instant deletion to a gone state answers 204.
	w := h.create("widgets", client.CreateRequest{Name: "w"})
	r = h.do(http.MethodDelete, objPath("widgets", w.ID), nil)
	if r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Errorf("DELETE of an instantly gone widget = %s, want 204 with no body", r)
	}
	wantAPIError(t, h.do(http.MethodGet, objPath("widgets", w.ID), nil), http.StatusNotFound, client.CodeNotFound)
	if got := eventStates(h.events("widgets", w.ID)); !slices.Equal(got, []string{"", "ON", "GONE"}) {
		t.Errorf("widget history = %v", got)
	}

	// Bad modes, modes a kind lacks, deletes not allowed from the state, busy objects.
	m3 := h.runningMachine(cs.ID, "m3")
	wantAPIError(t, h.do(http.MethodDelete, objPath("machines", m3.ID)+"?mode=shred", nil), http.StatusBadRequest, client.CodeInvalid)
	lease := h.create("leases", client.CreateRequest{Name: "l"})
	h.mustSettle("leases", lease.ID, "PENDING")
	wantAPIError(t, h.do(http.MethodDelete, objPath("leases", lease.ID)+"?mode=delete", nil), http.StatusBadRequest, client.CodeInvalid)
	h.act("machines", m3.ID, "stop", nil)
	wantAPIError(t, h.do(http.MethodDelete, objPath("machines", m3.ID), nil), http.StatusConflict, client.CodeBusy)
	node := h.create("nodes", client.CreateRequest{Name: "n"})
	h.do(http.MethodDelete, objPath("nodes", node.ID), nil)
	h.mustSettle("nodes", node.ID, "DECOMMISSIONED")
	// Deleting again what is already deleted in that mode succeeds and changes nothing.
	r = h.do(http.MethodDelete, objPath("nodes", node.ID), nil)
	wantStatus(t, r, "DELETE decommissioned node", http.StatusOK)
	if o := decodeAs[client.Object](t, r); o.State != "DECOMMISSIONED" || o.Version != 3 {
		t.Errorf("second DELETE = %s v%d, want DECOMMISSIONED v3", o.State, o.Version)
	}
}

func TestAPIEvents(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "web")
	h.act("machines", m.ID, "pause", nil)
	h.mustSettle("machines", m.ID, "PAUSED")
	h.act("machines", m.ID, "resume", nil)
	h.mustSettle("machines", m.ID, "RUNNING")

	evs := h.events("machines", m.ID)
	checkEventLog(t, evs)
	want := []string{"VIRTUAL", "DEPLOYING", "RUNNING", "PAUSING", "PAUSED", "RESUMING", "RUNNING"}
	if got := eventStates(evs); !slices.Equal(got, want) {
		t.Errorf("history = %v, want %v", got, want)
	}
	if e := evs[0]; e.Actor != "user" || e.Action != "deploy" || e.OperationID == "" || e.ObjectID != m.ID || e.Time.IsZero() {
		t.Errorf("first event = %+v", e)
	}
	if evs[1].Actor != "system" || evs[1].OperationID != evs[0].OperationID {
		t.Errorf("the deploy's landing = %+v, want the system finishing the same operation", evs[1])
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Time.Before(evs[i-1].Time) {
			t.Errorf("event %d is earlier than the one before", evs[i].Seq)
		}
	}
	wantAPIError(t, h.do(http.MethodGet, objPath("machines", "machine-nope")+"/events", nil), http.StatusNotFound, client.CodeNotFound)
}

func TestAPISimFaults(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	r := h.do(http.MethodGet, "/v1/sim/faults", nil)
	wantStatus(t, r, "GET faults", http.StatusOK)
	if l := decodeAs[client.FaultList](t, r); l.Items == nil || len(l.Items) != 0 {
		t.Errorf("faults at start = %+v, want items []", l)
	}
	r = h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "machine", Action: "stop", Mode: wire.FaultFail, Message: "disk on fire", Count: 2})
	wantStatus(t, r, "POST fault", http.StatusCreated)
	f := decodeAs[client.FaultRule](t, r)
	if f.ID == "" || f.Kind != "machine" || f.Mode != wire.FaultFail || f.Count != 2 || f.Fired != 0 {
		t.Errorf("added fault = %+v", f)
	}
	r = h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Mode: wire.FaultHTTPError, HTTPStatus: 503})
	wantStatus(t, r, "POST http_error fault", http.StatusCreated)
	if f2 := decodeAs[client.FaultRule](t, r); f2.Code != string(client.CodeUnavailable) || f2.ID == f.ID {
		t.Errorf("http_error fault without a code = %+v, want code unavailable and its own ID", f2)
	}
	if l := decodeAs[client.FaultList](t, h.do(http.MethodGet, "/v1/sim/faults", nil)); len(l.Items) != 2 || l.Items[0].ID != f.ID {
		t.Errorf("faults = %+v", l)
	}
	r = h.do(http.MethodDelete, "/v1/sim/faults/"+f.ID, nil)
	if r.Status != http.StatusNoContent {
		t.Errorf("DELETE fault = %s, want 204", r)
	}
	wantAPIError(t, h.do(http.MethodDelete, "/v1/sim/faults/"+f.ID, nil), http.StatusNotFound, client.CodeNotFound)
	if l := decodeAs[client.FaultList](t, h.do(http.MethodGet, "/v1/sim/faults", nil)); len(l.Items) != 1 {
		t.Errorf("after delete faults = %+v", l)
	}

	for _, tt := range []struct {
		name string
		body any
	}{
		{"unknown mode", client.FaultRule{Mode: "explode"}},
		{"unknown kind", client.FaultRule{Mode: wire.FaultFail, Kind: "spaceship"}},
		// A machine's create action is deploy: a rule on "create" would never fire.
		{"an action the kind lacks", client.FaultRule{Mode: wire.FaultFail, Kind: "machine", Action: "create"}},
		{"an action no kind has", client.FaultRule{Mode: wire.FaultFail, Action: "explode"}},
		{"a phase the kind lacks", client.FaultRule{Mode: wire.FaultFail, Kind: "machine", Phase: "RUNNING"}},
		{"a phase no kind has", client.FaultRule{Mode: wire.FaultFail, Phase: "MELTING"}},
		{"a phase the action never passes through", client.FaultRule{Mode: wire.FaultFail, Kind: "machine", Action: "stop", Phase: "DEPLOYING"}},
		{"a phase on an http_error rule", client.FaultRule{Mode: wire.FaultHTTPError, HTTPStatus: 503, Kind: "machine", Phase: "STOPPING"}},
		// CreateError is on create's failure path only: an operation already failing does not
		// fail again, so a fail rule there never fires.
		{"a fail rule on a failure path's phase", client.FaultRule{Mode: wire.FaultFail, Kind: "cluster_inst", Action: "create", Phase: "CreateError"}},
		{"a fail rule on a phase only failure paths pass", client.FaultRule{Mode: wire.FaultFail, Kind: "cluster_inst", Phase: "CreateError"}},
		{"probability above 1", client.FaultRule{Mode: wire.FaultFail, Probability: 1.5}},
		{"negative count", client.FaultRule{Mode: wire.FaultFail, Count: -1}},
		{"slow without factor", client.FaultRule{Mode: wire.FaultSlow}},
		{"http_error without status", client.FaultRule{Mode: wire.FaultHTTPError}},
		{"http_error with a 200", client.FaultRule{Mode: wire.FaultHTTPError, HTTPStatus: 200}},
		{"unknown field", `{"mode": "fail", "kinds": "machine"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantAPIError(t, h.do(http.MethodPost, "/v1/sim/faults", tt.body), http.StatusBadRequest, client.CodeInvalid)
		})
	}
	// A slow (or hanging) rule does act on a failure path's phase.
	r = h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Mode: wire.FaultSlow, Factor: 2, Kind: "cluster_inst", Action: "create", Phase: "CreateError"})
	wantStatus(t, r, "POST slow fault on a failure path's phase", http.StatusCreated)
}

func TestAPISimReset(t *testing.T) {
	h := newTestServer(t, harnessOptions{})
	_, cs := h.openvcloud()
	m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID})
	h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Mode: wire.FaultFail})
	r := h.do(http.MethodPost, "/v1/sim/reset", nil)
	if r.Status != http.StatusNoContent {
		t.Fatalf("reset = %s, want 204", r)
	}
	wantAPIError(t, h.do(http.MethodGet, objPath("machines", m.ID), nil), http.StatusNotFound, client.CodeNotFound)
	if l := decodeAs[client.ObjectList](t, h.do(http.MethodGet, "/v1/cloudspaces", nil)); len(l.Items) != 0 {
		t.Errorf("cloudspaces after reset = %v", l.Items)
	}
	if l := decodeAs[client.FaultList](t, h.do(http.MethodGet, "/v1/sim/faults", nil)); len(l.Items) != 0 {
		t.Errorf("faults after reset = %v", l.Items)
	}
	// The worker finds nothing left to do.
	h.advance(time.Hour)
}

func TestAPISimClock(t *testing.T) {
	h := newTestServer(t, harnessOptions{timeScale: 0.5})
	r := h.do(http.MethodGet, "/v1/sim/clock", nil)
	wantStatus(t, r, "GET clock", http.StatusOK)
	if c := decodeAs[client.ClockState](t, r); !c.Now.Equal(harnessT0) || c.TimeScale != 0.5 {
		t.Errorf("clock = %+v, want %v at scale 0.5", c, harnessT0)
	}
	r = h.do(http.MethodPost, "/v1/sim/clock", client.ClockAdvance{Advance: "1h30m"})
	wantStatus(t, r, "advance clock", http.StatusOK)
	if c := decodeAs[client.ClockState](t, r); !c.Now.Equal(harnessT0.Add(90 * time.Minute)) {
		t.Errorf("clock after advancing 1h30m = %v", c.Now)
	}
	if now := h.engine.Clock().Now(); !now.Equal(harnessT0.Add(90 * time.Minute)) {
		t.Errorf("engine clock = %v", now)
	}
	for _, bad := range []any{client.ClockAdvance{Advance: "soon"}, client.ClockAdvance{Advance: "-1h"}, client.ClockAdvance{}, `{"advance": 5}`} {
		wantAPIError(t, h.do(http.MethodPost, "/v1/sim/clock", bad), http.StatusBadRequest, client.CodeInvalid)
	}

	// Advancing the clock through the API drives time-driven kinds (with the worker).
	w := newTestServer(t, harnessOptions{worker: true, timeScale: 0.001})
	start := time.Now().UTC().Add(24 * time.Hour)
	lease := w.create("leases", client.CreateRequest{Name: "l", Spec: map[string]any{
		"start_date": start.Format(time.RFC3339), "end_date": start.Add(time.Hour).Format(time.RFC3339)}})
	waitState(t, w, "leases", lease.ID, "PENDING")
	wantStatus(t, w.do(http.MethodPost, "/v1/sim/clock", client.ClockAdvance{Advance: "24h30m"}), "advance", http.StatusOK)
	waitState(t, w, "leases", lease.ID, "ACTIVE")
}

// waitState long-polls until the object is static in want.
func waitState(t testing.TB, h *harness, coll, id, want string) client.Object {
	t.Helper()
	var o client.Object
	// Each long-poll may time out on a slow machine, and a static object may be about to start
	// a system or timer action: poll again until it rests in want.
	simtest.Eventually(t, 45*time.Second, coll+"/"+id+" static in "+want, func() bool {
		r := h.do(http.MethodGet, objPath(coll, id)+"?wait=static&timeout=5s", nil)
		wantStatus(t, r, "long-poll", http.StatusOK)
		o = decodeAs[client.Object](t, r)
		return o.Static && o.State == want
	})
	return o
}

func TestAPISimConfig(t *testing.T) {
	h := newTestServer(t, harnessOptions{timeScale: 0.25, healAfter: 5 * time.Minute})
	r := h.do(http.MethodGet, "/v1/sim/config", nil)
	wantStatus(t, r, "GET config", http.StatusOK)
	if c := decodeAs[client.SimConfig](t, r); c.TimeScale != 0.25 || c.HealAfter != "5m0s" {
		t.Errorf("config = %+v", c)
	}
	r = h.do(http.MethodPut, "/v1/sim/config", client.SimConfig{TimeScale: 2})
	wantStatus(t, r, "PUT config", http.StatusOK)
	if c := decodeAs[client.SimConfig](t, r); c.TimeScale != 2 || c.HealAfter != "5m0s" {
		t.Errorf("config after setting the scale = %+v, want 2 and heal_after unchanged", c)
	}
	r = h.do(http.MethodPut, "/v1/sim/config", client.SimConfig{HealAfter: "1m"})
	if c := decodeAs[client.SimConfig](t, r); c.TimeScale != 2 || c.HealAfter != "1m0s" {
		t.Errorf("config after setting heal_after = %+v", c)
	}
	if scale, heal := h.engine.Config(); scale != 2 || heal != time.Minute {
		t.Errorf("engine config = %v, %v", scale, heal)
	}
	// New phases use the new scale.
	a := h.create("accounts", client.CreateRequest{Name: "acme"})
	cs := h.create("cloudspaces", client.CreateRequest{Name: "net", ParentID: a.ID})
	if want := harnessT0.Add(4 * time.Second); !cs.Operation.DueAt.Equal(want) {
		t.Errorf("DEPLOYING due at %v, want %v (2s × 2)", cs.Operation.DueAt, want)
	}
	for _, bad := range []any{`{"time_scale": -1}`, `{"heal_after": "later"}`, `{"heal_after": "-1m"}`, `{"time_scale": "fast"}`} {
		wantAPIError(t, h.do(http.MethodPut, "/v1/sim/config", bad), http.StatusBadRequest, client.CodeInvalid)
	}
}

func TestAPIHealthzOpenAPIMetrics(t *testing.T) {
	h := newTestServer(t, harnessOptions{metrics: true, tokens: map[string]string{"tokA": "a"}})
	// healthz, openapi.json and metrics are open even with tokens.
	r := h.do(http.MethodGet, "/healthz", nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"ok"`) {
		t.Errorf("/healthz = %s", r)
	}
	r = h.do(http.MethodGet, "/openapi.json", nil)
	wantStatus(t, r, "/openapi.json", http.StatusOK)
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") || len(doc.Paths) == 0 {
		t.Errorf("/openapi.json is not an OpenAPI 3 document: %v %q", err, doc.OpenAPI)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("/openapi.json Content-Type = %q", ct)
	}

	a := h.as("tokA")
	_, cs := a.openvcloud()
	m := a.runningMachine(cs.ID, "web")
	a.act("machines", m.ID, "stop", nil)
	a.mustSettle("machines", m.ID, "HALTED")
	r = h.do(http.MethodGet, "/metrics", nil)
	wantStatus(t, r, "/metrics", http.StatusOK)
	body := string(r.Body)
	for _, want := range []string{
		`lifecyclesim_objects{kind="machine",state="HALTED"} 1`,
		`lifecyclesim_objects{kind="cloudspace",state="DEPLOYED"} 1`,
		`lifecyclesim_transitions_total{action="stop",kind="machine",outcome="succeeded"} 1`,
		`lifecyclesim_transitions_total{action="deploy",kind="machine",outcome="succeeded"} 1`,
		`lifecyclesim_http_request_duration_seconds_bucket{code="202",method="POST",route="/v1/:collection/:id/actions/:action"`,
		`lifecyclesim_http_request_duration_seconds_count{code="200",method="GET",route="/v1/:collection/:id"}`,
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
