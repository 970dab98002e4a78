package simulator

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this module's import path.
const module = "github.com/lifecyclesim/terraform-provider-lifecycle"

// TestLayers keeps the simulator's packages importing only downward (see doc.go): it lists
// each package's dependencies with go list -deps and fails on any import a layer must not
// have, so the layering cannot regress silently.
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const (
		echo      = "github.com/labstack/echo/v4"
		prom      = "github.com/prometheus/client_golang/prometheus"
		retryable = "github.com/hashicorp/go-retryablehttp"
	)
	sim := module + "/simulator/"
	tests := []struct {
		pkg    string
		forbid []string
	}{
		{"simulator/wire", []string{echo, prom, retryable, sim + "store", sim + "engine", sim + "httpapi", sim + "client", sim + "dashboard", "modernc.org/sqlite"}},
		{"simulator/store", []string{echo, prom, retryable, sim + "engine", sim + "httpapi", sim + "wire", sim + "client", sim + "dashboard", module + "/lifecycle"}},
		{"simulator/store/storetest", []string{echo, prom, retryable, sim + "engine", sim + "httpapi", sim + "client"}},
		{"simulator/engine", []string{echo, prom, retryable, sim + "httpapi", sim + "client", sim + "dashboard", "net/http/httptest"}},
		{"simulator/dashboard", []string{echo, prom, retryable, sim + "engine", sim + "store", sim + "httpapi", sim + "client"}},
		{"simulator/httpapi", []string{retryable, sim + "client", sim + "simtest"}},
		{"simulator/client", []string{echo, prom, sim + "engine", sim + "store", sim + "httpapi", sim + "dashboard"}},
		{"simulator/cmd/lifecyclesim", []string{retryable, sim + "client", sim + "simtest"}},
	}
	for _, tt := range tests {
		for _, d := range goList(t, "-deps", module+"/"+tt.pkg) {
			for _, f := range tt.forbid {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s: it must not (see simulator/doc.go)", tt.pkg, d)
				}
			}
		}
	}
	// The wire contract needs nothing beyond the standard library and package lifecycle.
	lifecycleDeps := goList(t, "-deps", module+"/lifecycle")
	for _, d := range goList(t, "-deps", module+"/simulator/wire") {
		first, _, _ := strings.Cut(d, "/")
		if strings.Contains(first, ".") && d != module+"/simulator/wire" && !slices.Contains(lifecycleDeps, d) {
			t.Errorf("simulator/wire depends on %s: it may use only the standard library and package lifecycle", d)
		}
	}
	// Only the HTTP layer imports echo and Prometheus directly.
	for _, p := range goList(t, "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...") {
		path, imports, _ := strings.Cut(p, " ")
		for _, imp := range strings.Fields(imports) {
			if (imp == echo || strings.HasPrefix(imp, prom)) && path != module+"/simulator/httpapi" {
				t.Errorf("%s imports %s: only simulator/httpapi may", path, imp)
			}
		}
	}
}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %v: %v\n%s", args, err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
