package sahara

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
)

// Network answers Neutron's version discovery at the catalog's network endpoint, and
// nothing else: `openstack dataprocessing cluster create` builds a network client before it
// sends anything (to resolve --neutron-network, which the simulator does not model), and
// that needs a network endpoint in the catalog.
type Network struct {
	// Prefix is the path the handler is mounted at (/network).
	Prefix string
}

// ServeHTTP implements http.Handler.
func (n Network) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || strings.Trim(strings.TrimPrefix(r.URL.Path, n.Prefix), "/") != "" {
		dialect.JSON(w, http.StatusNotFound, map[string]any{"NeutronError": map[string]any{"type": "HTTPNotFound", "detail": "",
			"message": fmt.Sprintf("%s %s: the simulator models no networks; it answers only Neutron's version discovery (GET %s)", r.Method, r.URL.Path, n.Prefix)}})
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"versions": []map[string]any{{"id": "v2.0", "status": "CURRENT",
		"links": []map[string]string{{"rel": "self", "href": scheme + "://" + r.Host + n.Prefix + "/v2.0/"}}}}})
}
