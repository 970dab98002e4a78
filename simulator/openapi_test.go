package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
)

// openAPIValidator checks real HTTP exchanges against openapi.json with kin-openapi: every
// response must be documented (status, content type, schema; the schemas forbid undocumented
// fields), and every request the server accepted must be valid by the document. Rejected
// requests are often malformed on purpose, so only their answers are checked.
//
// To document a new field or endpoint, add it to openapi.json: the validator then checks it
// on every exchange of the tests that use it, and TestOpenAPIValidResponses fails until some
// exchange reaches each operation.
type openAPIValidator struct {
	t      testing.TB
	doc    *openapi3.T
	router routers.Router

	mu sync.Mutex
	// seen counts exchanges per operationId and status.
	seen map[string]map[int]int
}

// loadOpenAPI loads and validates the embedded document.
func loadOpenAPI(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDoc)
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// registerDecoders lets kin-openapi read text/html answers (/docs) as strings, and streamed
// answers (application/x-ndjson) as the array of their lines.
var registerDecoders = sync.OnceFunc(func() {
	openapi3filter.RegisterBodyDecoder("text/html", func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	})
	openapi3filter.RegisterBodyDecoder(client.NDJSON, func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		var lines []any
		dec := json.NewDecoder(r)
		for {
			var line any
			if err := dec.Decode(&line); errors.Is(err, io.EOF) {
				return lines, nil
			} else if err != nil {
				return nil, err
			}
			lines = append(lines, line)
		}
	})
})

func newOpenAPIValidator(t testing.TB) *openAPIValidator {
	t.Helper()
	registerDecoders()
	doc := loadOpenAPI(t)
	// Match requests to the test server whatever its address.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("openapi.json router: %v", err)
	}
	return &openAPIValidator{t: t, doc: doc, router: router, seen: map[string]map[int]int{}}
}

// wrap returns a handler that serves with next and validates each exchange.
func (v *openAPIValidator) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())

		r.Body = io.NopCloser(bytes.NewReader(body))
		v.check(r, rec.Code, rec.Header(), rec.Body.Bytes())
	})
}

func (v *openAPIValidator) check(r *http.Request, status int, header http.Header, body []byte) {
	what := r.Method + " " + r.URL.RequestURI()
	route, params, err := v.router.FindRoute(r)
	if err != nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return // a path or method the API does not have, answered as such
		}
		v.t.Errorf("%s answered %d but openapi.json has no operation for it: %v", what, status, err)
		return
	}
	v.mu.Lock()
	if v.seen[route.Operation.OperationID] == nil {
		v.seen[route.Operation.OperationID] = map[int]int{}
	}
	v.seen[route.Operation.OperationID][status]++
	v.mu.Unlock()

	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	if status < 400 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			v.t.Errorf("%s was accepted (%d), but openapi.json says the request is invalid: %v", what, status, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: status, Header: header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: opts,
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		shown := bytes.TrimSpace(body)
		if len(shown) > 400 {
			shown = append(shown[:400:400], "..."...)
		}
		v.t.Errorf("%s: the answer %d %s does not match openapi.json: %v", what, status, shown, err)
	}
}

// operations lists the document's operationIds.
func (v *openAPIValidator) operations() []string {
	var ids []string
	for _, item := range v.doc.Paths.Map() {
		for _, op := range item.Operations() {
			ids = append(ids, op.OperationID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestOpenAPIDocument checks the document itself: valid OpenAPI, and every operation has an
// operationId, a tag, a summary and, unless it is open and cannot fail, 4xx answers.
func TestOpenAPIDocument(t *testing.T) {
	doc := loadOpenAPI(t)
	ids := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			switch {
			case op.OperationID == "":
				t.Errorf("%s has no operationId", name)
			case ids[op.OperationID] != "":
				t.Errorf("%s and %s share the operationId %s", name, ids[op.OperationID], op.OperationID)
			}
			ids[op.OperationID] = name
			if len(op.Tags) == 0 || op.Summary == "" {
				t.Errorf("%s needs a tag and a summary", name)
			}
			open := op.Security != nil && len(*op.Security) == 0
			if open {
				continue
			}
			if op.Responses.Value("401") == nil || op.Responses.Default() == nil {
				t.Errorf("%s requires a token but documents no 401 or no default error", name)
			}
		}
	}
}

// TestOpenAPINullable checks every nullable schema names its type: OpenAPI 3.0 ignores
// nullable without one, which made every static object (operation: null) off-spec.
func TestOpenAPINullable(t *testing.T) {
	var doc any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["nullable"] == true && v["type"] == nil {
				t.Errorf("%s is nullable but has no type", at)
			}
			for k, c := range v {
				walk(at+"/"+k, c)
			}
		case []any:
			for i, c := range v {
				walk(at+"/"+strconv.Itoa(i), c)
			}
		}
	}
	walk("#", doc)
}

// TestOpenAPIValidResponses drives every operation of the API, successes and the documented
// client errors, and validates each real exchange against openapi.json.
func TestOpenAPIValidResponses(t *testing.T) {
	v := newOpenAPIValidator(t)
	h := newTestServer(t, harnessOptions{metrics: true, openapi: v})
	const bearer = "Bearer s3cret"
	hs := newTestServer(t, harnessOptions{tokens: map[string]string{"s3cret": "acme"}, openapi: v})

	// Operations and kinds.
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/", "/v1/kinds", "/v1/kinds/machine"} {
		wantStatus(t, h.do(http.MethodGet, p, nil), p, http.StatusOK)
	}
	wantStatus(t, h.do(http.MethodGet, "/v1/kinds/nope", nil), "unknown kind", http.StatusNotFound)
	wantStatus(t, hs.do(http.MethodGet, "/v1/kinds", nil, "Authorization", ""), "no token", http.StatusUnauthorized)
	wantStatus(t, hs.do(http.MethodGet, "/v1/kinds", nil, "Authorization", bearer), "token", http.StatusOK)

	// Objects: create (201 and 202), read, long-poll, list, events.
	account, cs := h.openvcloud()
	m := h.create("machines", client.CreateRequest{Name: "web", ParentID: cs.ID, Spec: map[string]any{"memory": 2048}})
	wantStatus(t, h.do(http.MethodGet, objPath("machines", m.ID)+"?wait=static&timeout=0s", nil), "long-poll", http.StatusOK)
	wantStatus(t, h.do(http.MethodPost, "/v1/machines/"+m.ID+"/actions/stop", nil), "busy", http.StatusConflict)
	h.mustSettle("machines", m.ID, "RUNNING")
	// A create and an action that wait on their own request answer in lines.
	streamed := h.do(http.MethodPost, "/v1/machines?wait=static&timeout=0s", h.sampled("machines", client.CreateRequest{Name: "s", ParentID: cs.ID}))
	wantStatus(t, streamed, "create with wait", http.StatusAccepted)
	sm := h.mustSettle("machines", decodeAs[client.Object](t, &response{Body: bytes.SplitN(streamed.Body, []byte("\n"), 2)[0]}).ID, "RUNNING")
	wantStatus(t, h.do(http.MethodPost, "/v1/machines/"+sm.ID+"/actions/reboot?wait=static&timeout=0s", nil), "action with wait", http.StatusAccepted)
	wantStatus(t, h.do(http.MethodPost, "/v1/accounts?wait=static", h.sampled("accounts", client.CreateRequest{Name: "s"})), "static create with wait", http.StatusCreated)
	h.mustSettle("machines", sm.ID, "RUNNING")
	wantStatus(t, h.do(http.MethodDelete, objPath("machines", sm.ID)+"?mode=delete&wait=static&timeout=0s", nil), "delete with wait", http.StatusAccepted)
	wantStatus(t, h.do(http.MethodGet, "/v1/machines?parent_id="+cs.ID+"&limit=1", nil), "list", http.StatusOK)
	wantStatus(t, h.do(http.MethodGet, "/v1/machines?limit=0", nil), "bad limit", http.StatusBadRequest)
	wantStatus(t, h.do(http.MethodGet, "/v1/gizmos", nil), "unknown collection", http.StatusNotFound)
	wantStatus(t, h.do(http.MethodGet, objPath("machines", "machine-nope"), nil), "unknown object", http.StatusNotFound)
	wantStatus(t, h.do(http.MethodGet, objPath("machines", m.ID)+"?wait=soon", nil), "bad wait", http.StatusBadRequest)
	wantStatus(t, h.do(http.MethodGet, objPath("machines", m.ID)+"/events", nil), "events", http.StatusOK)
	wantStatus(t, h.do(http.MethodPost, "/v1/machines", `{"name":`), "bad JSON", http.StatusBadRequest)
	wantStatus(t, h.do(http.MethodPost, "/v1/machines", map[string]any{"name": "x", "colour": "red"}), "unknown field", http.StatusBadRequest)
	wantStatus(t, h.do(http.MethodPost, "/v1/accounts", client.CreateRequest{Name: strings.Repeat("n", engine.MaxNameBytes+1)}),
		"name over the limit (its field in the details)", http.StatusBadRequest)

	// Actions: accepted, refused from this state, with params.
	wantStatus(t, h.do(http.MethodPost, "/v1/machines/"+m.ID+"/actions/restore", nil), "not allowed", http.StatusUnprocessableEntity)
	h.act("machines", m.ID, "stop", nil)
	h.mustSettle("machines", m.ID, "HALTED")
	disk := h.create("disks", client.CreateRequest{Name: "d", ParentID: account.ID})
	h.mustSettle("disks", disk.ID, "CREATED")
	h.act("disks", disk.ID, "attach", map[string]any{"machine_id": m.ID})
	h.mustSettle("disks", disk.ID, "ASSIGNED")

	// Patch: applied, stale version, bad If-Match.
	cur := h.get("machines", m.ID)
	wantStatus(t, h.do(http.MethodPatch, objPath("machines", m.ID), map[string]any{"spec": map[string]any{"memory": 4096}},
		"If-Match", strconv.FormatInt(cur.Version, 10)), "patch", http.StatusOK, http.StatusAccepted)
	h.settle("machines", m.ID)
	wantStatus(t, h.do(http.MethodPatch, objPath("machines", m.ID), map[string]any{"spec": map[string]any{"memory": 1024}},
		"If-Match", strconv.FormatInt(cur.Version, 10)), "stale If-Match", http.StatusPreconditionFailed)
	wantStatus(t, h.do(http.MethodPatch, objPath("machines", m.ID), map[string]any{"spec": map[string]any{}},
		"If-Match", "soon"), "bad If-Match", http.StatusBadRequest)

	// Delete: recycle bin (202), already there (200), bad mode, destroy of a static-create kind (204).
	wantStatus(t, h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=delete", nil), "delete", http.StatusAccepted)
	h.mustSettle("machines", m.ID, "DELETED")
	wantStatus(t, h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=delete", nil), "delete again", http.StatusOK)
	wantStatus(t, h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=shred", nil), "bad mode", http.StatusBadRequest)
	wantStatus(t, h.do(http.MethodDelete, objPath("machines", m.ID)+"?mode=destroy", nil), "destroy", http.StatusAccepted, http.StatusNoContent)
	h.settle("machines", m.ID)

	// Simulator control.
	r := h.do(http.MethodPost, "/v1/sim/faults", map[string]any{"kind": "machine", "action": "stop", "mode": "fail", "count": 1})
	wantStatus(t, r, "add fault", http.StatusCreated)
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/faults", map[string]any{"mode": "explode"}), "bad fault", http.StatusBadRequest)
	wantStatus(t, h.do(http.MethodGet, "/v1/sim/faults", nil), "list faults", http.StatusOK)
	wantStatus(t, h.do(http.MethodDelete, "/v1/sim/faults/"+decodeAs[struct{ ID string }](t, r).ID, nil), "delete fault", http.StatusNoContent)
	wantStatus(t, h.do(http.MethodDelete, "/v1/sim/faults/fault-nope", nil), "unknown fault", http.StatusNotFound)
	wantStatus(t, h.do(http.MethodGet, "/v1/sim/clock", nil), "clock", http.StatusOK)
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/clock", map[string]any{"advance": "1h"}), "advance", http.StatusOK)
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/clock", map[string]any{"advance": "later"}), "bad advance", http.StatusBadRequest)
	wantStatus(t, h.do(http.MethodGet, "/v1/sim/config", nil), "config", http.StatusOK)
	wantStatus(t, h.do(http.MethodPut, "/v1/sim/config", map[string]any{"time_scale": 0.5}), "put config", http.StatusOK)
	wantStatus(t, h.do(http.MethodPut, "/v1/sim/config", map[string]any{"heal_after": "never"}), "bad config", http.StatusBadRequest)
	cl := h.create("cloudlets", client.CreateRequest{Name: "edge"})
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/system/cloudlets/"+cl.ID+"/crm_restart", nil), "system action of a busy object", http.StatusConflict)
	h.mustSettle("cloudlets", cl.ID, "Ready")
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/system/cloudlets/"+cl.ID+"/crm_restart", nil), "system action", http.StatusAccepted)
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/system/cloudlets/"+cl.ID+"/upgrade", nil), "user action as a system one", http.StatusBadRequest)
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/system/cloudlets/cloudlet-nope/crm_restart", nil), "system action, unknown object", http.StatusNotFound)
	wantStatus(t, h.do(http.MethodGet, "/v1/sim/journal?method=POST&status=4xx&limit=5", nil), "journal", http.StatusOK)
	wantStatus(t, h.do(http.MethodGet, "/v1/sim/journal?status=999", nil), "bad journal filter", http.StatusBadRequest)
	exported := h.do(http.MethodGet, "/v1/sim/export", nil)
	wantStatus(t, exported, "export", http.StatusOK)
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/import", string(exported.Body)), "import into a tenant that holds objects", http.StatusPreconditionFailed)
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/import", `{"format":99}`), "import of a newer format", http.StatusBadRequest)
	empty := hs.do(http.MethodGet, "/v1/sim/export", nil, "Authorization", bearer)
	wantStatus(t, empty, "export of an empty tenant", http.StatusOK)
	ahead := decodeAs[engine.State](t, empty)
	ahead.Clock = ahead.Clock.Add(time.Hour)
	wantStatus(t, hs.do(http.MethodPost, "/v1/sim/import", ahead, "Authorization", bearer), "import ahead of the clock with a tenant's token", http.StatusForbidden)
	wantStatus(t, hs.do(http.MethodPost, "/v1/sim/import", string(empty.Body), "Authorization", bearer), "import", http.StatusOK)
	wantStatus(t, h.do(http.MethodPost, "/v1/sim/reset", nil), "reset", http.StatusNoContent)

	// Every operation was reached at least once.
	for _, id := range v.operations() {
		if len(v.seen[id]) == 0 {
			t.Errorf("no exchange reached operation %s: add one to this test", id)
		}
	}
	if testing.Verbose() {
		for _, id := range slices.Sorted(maps.Keys(v.seen)) {
			t.Logf("%-16s %v", id, v.seen[id])
		}
	}
}

// TestDocsPage checks /docs lists every operation of openapi.json and needs nothing online.
func TestDocsPage(t *testing.T) {
	h := newTestServer(t, harnessOptions{tokens: map[string]string{"s3cret": "acme"}})
	r := h.do(http.MethodGet, "/docs", nil)
	wantStatus(t, r, "/docs without a token", http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("/docs Content-Type = %q", ct)
	}
	page := string(r.Body)
	for _, id := range newOpenAPIValidator(t).operations() {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("/docs has no section for operation %s", id)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("/docs contains %q: the page must work offline", bad)
		}
	}
	r = h.do(http.MethodGet, "/", nil)
	wantStatus(t, r, "/ (the dashboard)", http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("/ Content-Type = %q", ct)
	}
}
