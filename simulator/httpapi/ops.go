package httpapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// readyTimeout bounds the store check of /readyz: a store slower than this is not ready.
const readyTimeout = 2 * time.Second

// probePaths are logged at debug level only: orchestrators call them every few seconds.
var probePaths = []string{"/healthz", "/readyz", "/metrics"}

// requestLog logs every request once it is answered: info for the API, error for 5xx, debug
// for health probes and scrapes.
func requestLog(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			req, res := c.Request(), c.Response()
			status, code, cause := res.Status, "", ""
			if err != nil {
				var ae *wire.Error
				ae, status = answerOf(err)
				code = string(ae.Code)
				if ae.Err != nil {
					cause = ae.Err.Error() // the detail a server error's answer leaves out
				}
			}
			level := slog.LevelInfo
			switch {
			case status >= 500:
				level = slog.LevelError
			case slices.Contains(probePaths, req.URL.Path):
				level = slog.LevelDebug
			}
			ctx := req.Context()
			if !log.Enabled(ctx, level) {
				return err
			}
			attrs := []slog.Attr{
				slog.String("method", req.Method),
				slog.String("path", req.URL.Path),
				slog.String("route", c.Path()),
				slog.Int("status", status),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.String("remote", c.RealIP()),
				slog.String("request_id", requestID(c)),
				slog.String("user_agent", clip(req.UserAgent())),
			}
			if k := req.Header.Get(headerIdempotencyKey); k != "" {
				attrs = append(attrs, slog.String("idempotency_key", clip(k)))
			}
			if err == nil { // an error's body is written after this middleware returns
				attrs = append(attrs, slog.Int64("bytes", res.Size))
			}
			if t := tenant(c); t != "" {
				attrs = append(attrs, slog.String("tenant", t))
			}
			if q := req.URL.RawQuery; q != "" {
				attrs = append(attrs, slog.String("query", q))
			}
			if code != "" {
				attrs = append(attrs, slog.String("error", code))
			}
			if cause != "" {
				attrs = append(attrs, slog.String("cause", cause))
			}
			log.LogAttrs(ctx, level, "request", attrs...)
			return err
		}
	}
}

// headerIdempotencyKey makes a create or an action safe to retry (engine.Create, engine.Act).
const headerIdempotencyKey = "Idempotency-Key"

// maxLoggedHeader bounds a client's header value in a log line.
const maxLoggedHeader = 256

// clip cuts a client's header value to maxLoggedHeader bytes, marking the cut.
func clip(v string) string {
	if len(v) <= maxLoggedHeader {
		return v
	}
	return strings.ToValidUTF8(v[:maxLoggedHeader], "") + "…"
}

// health is the body of /healthz and /readyz.
type health struct {
	Status  string `json:"status"`
	Version string `json:"version,omitempty"`
}

// readyz answers 200 once the store serves a read and a write connection within readyTimeout,
// 503 unavailable otherwise. /healthz only says the process answers.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	if err := s.engine.Ping(ctx); err != nil {
		return &wire.Error{Code: wire.CodeUnavailable, Message: "the store is not ready", RetryAfter: time.Second, Err: err}
	}
	return c.JSON(http.StatusOK, health{Status: "ready", Version: s.version})
}

//go:embed docs.html.tmpl
var docsTemplate string

// apiDoc is the part of openapi.json the reference page shows.
type apiDoc struct {
	Info struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	} `json:"info"`
	Tags []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tags"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas   map[string]json.RawMessage `json:"schemas"`
		Responses map[string]struct {
			Description string `json:"description"`
		} `json:"responses"`
	} `json:"components"`
}

type docOperation struct {
	ID          string   `json:"operationId"`
	Method      string   `json:"-"`
	Path        string   `json:"-"`
	Summary     string   `json:"summary"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Parameters  []struct {
		Name        string          `json:"name"`
		In          string          `json:"in"`
		Required    bool            `json:"required"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
	} `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Ref         string `json:"$ref"`
		Description string `json:"description"`
	} `json:"responses"`
}

// docResponse is one row of an operation's responses.
type docResponse struct{ Status, Description string }

// docPage is what docs.html.tmpl renders.
type docPage struct {
	Title, Version, Description string
	Groups                      []docGroup
	Schemas                     []docSchema
}

type docGroup struct {
	Tag, Description string
	Operations       []docView
}

type docView struct {
	docOperation
	Request   string
	Responses []docResponse
}

type docSchema struct{ Name, JSON string }

// renderDocs builds the API reference page from openapi.json: no JavaScript and nothing
// fetched, so it works offline and in air-gapped CI.
func renderDocs(spec []byte) ([]byte, error) {
	var doc apiDoc
	if err := json.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	page := docPage{Title: doc.Info.Title, Version: doc.Info.Version, Description: doc.Info.Description}
	groups := map[string]*docGroup{}
	for _, t := range doc.Tags {
		page.Groups = append(page.Groups, docGroup{Tag: t.Name, Description: t.Description})
	}
	for i := range page.Groups {
		groups[page.Groups[i].Tag] = &page.Groups[i]
	}
	for _, path := range slices.Sorted(maps.Keys(doc.Paths)) {
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := doc.Paths[path][method]
			if !ok {
				continue
			}
			var op docOperation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("openapi.json %s %s: %w", method, path, err)
			}
			op.Method, op.Path = strings.ToUpper(method), path
			v := docView{docOperation: op}
			if op.RequestBody != nil {
				if c, ok := op.RequestBody.Content["application/json"]; ok {
					v.Request = schemaName(c.Schema)
				}
			}
			for _, st := range slices.Sorted(maps.Keys(op.Responses)) {
				r := op.Responses[st]
				desc := r.Description
				if name, ok := strings.CutPrefix(r.Ref, "#/components/responses/"); ok {
					desc = doc.Components.Responses[name].Description
				}
				v.Responses = append(v.Responses, docResponse{Status: st, Description: desc})
			}
			tag := "other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			g, ok := groups[tag]
			if !ok {
				page.Groups = append(page.Groups, docGroup{Tag: tag})
				g = &page.Groups[len(page.Groups)-1]
				// Appending may have moved the groups: index them again.
				for i := range page.Groups {
					groups[page.Groups[i].Tag] = &page.Groups[i]
				}
			}
			g.Operations = append(g.Operations, v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, doc.Components.Schemas[name], "", "  "); err != nil {
			return nil, fmt.Errorf("openapi.json schema %s: %w", name, err)
		}
		page.Schemas = append(page.Schemas, docSchema{Name: name, JSON: pretty.String()})
	}
	tmpl, err := template.New("docs").Funcs(template.FuncMap{"lower": strings.ToLower}).Parse(docsTemplate)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, page); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// schemaName is the component a schema refers to, or "inline".
func schemaName(raw json.RawMessage) string {
	var s struct {
		Ref string `json:"$ref"`
	}
	_ = json.Unmarshal(raw, &s)
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		return name
	}
	return "inline"
}

var docsPage = sync.OnceValues(func() ([]byte, error) { return renderDocs(openAPI) })

// docs serves the API reference page.
func (s *Server) docs(c echo.Context) error {
	page, err := docsPage()
	if err != nil {
		return err
	}
	return c.HTMLBlob(http.StatusOK, page)
}
