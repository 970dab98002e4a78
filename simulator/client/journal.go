package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// JournalQuery selects entries of the request journal. Zero fields are not sent.
type JournalQuery struct {
	// Method keeps requests of that method (GET, POST, ...).
	Method string
	// Path keeps requests whose path starts with it (/v1/machines).
	Path string
	// Status keeps answers of that status ("404") or class ("4xx").
	Status string
	// RequestID keeps the request of that X-Request-Id.
	RequestID string
	// After keeps entries whose Seq is above it (what came after an entry already read).
	After int64
	// Limit keeps the newest Limit entries that match; 0 means as many as the journal keeps.
	Limit int
}

func (q JournalQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"method": q.Method, "path": q.Path, "status": q.Status, "request_id": q.RequestID} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.After > 0 {
		v.Set("after", strconv.FormatInt(q.After, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// Journal reads the tenant's request journal: the requests the simulator answered (oldest
// first) that q selects.
func (c *Client) Journal(ctx context.Context, q JournalQuery) (*JournalList, error) {
	var out JournalList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/sim/journal", query: q.values(), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}
