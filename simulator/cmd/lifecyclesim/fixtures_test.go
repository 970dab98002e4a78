package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// TestFixturesDocumented runs the fixtures block of simulator/README.md as written: check
// accepts the example, and the server started with it serves every family's object in its
// state with its real history, its clock past the ended lease; started again on the same
// file (with LIFECYCLESIM_FIXTURES, the flag's environment twin) it makes nothing twice.
func TestFixturesDocumented(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(guide), "<!-- illustrative: fixtures;")
	if !ok {
		t.Fatal("simulator/README.md has no fixtures block")
	}
	_, after, _ = strings.Cut(after, "```sh\n")
	block, _, _ := strings.Cut(after, "```")
	root := filepath.Join("..", "..", "..")
	tmp := t.TempDir()
	var lines [][]string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		words := shellWords(t, line, func(string) string { return "" })
		if len(words) == 0 || words[0] != "lifecyclesim" {
			t.Fatalf("the fixtures block runs %q: only lifecyclesim commands are tested here", line)
		}
		for i, w := range words {
			if strings.HasPrefix(w, "examples/") {
				words[i] = filepath.Join(root, w)
			}
			words[i] = strings.ReplaceAll(words[i], "/tmp/", tmp+"/")
		}
		lines = append(lines, words[1:])
	}
	if len(lines) != 2 || lines[0][0] != "check" {
		t.Fatalf("the fixtures block is %q, want a check and a server", lines)
	}

	// lifecyclesim --help shows the same server line, with the store left to its default.
	var help bytes.Buffer
	fs := newFlagSet(&config{tokens: tokenFlags{}})
	fs.SetOutput(&help)
	usage(fs)()
	helpLine := "lifecyclesim " + strings.Join(slices.DeleteFunc(slices.Clone(lines[1]), func(w string) bool {
		return strings.HasPrefix(w, "--db") || strings.HasSuffix(w, ".db")
	}), " ")
	if !strings.Contains(help.String(), strings.ReplaceAll(helpLine, filepath.Join(root, "examples"), "examples")) {
		t.Errorf("lifecyclesim --help does not show %q:\n%s", helpLine, help.String())
	}

	var out bytes.Buffer
	if err := check(lines[0][1:], &out); err != nil || !strings.Contains(out.String(), "7 objects OK (tenant: ci)") {
		t.Fatalf("lifecyclesim %s = %v\n%s", strings.Join(lines[0], " "), err, out.String())
	}

	server := append(slices.Clone(lines[1]), "--addr", "127.0.0.1:0", "--time-scale", "0.001")
	wallBefore := time.Now()
	s := start(t, server...)
	ctx := context.Background()
	c, err := client.New(client.Config{Endpoint: s.url, Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"accounts/acme": "CONFIRMED", "cloudspaces/net": "DEPLOYED", "machines/web": "HALTED", "leases/nightly": "TERMINATED",
		"mcis/fleet": "Running", "cloudlets/edge-1": "UpdateError", "clusters/hadoop": "Error",
	}
	first := served(t, c)
	for key, state := range want {
		o, ok := first[key]
		if !ok || o.State != state {
			t.Errorf("%s is served as %+v, want it %s", key, o, state)
		}
	}
	if text, _ := first["mcis/fleet"].Status["text"].(string); text != "Partial-Running:2 (R:2/3)" {
		t.Errorf("the MCI's status is %q, want Partial-Running:2 (R:2/3)", text)
	}
	events, err := c.Events(ctx, "cloudlets", first["cloudlets/edge-1"].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(e client.Event) bool { return e.Error == "CRM upgrade failed" && e.To == "UpdateError" }) {
		t.Errorf("the cloudlet's history %+v has no failed upgrade", events)
	}
	clock, err := c.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lead := clock.Now.Sub(wallBefore); lead < time.Hour {
		t.Errorf("the clock is %s ahead of the start, want past the lease's end (+1h)", lead)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// The same file again, through the environment: nothing is made twice.
	flagless := slices.DeleteFunc(slices.Clone(server), func(w string) bool { return w == "--fixtures" || strings.HasSuffix(w, "ci.yaml") })
	s = startEnv(t, env("LIFECYCLESIM_FIXTURES", filepath.Join(root, "examples", "fixtures", "ci.yaml")), flagless...)
	c, err = client.New(client.Config{Endpoint: s.url, Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	again := served(t, c)
	if len(again) != len(first) {
		t.Errorf("the second start serves %d objects, want the first's %d", len(again), len(first))
	}
	for key, o := range first {
		if again[key].ID != o.ID {
			t.Errorf("%s is %s after the second start, want %s", key, again[key].ID, o.ID)
		}
	}
}

// served lists every object the simulator serves to c by collection/name, with the ID after
// a name seen already (the events of two leases).
func served(t *testing.T, c *client.Client) map[string]client.Object {
	t.Helper()
	ctx := context.Background()
	kinds, err := c.Kinds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]client.Object{}
	for _, k := range kinds {
		objs, err := c.ListAll(ctx, k.Collection, client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			key := k.Collection + "/" + o.Name
			if _, dup := out[key]; dup {
				key += "/" + o.ID
			}
			out[key] = o
		}
	}
	return out
}

// TestRunFixturesRefused: a fixture file that does not load stops the start with its
// problems at file:line, and the check the error advises lists them too.
func TestRunFixturesRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fixtures.yaml")
	if err := os.WriteFile(file, []byte("tenants:\n  - tenant: ci\n    objects:\n      - {kind: vmachine, name: web}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, []string{"--db", ":memory:", "--token", "ci=s3cret", "--addr", "127.0.0.1:0", "--fixtures", file}, env(), nil)
	const want = `fixtures.yaml:4: unknown kind "vmachine"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("run with a bad fixture file = %v, want %s", err, want)
	}
	advice := "lifecyclesim check --fixtures " + file
	if !strings.Contains(err.Error(), advice) {
		t.Fatalf("run = %v, want it to advise %q", err, advice)
	}
	var out bytes.Buffer
	args := strings.Fields(strings.TrimPrefix(advice, "lifecyclesim "))
	if err := check(args[1:], &out); err == nil || !strings.Contains(out.String(), `fixtures.yaml:4: error: unknown kind "vmachine"`) ||
		!strings.Contains(out.String(), "1 problem in") {
		t.Errorf("lifecyclesim %s = %v\n%s", strings.Join(args, " "), err, out.String())
	}
	// A tenant the tokens do not name is refused at the start (check cannot know the tokens).
	if err := os.WriteFile(file, []byte("tenants:\n  - tenant: acme\n    objects: [{kind: account, name: acme}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(ctx, []string{"--db", ":memory:", "--token", "ci=s3cret", "--addr", "127.0.0.1:0", "--fixtures", file}, env(), nil)
	if err == nil || !strings.Contains(err.Error(), `fixtures.yaml:2: tenant "acme" has no token: add --token acme=TOKEN`) {
		t.Errorf("run with a tenant without a token = %v", err)
	}
}

// TestCheckFixturesWithKinds: check --fixtures knows the kinds of --kinds, as the server does.
func TestCheckFixturesWithKinds(t *testing.T) {
	dir := t.TempDir()
	kinds := writeGadgetKinds(t, dir)
	file := filepath.Join(dir, "fixtures.yaml")
	if err := os.WriteFile(file, []byte("tenants:\n  - objects: [{kind: gadget, name: g, state: ON}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		ok   bool
		want string
	}{
		{"with its kinds", []string{"--kinds", kinds, "--fixtures", file}, true, "1 object OK (tenant: the open tenant)"},
		{"kinds as arguments", []string{"--fixtures", file, kinds}, true, "1 object OK"},
		{"without them", []string{"--fixtures", file}, false, `fixtures.yaml:2: error: unknown kind "gadget"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := check(tt.args, &out)
			if (err == nil) != tt.ok || !strings.Contains(out.String(), tt.want) {
				t.Errorf("lifecyclesim check %s = %v\n%s\nwant ok %v and %q", strings.Join(tt.args, " "), err, out.String(), tt.ok, tt.want)
			}
		})
	}
}
