package tumblebug_test

import (
	"bytes"
	"context"
	_ "embed"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
)

// upstream is the part of CB-Tumblebug v0.12.5's OpenAPI document the dialect serves (see
// testdata/README.md for its source and licence).
//
//go:embed testdata/swagger-excerpt.json
var upstream []byte

// contract checks exchanges against upstream's document: the request of every accepted
// exchange, the answer of every one, and, beyond what the document's loose schemas say
// (they allow any extra field), that the answer has no field upstream's schema does not
// declare.
type contract struct {
	t      *testing.T
	doc    *openapi3.T
	router routers.Router
	seen   map[string]bool
}

func newContract(t *testing.T, base string) *contract {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(upstream)
	if err != nil {
		t.Fatalf("load the upstream excerpt: %v", err)
	}
	// Upstream's document gives some examples of the wrong type (a string for an object):
	// those are skipped, the rest is validated.
	if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
		t.Fatalf("the upstream excerpt is not a valid OpenAPI document: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: base + httpapi.TumblebugPrefix}}
	router, err := legacy.NewRouter(doc, openapi3.DisableExamplesValidation())
	if err != nil {
		t.Fatal(err)
	}
	return &contract{t: t, doc: doc, router: router, seen: map[string]bool{}}
}

// schema is the document's component schema name.
func (c *contract) schema(name string) *openapi3.Schema {
	c.t.Helper()
	s, ok := c.doc.Components.Schemas[name]
	if !ok {
		c.t.Fatalf("the excerpt has no schema %s", name)
	}
	return s.Value
}

// check validates an exchange against the document's operation for it, and its answer's JSON
// (or the part of it at key, when key is set) against the named schema.
func (c *contract) check(x exchange, key, schema string) {
	c.t.Helper()
	what := x.req.Method + " " + x.req.URL.RequestURI()
	route, params, err := c.router.FindRoute(x.req)
	if err != nil {
		c.t.Errorf("%s: upstream's document has no such operation: %v", what, err)
		return
	}
	c.seen[route.Operation.OperationID] = true
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	x.req.Body = io.NopCloser(bytes.NewReader(x.body))
	in := &openapi3filter.RequestValidationInput{Request: x.req, PathParams: params, Route: route, Options: opts}
	if x.status < 400 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			c.t.Errorf("%s was accepted (%d), but upstream's document says the request is invalid: %v", what, x.status, err)
		}
	}
	if x.status >= 400 && route.Operation.Responses.Status(x.status) == nil {
		// Upstream answers a refused action with 500 or 400 (its EndRequestWithLog); the
		// simulator gives a 4xx that fits (409 for a busy or not-allowed MCI), in the same
		// {"message"} body.
		c.value(what, x.out, "", "model.SimpleMsg")
		return
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.status, Header: x.header,
		Body: io.NopCloser(bytes.NewReader(x.raw)), Options: opts}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		c.t.Errorf("%s: the answer %d %s does not match upstream's document: %v", what, x.status, x.raw, err)
	}
	if schema != "" {
		c.value(what, x.out, key, schema)
	}
}

// value validates v (or v[key]) against the named schema, and that it has no undeclared field.
func (c *contract) value(what string, v map[string]any, key, schema string) {
	c.t.Helper()
	var val any = v
	if key != "" {
		val = v[key]
	}
	s := c.schema(schema)
	if err := s.VisitJSON(val); err != nil {
		c.t.Errorf("%s: %s is not upstream's %s: %v", what, key, schema, err)
	}
	for _, f := range undeclared(s, val, "") {
		c.t.Errorf("%s: field %s is not in upstream's %s", what, f, schema)
	}
}

// undeclared lists the fields of v its schema does not declare (through allOf, items and
// properties).
func undeclared(s *openapi3.Schema, v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		props := map[string]*openapi3.Schema{}
		collect(s, props)
		if len(props) == 0 {
			return nil // a free-form object (label)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := props[k]
			if !ok {
				out = append(out, at+"."+k)
				continue
			}
			out = append(out, undeclared(p, v[k], at+"."+k)...)
		}
	case []any:
		if s.Items != nil {
			for _, e := range v {
				out = append(out, undeclared(s.Items.Value, e, at+"[]")...)
			}
		}
	}
	return out
}

func collect(s *openapi3.Schema, props map[string]*openapi3.Schema) {
	for k, p := range s.Properties {
		props[k] = p.Value
	}
	for _, a := range s.AllOf {
		collect(a.Value, props)
	}
}

// The dialect speaks upstream's contract: each operation it serves, with upstream's request
// and answer shapes (the status reply wrapped in {"status": …}), in the order a script drives
// an MCI's life; the seed's POST …?action= answers as upstream's control does.
func TestContract(t *testing.T) {
	sim, tb := start(t)
	c := newContract(t, sim.URL)
	x := do(t, "POST", tb+"/mciDynamic", "", newMCI("mci01"))
	c.check(x, "", "model.MciInfo")
	c.check(do(t, "GET", tb+"/mci/mci01", "", nil), "", "model.MciInfo")
	settle(t, sim)
	for _, step := range []struct{ path, key, schema string }{
		{"/mci/mci01", "", "model.MciInfo"},
		{"/mci/mci01?option=default", "", "model.MciInfo"},
		{"/mci/mci01?option=status", "status", "model.MciStatusInfo"},
		{"/mci/mci01?option=id", "", "model.IdList"},
		{"/mci", "", "infra.RestGetAllMciResponse"},
		{"/mci?option=simple", "", "infra.RestGetAllMciResponse"},
		{"/mci?option=status", "", "infra.RestGetAllMciStatusResponse"},
		{"/mci?option=id", "", "model.IdList"},
		{"/mci/mci01/vm/web-1", "", "model.VmInfo"},
		{"/mci/mci01/vm/web-1?option=status", "", "model.VmStatusInfo"},
		{"/control/mci/mci01/vm/web-1?action=reboot", "", "model.SimpleMsg"},
		{"/mci/mci01/vm/web-9", "", "model.SimpleMsg"},
		{"/control/mci/mci01?action=suspend", "", "model.SimpleMsg"}, // 409: web-1 is rebooting
		{"/mci/nope", "", "model.SimpleMsg"},
		{"/control/mci/mci01?action=reboot", "", "model.SimpleMsg"}, // 409: suspending
	} {
		x := do(t, "GET", tb+step.path, "", nil)
		if x.status >= 500 {
			t.Errorf("GET %s = %d %s", step.path, x.status, x.raw)
		}
		c.check(x, step.key, step.schema)
	}
	if x := do(t, "GET", tb+"/mci/mci01?option=status", "", nil); !strings.Contains(string(x.raw), `"status":{"id":"mci01"`) {
		t.Errorf("status reply %s is not wrapped in {\"status\": …}", x.raw)
	}
	settle(t, sim)
	// The seed's form is not in upstream's document: its answer is upstream's control answer.
	seed := do(t, "POST", tb+"/mci/mci01?action=resume", "", nil)
	if seed.status != http.StatusOK {
		t.Fatalf("seed's POST ?action=resume = %d %s", seed.status, seed.raw)
	}
	c.value("POST ?action=resume", seed.out, "", "model.SimpleMsg")
	settle(t, sim)
	seedVM := do(t, "POST", tb+"/mci/mci01/vm/web-1?action=suspend", "", nil)
	if seedVM.status != http.StatusOK {
		t.Fatalf("seed's POST vm ?action=suspend = %d %s", seedVM.status, seedVM.raw)
	}
	c.value("POST vm ?action=suspend", seedVM.out, "", "model.SimpleMsg")
	settle(t, sim)
	c.check(do(t, "GET", tb+"/control/mci/mci01/vm/web-1?action=resume", "", nil), "", "model.SimpleMsg")
	settle(t, sim)
	c.check(do(t, "GET", tb+"/control/mci/mci01?action=terminate&force=false", "", nil), "", "model.SimpleMsg")
	settle(t, sim)
	c.check(do(t, "DELETE", tb+"/mci/mci01", "", nil), "", "model.IdList")
	c.check(do(t, "DELETE", tb+"/mci/nope?option=force", "", nil), "", "model.SimpleMsg")

	// option=hold: the held MCI, continued; another, withdrawn.
	c.check(do(t, "POST", tb+"/mciDynamic?option=hold", "", newMCI("held")), "", "model.MciInfo")
	c.check(do(t, "GET", tb+"/mci/held?option=status", "", nil), "status", "model.MciStatusInfo")
	c.check(do(t, "GET", tb+"/control/mci/held?action=suspend", "", nil), "", "model.SimpleMsg") // 409: held
	c.check(do(t, "GET", tb+"/control/mci/held?action=continue", "", nil), "", "model.SimpleMsg")
	settle(t, sim)
	c.check(do(t, "GET", tb+"/mci/held", "", nil), "", "model.MciInfo")
	c.check(do(t, "GET", tb+"/control/mci/held?action=withdraw", "", nil), "", "model.SimpleMsg") // 409: not held
	c.check(do(t, "POST", tb+"/mciDynamic?option=hold", "", newMCI("dropped")), "", "model.MciInfo")
	c.check(do(t, "GET", tb+"/control/mci/dropped?action=withdraw", "", nil), "", "model.SimpleMsg")
	c.check(do(t, "GET", tb+"/mci/dropped", "", nil), "", "model.SimpleMsg") // 404: withdrawn

	for _, op := range []string{"GetAllMci", "PostMciDynamic", "GetMci", "DelMci", "GetControlMci", "GetMciVm", "GetControlMciVm"} {
		if !c.seen[op] {
			t.Errorf("no exchange reached upstream's %s", op)
		}
	}
}
