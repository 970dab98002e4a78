package client

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestStateExportImport checks the export is returned as the server wrote it, the import sends
// the document as it is, both name the tenant only when asked, and a refusal is a typed error.
func TestStateExportImport(t *testing.T) {
	const doc = `{"format":1,"tenant":"a","clock":"2030-01-02T03:04:05Z","objects":[],"events":[],"fault_rules":[]}`
	var sent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/sim/export":
			_, _ = io.WriteString(w, doc+"\n")
		case r.Method == http.MethodPost && r.URL.Path == "/v1/sim/import" && r.URL.Query().Get("tenant") == "held":
			w.WriteHeader(http.StatusPreconditionFailed)
			_, _ = io.WriteString(w, `{"error":{"code":"conflict","message":"object x is held by this simulator already"}}`)
		case r.Method == http.MethodPost && r.URL.Path == "/v1/sim/import":
			b, _ := io.ReadAll(r.Body)
			sent = string(b)
			_, _ = io.WriteString(w, `{"tenant":"`+r.URL.Query().Get("tenant")+`","objects":0,"events":0,"fault_rules":0,"clock":"2030-01-02T03:04:05Z"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)

	got, err := c.ExportState(t.Context(), "")
	if err != nil || string(got) != doc {
		t.Fatalf("ExportState = %s, %v, want %s", got, err, doc)
	}
	res, err := c.ImportState(t.Context(), "b", got)
	if err != nil || res.Tenant != "b" || sent != doc {
		t.Errorf("ImportState = %+v, %v (sent %s), want tenant b and the document as exported", res, err, sent)
	}
	var ae *Error
	if _, err := c.ImportState(t.Context(), "held", got); !errors.As(err, &ae) || ae.Code != CodeConflict {
		t.Errorf("ImportState of a held ID = %v, want a conflict *Error", err)
	}
	if _, err := c.ImportState(t.Context(), "", []byte("{")); err == nil {
		t.Error("ImportState of a document that is not JSON succeeded")
	}
}
