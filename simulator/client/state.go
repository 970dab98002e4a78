package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
)

// MaxStateBytes bounds a state document the client reads or sends (the simulator's bound on an
// import's body).
const MaxStateBytes = 64 << 20

// ExportState returns a tenant's state as the simulator writes it (GET /v1/sim/export): one
// versioned JSON document of its objects, their histories, its fault rules and the clock,
// kept as bytes so that it can be saved and imported as it is. tenant is "" for the token's
// own tenant; with the admin token it names the tenant to export.
func (c *Client) ExportState(ctx context.Context, tenant string) ([]byte, error) {
	var doc json.RawMessage
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/sim/export", query: tenantQuery(tenant), out: &doc, limit: MaxStateBytes})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// ImportState restores a document ExportState returned into an empty tenant (POST
// /v1/sim/import): "" for the token's own, or with the admin token the tenant to import into.
// With the admin token (or on a simulator without tokens) a clock behind the document's is
// advanced to it; otherwise such an import is refused.
func (c *Client) ImportState(ctx context.Context, tenant string, doc []byte) (*ImportResult, error) {
	if !json.Valid(doc) {
		return nil, errors.New("import state: the document is not JSON")
	}
	var out ImportResult
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/sim/import", query: tenantQuery(tenant), body: json.RawMessage(doc), out: &out})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// tenantQuery names a tenant in a query (none for "").
func tenantQuery(tenant string) url.Values {
	if tenant == "" {
		return nil
	}
	return url.Values{"tenant": {tenant}}
}
