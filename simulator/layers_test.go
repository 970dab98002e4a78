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
	const (
		pgx    = "github.com/jackc/"
		sqlite = "modernc.org/"
	)
	backends := []string{sim + "store/memstore", sim + "store/sqlitestore", sim + "store/pgstore"}
	drivers := []string{pgx, sqlite, sim + "store/sqlitestore", sim + "store/pgstore"}
	tests := []struct {
		pkg    string
		forbid []string
	}{
		{"simulator/wire", []string{echo, prom, retryable, sim + "store", sim + "engine", sim + "httpapi", sim + "client", sim + "dashboard", sqlite}},
		{"simulator/store", []string{echo, prom, retryable, sim + "engine", sim + "httpapi", sim + "wire", sim + "client", sim + "dashboard", module + "/lifecycle"}},
		{"simulator/store/storetest", []string{echo, prom, retryable, sim + "engine", sim + "httpapi", sim + "client", pgx, sqlite, sim + "store/internal", sim + "store/memstore", sim + "store/sqlitestore", sim + "store/pgstore"}},
		{"simulator/store/internal/table", append([]string{"database/sql", pgx, sqlite, sim + "engine", sim + "wire"}, backends...)},
		{"simulator/store/internal/codec", append([]string{"database/sql", pgx, sqlite, sim + "engine", sim + "wire", sim + "store/internal/table"}, backends...)},
		{"simulator/store/memstore", append([]string{"database/sql", pgx, sqlite, sim + "engine", sim + "wire"}, backends[1:]...)},
		{"simulator/store/sqlitestore", []string{pgx, sim + "engine", sim + "wire", backends[0], backends[2]}},
		{"simulator/store/pgstore", []string{sqlite, sim + "engine", sim + "wire", sim + "store/internal/table", backends[0], backends[1]}},
		{"simulator/engine", append([]string{echo, prom, retryable, sim + "httpapi", sim + "client", sim + "dashboard", "net/http/httptest", pgx, sqlite}, backends...)},
		// The dashboard keeps its sessions through the store's interface package (one session
		// interface), never through a backend.
		{"simulator/dashboard", append([]string{echo, prom, retryable, sim + "engine", sim + "store/", sim + "httpapi", sim + "client"}, drivers...)},
		{"simulator/httpapi", append([]string{retryable, sim + "client", sim + "simtest"}, drivers...)},
		// The dialects are plain net/http handlers over the engine (see simulator/dialect):
		// no echo or Prometheus (the HTTP layer mounts them), no store, no client.
		{"simulator/dialect", append([]string{echo, prom, retryable, sim + "engine", sim + "httpapi", sim + "client", sim + "dashboard", sim + "simtest"}, drivers...)},
		{"simulator/dialect/blazar", append([]string{echo, prom, retryable, sim + "httpapi", sim + "client", sim + "dashboard", sim + "simtest"}, drivers...)},
		{"simulator/dialect/names", append([]string{echo, prom, retryable, sim + "httpapi", sim + "client", sim + "dashboard", sim + "simtest"}, drivers...)},
		{"simulator/dialect/tumblebug", append([]string{echo, prom, retryable, sim + "httpapi", sim + "client", sim + "dashboard", sim + "simtest"}, drivers...)},
		{"simulator/dialect/sahara", append([]string{echo, prom, retryable, sim + "httpapi", sim + "client", sim + "dashboard", sim + "simtest"}, drivers...)},
		{"simulator/dialect/dialecttest", drivers}, // a test kit: it starts a simulator (simtest), never a database
		{"simulator/dialect/keystone", append([]string{echo, prom, retryable, sim + "engine", sim + "httpapi", sim + "client", sim + "dashboard", sim + "simtest"}, drivers...)},
		// Fixture files load through the engine, like a client's requests: no store backend,
		// no HTTP.
		{"simulator/fixture", append([]string{echo, prom, retryable, sim + "httpapi", sim + "client", sim + "dashboard", sim + "simtest"}, drivers...)},
		{"simulator/simtest", drivers},
		{"simulator/client", []string{echo, prom, sim + "engine", sim + "store", sim + "httpapi", sim + "dashboard"}},
		// The binary links the client on purpose: its client commands (reset, clock, faults,
		// wait, journal) drive a simulator from a CI script, and the container image has no
		// shell or curl, so one binary that serves and drives is what a job can run there.
		{"simulator/cmd/lifecyclesim", []string{sim + "simtest"}},
	}
	for _, tt := range tests {
		for _, d := range goList(t, "-deps", module+"/"+tt.pkg) {
			for _, f := range tt.forbid {
				if d == f || strings.HasPrefix(d, f+"/") || strings.HasSuffix(f, "/") && strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s: it must not (see simulator/doc.go)", tt.pkg, d)
				}
			}
		}
	}
	// The store's interface package and its contract suite are standard library only.
	for _, pkg := range []string{"simulator/store", "simulator/store/storetest"} {
		for _, d := range goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+"/"+pkg) {
			if d != "" && d != module+"/simulator/store" && d != module+"/"+pkg {
				t.Errorf("%s depends on %s: it may use only the standard library and package store", pkg, d)
			}
		}
	}
	// The HTTP layer and the dialects speak to the engine: they import no store package. Only the binary, the
	// benchmark tool and the backends' test kits (sqlitetest, pgtest) import a backend with a
	// database; everything else (simtest) gets memstore or a store its caller opened.
	mayOpen := map[string]bool{
		sim + "cmd/lifecyclesim": true, module + "/internal/benchcompare": true,
		sim + "store/sqlitestore/sqlitetest": true, sim + "store/pgstore/pgtest": true,
	}
	for _, p := range goList(t, "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...") {
		path, imports, _ := strings.Cut(p, " ")
		for _, imp := range strings.Fields(imports) {
			if (path == sim+"httpapi" || strings.HasPrefix(path, sim+"dialect")) && (imp == sim+"store" || strings.HasPrefix(imp, sim+"store/")) {
				t.Errorf("%s imports %s: the HTTP layer and the dialects speak only to the engine", path, imp)
			}
			if imp == sim+"dialect/dialecttest" {
				t.Errorf("%s imports %s: only the dialects' tests may", path, imp)
			}
			if (imp == sim+"store/sqlitestore" || imp == sim+"store/pgstore") && !mayOpen[path] {
				t.Errorf("%s imports %s: only the binary and tests may", path, imp)
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
