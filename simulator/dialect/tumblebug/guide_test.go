package tumblebug_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// guideCommands are the curl commands of one of the guide's tested blocks (the block after
// the comment naming test), one a line.
func guideCommands(t *testing.T, test string) []string {
	t.Helper()
	raw, err := os.ReadFile("../../dialects/tumblebug.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), test+" ")
	if !ok {
		t.Fatalf("tumblebug.md has no block marked %s", test)
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	block, _, _ := strings.Cut(rest, "```")
	return strings.Split(strings.TrimSpace(block), "\n")
}

// words splits a command line as sh does for these commands (single-quoted words).
func words(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '\'' {
			end := strings.IndexByte(line[1:], '\'')
			if end < 0 {
				t.Fatalf("unclosed quote in %q", line)
			}
			out, line = append(out, line[1:end+1]), line[end+2:]
			continue
		}
		w, r, _ := strings.Cut(line, " ")
		out, line = append(out, w), r
	}
	return out
}

// curl runs a curl command line of the forms the guide uses (-s, -u, -X, -H, -d, a URL),
// with the guide's address replaced by base.
func curl(t *testing.T, line, base string) (int, []byte) {
	t.Helper()
	args := words(t, line)
	if args[0] != "curl" {
		t.Fatalf("%q is not a curl command", line)
	}
	method, url, body, user := "GET", "", "", ""
	header := http.Header{}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-s":
		case "-X":
			i++
			method = args[i]
		case "-u":
			i++
			user = args[i]
		case "-H":
			i++
			k, v, _ := strings.Cut(args[i], ": ")
			header.Set(k, v)
		case "-d":
			i++
			body = args[i]
		default:
			url = strings.Replace(args[i], "http://127.0.0.1:7575", base, 1)
		}
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	if name, pass, ok := strings.Cut(user, ":"); ok {
		req.SetBasicAuth(name, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatalf("%s: answer is not JSON: %v", line, err)
	}
	return resp.StatusCode, raw
}

// The guide's curl commands work as written: each answers 200, the MCI they make is Running
// with two VMs, suspends and resumes, is listed, and is gone after the delete.
func TestGuideCommands(t *testing.T) {
	sim, _ := start(t, simtest.WithTokens(map[string]string{"tok-ci": "ci"}))
	lines := guideCommands(t, "TestGuideCommands")
	if len(lines) != 6 {
		t.Fatalf("the guide's block has %d commands, want the 6 this test checks: %q", len(lines), lines)
	}
	want := []string{`"id":"mci01"`, `"status":"Running:2 (R:2/2)"`, `suspend MCI mci01`, `resume MCI mci01`, `"status":"Running:2 (R:2/2)"`, `{"output":["mci01"]}`}
	for i, line := range lines {
		st, raw := curl(t, line, sim.URL)
		if st != http.StatusOK || !strings.Contains(string(raw), want[i]) {
			t.Errorf("%s = %d %s, want 200 with %s", line, st, raw, want[i])
		}
		settle(t, sim)
	}
	cl, err := client.New(client.Config{Endpoint: sim.URL, Token: "tok-ci"})
	if err != nil {
		t.Fatal(err)
	}
	mcis, err := cl.ListAll(context.Background(), "mcis", client.ListOptions{})
	if err != nil || len(mcis) != 0 {
		t.Errorf("/v1 MCIs after the guide's delete = %v, %v; want none", mcis, err)
	}
}

// The guide's hold commands work as written: a held MCI shows Holding with no VM, continue
// provisions it to Running, and a second held MCI is withdrawn.
func TestGuideHoldCommands(t *testing.T) {
	sim, _ := start(t, simtest.WithTokens(map[string]string{"tok-ci": "ci"}))
	lines := guideCommands(t, "TestGuideHoldCommands")
	want := []string{`"status":"Holding:0 (R:0/0)"`, `"status":"Holding:0 (R:0/0)"`, `Continue the holding MCI mci02`, `"status":"Running:2 (R:2/2)"`,
		`"status":"Holding:0 (R:0/0)"`, `Withdraw the holding MCI mci03`}
	if len(lines) != len(want) {
		t.Fatalf("the guide's hold block has %d commands, want the %d this test checks: %q", len(lines), len(want), lines)
	}
	for i, line := range lines {
		st, raw := curl(t, line, sim.URL)
		if st != http.StatusOK || !strings.Contains(string(raw), want[i]) {
			t.Errorf("%s = %d %s, want 200 with %s", line, st, raw, want[i])
		}
		settle(t, sim)
	}
	cl, err := client.New(client.Config{Endpoint: sim.URL, Token: "tok-ci"})
	if err != nil {
		t.Fatal(err)
	}
	mcis, err := cl.ListAll(context.Background(), "mcis", client.ListOptions{})
	if err != nil || len(mcis) != 1 || mcis[0].Name != "mci02" || mcis[0].State != "Running" {
		t.Errorf("/v1 MCIs after the guide's hold commands = %v, %v; want mci02 Running alone", mcis, err)
	}
}
