package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// runCtl runs a client command line (as lifecyclesim would, after its name) and returns what
// it printed.
func runCtl(t *testing.T, getenv func(string) string, line ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	if !isCtl(line[0]) {
		t.Fatalf("%q is not a client command", line[0])
	}
	err := ctl(context.Background(), line[0], line[1:], getenv, &out)
	return out.String(), err
}

// mustCtl runs a command that must succeed.
func mustCtl(t *testing.T, getenv func(string) string, line ...string) string {
	t.Helper()
	out, err := runCtl(t, getenv, line...)
	if err != nil {
		t.Fatalf("lifecyclesim %s: %v\n%s", strings.Join(line, " "), err, out)
	}
	return out
}

// TestCtl runs every client command against a live simulator with tokens, reading the
// endpoint and token from the environment as a CI job sets them, in tables and in JSON.
func TestCtl(t *testing.T) {
	ctx := context.Background()
	sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "acme"}), simtest.WithAdminToken("adm"))
	getenv := env(envEndpoint, sim.URL, envToken, "tok-a")

	// Each command's --help names it and its flags.
	for _, c := range ctlCommands {
		if out := mustCtl(t, getenv, c.name, "--help"); !strings.Contains(out, "Usage: lifecyclesim "+c.name) || !strings.Contains(out, "-endpoint") {
			t.Errorf("lifecyclesim %s --help printed:\n%s", c.name, out)
		}
	}
	if out := mustCtl(t, getenv, "wait", "ready"); !strings.Contains(out, sim.URL+" is ready") {
		t.Errorf("wait ready printed %q", out)
	}
	acct, err := sim.Client.Create(ctx, "accounts", client.CreateRequest{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sim.Client.Create(ctx, "cloudspaces", client.CreateRequest{Name: "net", ParentID: acct.ID})
	if err != nil {
		t.Fatal(err)
	}
	var landed client.Object
	if err := json.Unmarshal([]byte(mustCtl(t, getenv, "wait", "static", "cloudspaces", cs.ID, "--output", "json")), &landed); err != nil {
		t.Fatal(err)
	}
	if landed.ID != cs.ID || landed.State != "DEPLOYED" || !landed.Static {
		t.Errorf("wait static printed %+v, want the cloudspace DEPLOYED", landed)
	}

	// Fault rules: add (a table with its ID), list (JSON), remove.
	out := mustCtl(t, getenv, "faults", "add", "--kind", "machine", "--action", "stop", "--mode", "fail", "--count", "1", "--message", "no power")
	if !strings.Contains(out, "ID") || !strings.Contains(out, "machine") || !strings.Contains(out, `message="no power" count=1`) {
		t.Errorf("faults add printed:\n%s", out)
	}
	var list client.FaultList
	if err := json.Unmarshal([]byte(mustCtl(t, getenv, "faults", "list", "--output=json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Action != "stop" || list.Items[0].Count != 1 {
		t.Fatalf("faults list = %+v, want the stop rule", list)
	}
	// Flags may follow the positional arguments.
	if out := mustCtl(t, getenv, "faults", "remove", list.Items[0].ID, "--output", "table"); !strings.Contains(out, "removed "+list.Items[0].ID) {
		t.Errorf("faults remove printed %q", out)
	}
	if rules, err := sim.Client.Faults(ctx); err != nil || len(rules) != 0 {
		t.Errorf("after faults remove the rules are %+v (%v)", rules, err)
	}

	// The clock: read with the tenant's token, advanced with the admin's.
	before, err := sim.Client.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, getenv, "clock"); !strings.Contains(out, "NOW") || !strings.Contains(out, "TIME_SCALE") {
		t.Errorf("clock printed %q", out)
	}
	var st client.ClockState
	if err := json.Unmarshal([]byte(mustCtl(t, getenv, "clock", "advance", "2h", "--token", "adm", "--output", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Now.Sub(before.Now) < 2*time.Hour {
		t.Errorf("clock advance 2h moved the clock from %v to %v", before.Now, st.Now)
	}

	// The journal: what the commands sent, filtered.
	if _, err := sim.Client.Get(ctx, "machines", "machine-nope"); err == nil {
		t.Fatal("machine-nope exists")
	}
	out = mustCtl(t, getenv, "journal", "--status", "4xx")
	if !strings.Contains(out, "GET /v1/machines/machine-nope") || !strings.Contains(out, "not_found") || strings.Contains(out, "/v1/sim/faults") {
		t.Errorf("journal --status 4xx printed:\n%s", out)
	}
	var j client.JournalList
	if err := json.Unmarshal([]byte(mustCtl(t, getenv, "journal", "--path", "/v1/sim/faults", "--method", "POST", "--output", "json")), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Items) != 1 || j.Items[0].Status != 201 || !strings.HasPrefix(j.Items[0].UserAgent, "lifecyclesim-cli/") {
		t.Errorf("the journal of the fault's add = %+v", j.Items)
	}

	testCtlState(t, getenv)

	// Reset: the tenant's objects go, and its journal starts again.
	if out := mustCtl(t, getenv, "reset"); strings.TrimSpace(out) != "reset" {
		t.Errorf("reset printed %q", out)
	}
	if objs, err := sim.Client.ListAll(ctx, "cloudspaces", client.ListOptions{}); err != nil || len(objs) != 0 {
		t.Errorf("after reset the cloudspaces are %v (%v)", objs, err)
	}
	if err := json.Unmarshal([]byte(mustCtl(t, getenv, "journal", "--output", "json")), &j); err != nil || len(j.Items) != 2 ||
		j.Items[0].Path != "/v1/sim/reset" || j.Items[1].Path != "/v1/cloudspaces" {
		t.Errorf("after reset the journal is %+v (%v), want the reset and the list after it", j.Items, err)
	}
}

// testCtlState exports the tenant of getenv's simulator to a file and imports it into a
// second live simulator (whose clock is behind: refused with its tenant's token, advanced with
// the admin's) and into a SQLite file, read back with export --db: the same document each
// time but for the tenant's name and the clock the export read.
func testCtlState(t *testing.T, getenv func(string) string) {
	file := filepath.Join(t.TempDir(), "state.json")
	if out := mustCtl(t, getenv, "export", "--out", file); !strings.Contains(out, file) {
		t.Errorf("export --out printed %q", out)
	}
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if printed := mustCtl(t, getenv, "export"); !sameState(t, []byte(printed), doc, "") {
		t.Errorf("export printed\n%s\nwant the document export --out wrote\n%s", printed, doc)
	}
	var st engine.State
	if err := json.Unmarshal(doc, &st); err != nil || st.Tenant != "acme" || len(st.Objects) != 2 || len(st.Events) < 3 {
		t.Fatalf("export wrote %s (%v), want acme's account and cloudspace with their histories", doc, err)
	}

	other := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-b": "beta"}), simtest.WithAdminToken("adm2"))
	otherEnv := env(envEndpoint, other.URL, envToken, "tok-b")
	if out, err := runCtl(t, otherEnv, "import", file); err == nil || !strings.Contains(err.Error(), "admin token") {
		t.Errorf("import behind the document's clock with a tenant's token = %v (printed %q), want a refusal naming the admin token", err, out)
	}
	var res client.ImportResult
	if err := json.Unmarshal([]byte(mustCtl(t, otherEnv, "import", file, "--token", "adm2", "--tenant", "beta", "--output", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Tenant != "beta" || res.Objects != 2 || res.Clock.Before(st.Clock) {
		t.Errorf("import printed %+v, want 2 objects into beta, the clock at %v or later", res, st.Clock)
	}
	if again := mustCtl(t, otherEnv, "export"); !sameState(t, []byte(again), doc, "beta") {
		t.Errorf("export after import =\n%s\nwant but for the tenant and clock\n%s", again, doc)
	}

	// A store file: imported into, exported from, without a simulator.
	db := filepath.Join(t.TempDir(), "sim.db")
	if out := mustCtl(t, getenv, "import", file, "--db", db, "--tenant", "beta"); !strings.Contains(out, "OBJECTS") || !strings.Contains(out, "beta") {
		t.Errorf("import --db printed %q", out)
	}
	if fromFile := mustCtl(t, getenv, "export", "--db", db, "--tenant", "beta"); !sameState(t, []byte(fromFile), doc, "beta") {
		t.Errorf("export --db =\n%s\nwant but for the tenant and clock\n%s", fromFile, doc)
	}
	if out, err := runCtl(t, getenv, "import", file, "--db", db, "--tenant", "beta"); err == nil || !strings.Contains(err.Error(), "empty tenant") {
		t.Errorf("import --db into a tenant that holds objects = %v (printed %q), want a refusal", err, out)
	}
}

// sameState reports whether two exports hold the same, but for the clock they were read at,
// the second's tenant renamed to tenant (when not "").
func sameState(t *testing.T, got, want []byte, tenant string) bool {
	t.Helper()
	if tenant != "" {
		want = bytes.ReplaceAll(want, []byte(`"tenant":"acme"`), []byte(`"tenant":"`+tenant+`"`))
	}
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	delete(g, "clock")
	delete(w, "clock")
	return reflect.DeepEqual(g, w)
}

// TestCtlImportAdviceRuns: an import behind the document's clock, refused, names the command
// that moves the clock (lifecyclesim clock advance D); run as it is written, with the admin
// token, it lets the same import through with the tenant's token.
func TestCtlImportAdviceRuns(t *testing.T) {
	src := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "acme"}), simtest.WithAdminToken("adm"))
	srcEnv := env(envEndpoint, src.URL, envToken, "tok-a")
	if _, err := src.Client.Create(context.Background(), "accounts", client.CreateRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	mustCtl(t, srcEnv, "clock", "advance", "90m", "--token", "adm")
	file := filepath.Join(t.TempDir(), "state.json")
	mustCtl(t, srcEnv, "export", "--out", file)

	dst := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-b": "beta"}), simtest.WithAdminToken("adm2"))
	dstEnv := env(envEndpoint, dst.URL, envToken, "tok-b")
	_, err := runCtl(t, dstEnv, "import", file)
	if err == nil {
		t.Fatal("import behind the document's clock went through")
	}
	m := regexp.MustCompile(`\(lifecyclesim (clock advance \S+)\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("the refusal %q names no lifecyclesim clock advance", err)
	}
	mustCtl(t, dstEnv, append(strings.Fields(m[1]), "--token", "adm2")...)
	var res client.ImportResult
	if err := json.Unmarshal([]byte(mustCtl(t, dstEnv, "import", file, "--output", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Tenant != "beta" || res.Objects != 1 {
		t.Errorf("import after lifecyclesim %s printed %+v, want acme's account in beta", m[1], res)
	}
}

// TestCtlErrors: a wrong command line says what to give, and a failing call says why.
func TestCtlErrors(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-a": "acme"}), simtest.WithAdminToken("adm"))
	getenv := env(envEndpoint, sim.URL, envToken, "tok-a")
	tests := []struct {
		name string
		line []string
		want string
	}{
		{"no mode", []string{"faults", "add", "--kind", "machine"}, "add needs --mode"},
		{"bad mode", []string{"faults", "add", "--mode", "explode"}, "unknown fault mode"},
		{"no subcommand", []string{"faults"}, "want list, add or remove ID"},
		{"remove without ID", []string{"faults", "remove"}, "want remove ID"},
		{"bad advance", []string{"clock", "advance", "soon"}, "positive duration such as 90m"},
		{"advance with a tenant's token", []string{"clock", "advance", "1h"}, "admin token"},
		{"unknown object", []string{"wait", "static", "cloudspaces", "cloudspace-nope"}, "not_found"},
		{"wait what", []string{"wait", "forever"}, `unknown subcommand "forever"`},
		{"bad output", []string{"reset", "--output", "yaml"}, "want table or json"},
		{"bad timeout", []string{"reset", "--timeout", "0s"}, "--timeout must be positive"},
		{"wrong token", []string{"reset", "--token", "nope"}, "unknown token"},
		{"bad journal filter", []string{"journal", "--status", "6xx"}, "such as 404"},
		{"bad endpoint", []string{"reset", "--endpoint", "localhost:7575"}, "set --endpoint or LIFECYCLE_ENDPOINT"},
		{"import without a file", []string{"import"}, "the document's FILE"},
		{"import of a missing file", []string{"import", "nope.json"}, "read the document"},
		{"two stores", []string{"export", "--db", "x.db", "--postgres", "postgres://127.0.0.1:1/x"}, "give one"},
		{"export of another tenant with a tenant's token", []string{"export", "--tenant", "other"}, "admin token"},
		{"nobody there", []string{"wait", "ready", "--endpoint", "http://127.0.0.1:1", "--timeout", "300ms"}, "not ready within --timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCtl(t, getenv, tt.line...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("lifecyclesim %s = %v (printed %q), want an error saying %q", strings.Join(tt.line, " "), err, out, tt.want)
			}
		})
	}
}

// TestCtlDocumented runs every line of the operator guide's CI block (the fenced block after
// its "illustrative: ci-commands;" marker, which the docs-blocks test leaves to this one) against a live simulator with tokens, as a shell would: its export
// sets the environment, $VARIABLES expand, quotes group, comments end a line.
func TestCtlDocumented(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(guide), "<!-- illustrative: ci-commands;")
	if !ok {
		t.Fatal("simulator/README.md has no ci-commands block")
	}
	_, after, _ = strings.Cut(after, "```sh\n")
	block, _, _ := strings.Cut(after, "```")

	ctx := context.Background()
	sim := simtest.Start(t, simtest.WithTokens(map[string]string{"s3cret": "ci"}), simtest.WithAdminToken("adm"))
	vars := map[string]string{"LIFECYCLESIM_ADMIN_TOKEN": "adm"}
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		words := shellWords(t, line, func(k string) string { return vars[k] })
		switch {
		case len(words) == 0:
			continue
		case words[0] == "export":
			for _, kv := range words[1:] {
				k, v, _ := strings.Cut(kv, "=")
				vars[k] = v
			}
			// The documented endpoint is the default address; the test's simulator is elsewhere.
			vars[envEndpoint] = sim.URL
			continue
		case words[0] != "lifecyclesim":
			t.Fatalf("the CI block runs %q: only lifecyclesim commands are tested here", line)
		}
		if words[1] == "wait" && len(words) > 2 && words[2] == "static" {
			// A machine being deployed, made after the reset, for the line to wait on.
			acct, err := sim.Client.Create(ctx, "accounts", client.CreateRequest{Name: "ci"})
			if err != nil {
				t.Fatal(err)
			}
			cs, err := sim.Client.Create(ctx, "cloudspaces", client.CreateRequest{Name: "net", ParentID: acct.ID})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sim.Client.WaitStatic(ctx, "cloudspaces", cs.ID, client.WaitOptions{}); err != nil {
				t.Fatal(err)
			}
			m, err := sim.Client.Create(ctx, "machines", client.CreateRequest{Name: "web", ParentID: cs.ID, Spec: map[string]any{"image_id": "img"}})
			if err != nil {
				t.Fatal(err)
			}
			vars["MACHINE_ID"] = m.ID
			words = shellWords(t, line, func(k string) string { return vars[k] })
		}
		out, err := runCtl(t, func(k string) string { return vars[k] }, words[1:]...)
		if err != nil {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
		ran++
	}
	if ran < 8 {
		t.Errorf("ran %d lifecyclesim lines of the CI block, want every one (at least 8)", ran)
	}
}

// shellWords splits a line as sh would for the documented commands: blanks separate words,
// double and single quotes group, $NAME and ${NAME} expand outside single quotes, and # starts
// a comment.
func shellWords(t *testing.T, line string, lookup func(string) string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote == '\'' && ch != '\'':
			cur.WriteByte(ch)
		case ch == '\'' || ch == '"':
			inWord = true
			switch quote {
			case 0:
				quote = ch
			case ch:
				quote = 0
			default:
				cur.WriteByte(ch)
			}
		case ch == '$':
			name := ""
			j := i + 1
			if j < len(line) && line[j] == '{' {
				end := strings.IndexByte(line[j:], '}')
				if end < 0 {
					t.Fatalf("unclosed ${ in %q", line)
				}
				name, i = line[j+1:j+end], j+end
			} else {
				for j < len(line) && (line[j] == '_' || line[j] >= 'A' && line[j] <= 'Z' || line[j] >= 'a' && line[j] <= 'z' || line[j] >= '0' && line[j] <= '9') {
					j++
				}
				name, i = line[i+1:j], j-1
			}
			cur.WriteString(lookup(name))
			inWord = true
		case quote == 0 && (ch == ' ' || ch == '\t'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case quote == 0 && ch == '#' && !inWord:
			i = len(line)
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestStateDocumented runs every line of the operator guide's state block (after its
// "illustrative: state-commands;" marker) in a directory of its own: an export of a live
// simulator's tenant, its import into a second live simulator (the documented port 7576 is the
// second simulator's address) and into a SQLite file, and the export of that file, which is
// the first document but for the clock.
func TestStateDocumented(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(guide), "<!-- illustrative: state-commands;")
	if !ok {
		t.Fatal("simulator/README.md has no state-commands block")
	}
	_, after, _ = strings.Cut(after, "```sh\n")
	block, _, _ := strings.Cut(after, "```")

	tokens := map[string]string{"s3cret": "ci"}
	first := simtest.Start(t, simtest.WithTokens(tokens), simtest.WithAdminToken("adm"))
	second := simtest.Start(t, simtest.WithTokens(tokens), simtest.WithAdminToken("adm"))
	acct, err := first.Client.Create(t.Context(), "accounts", client.CreateRequest{Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	vars := map[string]string{"LIFECYCLESIM_ADMIN_TOKEN": "adm"}
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		words := shellWords(t, strings.ReplaceAll(line, "http://127.0.0.1:7576", second.URL), func(k string) string { return vars[k] })
		switch {
		case len(words) == 0:
			continue
		case words[0] == "export":
			for _, kv := range words[1:] {
				k, v, _ := strings.Cut(kv, "=")
				vars[k] = v
			}
			vars[envEndpoint] = first.URL // the documented endpoint is the default address
			continue
		case words[0] != "lifecyclesim":
			t.Fatalf("the state block runs %q: only lifecyclesim commands are tested here", line)
		}
		if out, err := runCtl(t, func(k string) string { return vars[k] }, words[1:]...); err != nil {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
		ran++
	}
	if ran != 4 {
		t.Errorf("ran %d lifecyclesim lines of the state block, want 4", ran)
	}
	doc, err := os.ReadFile("state.json")
	if err != nil || !strings.Contains(string(doc), acct.ID) {
		t.Fatalf("state.json = %s (%v), want the tenant's account", doc, err)
	}
	if again, err := os.ReadFile("again.json"); err != nil || !sameState(t, again, doc, "") {
		t.Errorf("again.json = %s (%v), want state.json but for the clock", again, err)
	}
	if objs, err := second.Client.ListAll(t.Context(), "accounts", client.ListOptions{}); err != nil || len(objs) != 1 || objs[0].ID != acct.ID {
		t.Errorf("the second simulator's accounts = %v (%v), want the imported one", objs, err)
	}
}
