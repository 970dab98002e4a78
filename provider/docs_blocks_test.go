package provider

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Every HCL block and shell command of the pages users read runs in a test, or says why it
// cannot: the front page (README.md) and the repository's pages it links, and the templates
// docs/ is generated from (docs/ itself is not read twice). TestDocsBlocks checks that each
// block either runs here or carries a marker, an HTML comment on the line before it:
//
//	<!-- illustrative: REASON -->      not run (needs Docker, a PostgreSQL server, ...)
//	<!-- docs-test: server -->          a shell block that starts the simulator: run in the
//	                                    background; the next blocks wait until it is ready
//	<!-- docs-test: output -->          a block of output the shell block before it prints
//	<!-- docs-test: with DIR -->        an HCL fragment that runs beside the example DIR
//	<!-- docs-test: cli-config -->      an HCL block of Terraform's CLI configuration
//	<!-- docs-test: before: COMMAND --> COMMAND runs (hidden from readers) before the block
//
// TestAccDocsBlocks runs them, one session per page (pages in parallel, the blocks of a page in
// order, as a reader runs them): in a directory whose entries link to the repository's (so
// files the commands write stay out of the checkout), with the simulator's address
// (127.0.0.1:7575, localhost:7575) replaced by a free one and /tmp/ by the session's own. A
// shell block's `export`s, and the servers it starts with `&`, carry over to the next blocks of
// the page; each command's output must show what its comment claims (HTTP statuses, states,
// error codes); placeholders (ID, ACCOUNT_ID, MCI_ID...) name the last object of that kind the
// page's commands made, or one made for it. An HCL block is validated, applied, planned again
// (empty) and destroyed against the page's simulator, or an in-process one.

// docBlock is one fenced code block of a page.
type docBlock struct {
	page string
	line int
	lang string
	text string
	// marks are the markers (HTML comments) on the lines right before it.
	marks []string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d (%s)", b.page, b.line, b.lang) }

// kind classifies a block: "hcl", "shell", or "other" (output, YAML, Go, diagrams).
func (b docBlock) kind() string {
	switch b.lang {
	case "hcl", "terraform", "tf":
		return "hcl"
	case "sh", "shell", "bash", "console":
		return "shell"
	}
	return "other"
}

// mark returns the argument of a marker with the given keyword ("illustrative",
// "docs-test: server", ...) and whether the block has it.
func (b docBlock) mark(key string) (string, bool) {
	for _, m := range b.marks {
		if m == key {
			return "", true
		}
		if rest, ok := strings.CutPrefix(m, key+":"); ok {
			return strings.TrimSpace(rest), true
		}
		if rest, ok := strings.CutPrefix(m, key+" "); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

var (
	fenceLine  = regexp.MustCompile("^(\\s*)```\\s*([A-Za-z0-9_-]*)\\s*$")
	markerLine = regexp.MustCompile(`^\s*<!--\s*((?:illustrative|docs-test):.*?)\s*-->\s*$`)
	pageLink   = regexp.MustCompile(`\]\(([^)\s#:]+\.md)(?:#[^)]*)?\)`)
)

// docPages lists the pages the blocks come from: README.md and the repository's Markdown
// pages it links (and they link, in turn), with a page of docs/ replaced by its template;
// then every template.
func docPages(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..")
	var pages []string
	seen := map[string]bool{}
	var visit func(rel string)
	visit = func(rel string) {
		rel = filepath.ToSlash(filepath.Clean(rel))
		if strings.HasPrefix(rel, "docs/") {
			rel = "templates/" + strings.TrimPrefix(strings.TrimSuffix(rel, ".md"), "docs/") + ".md.tmpl"
		}
		if seen[rel] {
			return
		}
		seen[rel] = true
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Errorf("a page links %s, which cannot be read: %v", rel, err)
			return
		}
		pages = append(pages, rel)
		// A template's links are relative to the page generated from it, in docs/.
		base := filepath.Dir(rel)
		if rest, ok := strings.CutPrefix(base, "templates"); ok {
			base = "docs" + rest
		}
		for _, m := range pageLink.FindAllStringSubmatch(string(b), -1) {
			visit(filepath.Join(base, m[1]))
		}
	}
	visit("README.md")
	err := filepath.WalkDir(filepath.Join(root, "templates"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".tmpl") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		visit(rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// pageBlocks reads the fenced code blocks of a page.
func pageBlocks(t *testing.T, page string) []docBlock {
	t.Helper()
	f, err := os.Open(filepath.Join("..", page))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []docBlock
	var cur *docBlock
	var indent string
	var marks []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur != nil {
			if m := fenceLine.FindStringSubmatch(line); m != nil && m[2] == "" {
				blocks = append(blocks, *cur)
				cur = nil
				continue
			}
			cur.text += strings.TrimPrefix(line, indent) + "\n"
			continue
		}
		if m := fenceLine.FindStringSubmatch(line); m != nil {
			cur = &docBlock{page: page, line: n, lang: m[2], marks: marks}
			indent = m[1]
			marks = nil
			continue
		}
		if m := markerLine.FindStringSubmatch(line); m != nil {
			marks = append(marks, m[1])
			continue
		}
		if strings.TrimSpace(line) != "" {
			marks = nil
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Errorf("%s:%d: a code block is never closed", page, cur.line)
	}
	return blocks
}

// docsTestKeys are the docs-test markers the harness knows.
var docsTestKeys = []string{"server", "output", "with", "cli-config", "before"}

// TestDocsBlocks: every HCL and shell block of the pages runs in TestAccDocsBlocks or is
// marked illustrative with its reason; markers are ones the harness knows. It logs the counts.
func TestDocsBlocks(t *testing.T) {
	counts := map[string]int{}
	reasons := map[string]int{}
	for _, page := range docPages(t) {
		blocks := pageBlocks(t, page)
		for i, b := range blocks {
			for _, m := range b.marks {
				key, arg, _ := strings.Cut(m, ":")
				if key == "illustrative" {
					if strings.TrimSpace(arg) == "" {
						t.Errorf("%s: an illustrative marker without its reason (<!-- illustrative: needs Docker -->)", b)
					}
					continue
				}
				words := strings.Fields(arg)
				if len(words) == 0 || !slices.Contains(docsTestKeys, strings.TrimSuffix(words[0], ":")) {
					t.Errorf("%s: unknown marker %q (docs-test: %s)", b, m, strings.Join(docsTestKeys, ", "))
				}
			}
			if reason, ok := b.mark("illustrative"); ok {
				counts["illustrative"]++
				reasons[reason]++
				continue
			}
			switch b.kind() {
			case "hcl", "shell":
				counts["run: "+b.kind()]++
			default:
				if _, ok := b.mark("docs-test: output"); ok {
					j := i - 1
					for j >= 0 && blocks[j].kind() == "other" && slices.Contains(blocks[j].marks, "docs-test: output") {
						j-- // the output of the same shell block, shown in parts
					}
					if j < 0 || blocks[j].kind() != "shell" {
						t.Errorf("%s: an output block that follows no shell block", b)
					}
					counts["checked: output"]++
				} else {
					counts["other (not run: "+orNone(b.lang)+")"]++
				}
			}
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		t.Logf("DOCS BLOCKS %-40s %d", k, counts[k])
	}
	for r, n := range reasons {
		t.Logf("DOCS BLOCKS illustrative, %-30s %d", r, n)
	}
	if counts["run: hcl"] == 0 || counts["run: shell"] == 0 {
		t.Errorf("no HCL or no shell block to run: %v", counts)
	}
}

func orNone(s string) string {
	if s == "" {
		return "no language"
	}
	return s
}

// TestAccDocsBlocks runs the blocks of every page, one session per page.
func TestAccDocsBlocks(t *testing.T) {
	x := newExampleRunner(t)
	for _, page := range docPages(t) {
		var run []docBlock
		for _, b := range pageBlocks(t, page) {
			if _, ok := b.mark("illustrative"); ok {
				continue
			}
			if _, ok := b.mark("docs-test: output"); ok || b.kind() != "other" {
				run = append(run, b)
			}
		}
		if len(run) == 0 {
			continue
		}
		t.Run(page, func(t *testing.T) {
			t.Parallel()
			s := newDocSession(t, x)
			for _, b := range run {
				start := time.Now()
				s.run(t, b)
				t.Logf("%s ran in %v", b, time.Since(start).Round(100*time.Millisecond))
			}
		})
	}
}

// docSession is one page's run: its directory, environment, simulator and objects.
type docSession struct {
	x    *exampleRunner
	dir  string // the repository's entries, linked
	tmp  string // stands for /tmp/
	addr string // stands for 127.0.0.1:7575
	env  []string
	// envFile holds the environment the last shell block left (env -0), exports included.
	envFile string
	// exportFile holds its exports for the next shell block (export -p).
	exportFile string
	// cwdFile holds the directory the last shell block ended in.
	cwdFile string
	// groups are the process groups of the shell blocks: their background jobs live until
	// the session ends.
	groups []int
	// background says a block started something in the background (a server).
	background bool
	// made maps a kind to the ID of the last object of that kind the page's commands made.
	made map[string]string
	// lastOutput is the output of the last shell block.
	lastOutput string
}

func newDocSession(t *testing.T, x *exampleRunner) *docSession {
	t.Helper()
	base := t.TempDir()
	s := &docSession{x: x, dir: filepath.Join(base, "repo"), tmp: filepath.Join(base, "tmp"),
		envFile: filepath.Join(base, "env0"), exportFile: filepath.Join(base, "exports.sh"), cwdFile: filepath.Join(base, "cwd"), made: map[string]string{}}
	for _, d := range []string{s.dir, s.tmp, filepath.Join(base, "gobin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if slices.Contains([]string{".git", "bin", "dist", "dist-lifecyclesim", "dev.tfrc"}, e.Name()) || strings.HasSuffix(e.Name(), ".db") {
			continue
		}
		abs, err := filepath.Abs(filepath.Join("..", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(s.dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	l.Close()
	gobin := filepath.Join(base, "gobin")
	s.env = append(slices.Clone(x.env),
		"LIFECYCLE_ENDPOINT=http://"+s.addr, "LIFECYCLESIM_ADDR="+s.addr, "DEMO_ADDR="+s.addr,
		"DEMO_TIME_SCALE=0.05", "TMPDIR="+s.tmp, "GOBIN="+gobin, "GOFLAGS=-trimpath",
		// Terraform asks before it applies, as it asks the reader: the session answers yes.
		"TF_INPUT=1", "TF_IN_AUTOMATION=")
	// A reader runs make from a shell, not from inside make test.
	s.env = slices.DeleteFunc(s.env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL"
	})
	for i, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			s.env[i] = "PATH=" + gobin + string(os.PathListSeparator) + v
		}
	}
	t.Cleanup(func() { s.stopGroups(t) })
	return s
}

// substitute points a block's text at the session: its simulator address and /tmp/.
func (s *docSession) substitute(text string) string {
	for _, a := range []string{"127.0.0.1:7575", "localhost:7575"} {
		text = strings.ReplaceAll(text, a, s.addr)
	}
	return strings.ReplaceAll(text, "/tmp/", s.tmp+"/")
}

// currentEnv is the session's environment with what the last shell block exported.
func (s *docSession) currentEnv(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(s.envFile)
	if errors.Is(err, fs.ErrNotExist) {
		return s.env
	}
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for kv := range strings.SplitSeq(strings.TrimSuffix(string(b), "\x00"), "\x00") {
		env = append(env, kv)
	}
	return env
}

func (s *docSession) run(t *testing.T, b docBlock) {
	t.Helper()
	if before, ok := b.mark("docs-test: before"); ok {
		s.shell(t, b, s.substitute(before), false, true)
	}
	if _, ok := b.mark("docs-test: output"); ok {
		s.checkOutput(t, b, b.text, s.lastOutput)
		return
	}
	if s.background {
		s.waitReady(t, b)
	}
	switch b.kind() {
	case "shell":
		_, server := b.mark("docs-test: server")
		s.runShell(t, b, server)
	case "hcl":
		s.runHCL(t, b)
	}
}

// readyClient asks a simulator whether it is ready; a probe never hangs.
var readyClient = &http.Client{Timeout: 5 * time.Second}

// waitReady waits until the simulator a block started answers /readyz (a reader waits for it).
func (s *docSession) waitReady(t *testing.T, b docBlock) {
	t.Helper()
	simtest.Eventually(t, 3*time.Minute, fmt.Sprintf("the simulator started before %s to be ready at %s", b, s.addr), func() bool {
		resp, err := readyClient.Get("http://" + s.addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// command is one command of a shell block, with the claims of its comment.
type command struct {
	text    string
	comment string
	// expected is the output a console block shows after the command.
	expected string
}

// commands splits a shell block into commands: a line, with the lines a quote or a backslash
// carries on; a console block's commands start with "$ " and the lines after are its output.
func commands(b docBlock) []command {
	var out []command
	var cur strings.Builder
	open := false
	console := b.lang == "console"
	for line := range strings.Lines(b.text) {
		if console && cur.Len() == 0 && !strings.HasPrefix(line, "$ ") {
			if len(out) > 0 {
				out[len(out)-1].expected += line
			}
			continue
		}
		if console && cur.Len() == 0 {
			line = strings.TrimPrefix(line, "$ ")
		}
		if cur.Len() == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			continue // a comment line: its apostrophes are no quotes
		}
		cur.WriteString(line)
		if strings.Count(line, "'")%2 == 1 {
			open = !open
		}
		if open || strings.HasSuffix(strings.TrimRight(line, "\n"), "\\") {
			continue
		}
		text := strings.TrimRight(cur.String(), "\n")
		cur.Reset()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		c := command{text: text}
		if i := commentAt(text); i >= 0 {
			c.comment = text[i+1:]
		}
		out = append(out, c)
	}
	return out
}

// commentAt is the index of a trailing comment's # (after white space, outside quotes), or -1.
func commentAt(s string) int {
	quote := rune(0)
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return i
		}
	}
	return -1
}

var (
	placeholder = regexp.MustCompile(`\b(?:([A-Z][A-Z0-9]*)_)?ID\b`)
	// httpStatus is a status a comment starts with ("# 202, DEPLOYING"): the command's answer.
	httpStatus = regexp.MustCompile(`^\s*([1-5][0-9][0-9])\b`)
	claimWord  = regexp.MustCompile(`[A-Za-z_]+`)
	statusOut  = regexp.MustCompile(`@@HTTP ([0-9]{3})@@`)
)

// runShell runs a shell block's commands in one bash, as a reader pastes them, and checks
// each command's output against its comment's claims.
func (s *docSession) runShell(t *testing.T, b docBlock, server bool) {
	t.Helper()
	cmds := commands(b)
	if server || startsBackground(b.text) {
		// A reader stops the simulator they started before they start another.
		s.stopBackground(t)
	}
	if server {
		var script strings.Builder
		for _, c := range cmds {
			fmt.Fprintf(&script, "%s\n", s.substitute(c.text))
		}
		s.shell(t, b, script.String(), true, true)
		return
	}
	var all strings.Builder
	for _, c := range cmds {
		// One command at a time, as a reader runs them: the objects it names are static first.
		out := s.shell(t, b, s.substitute(s.resolve(t, b, c.text)), false, b.lang != "console")
		all.WriteString(out)
		s.record(out)
		s.checkClaims(t, b, c, out)
		if c.expected != "" {
			s.checkOutput(t, b, c.expected, out)
		}
	}
	s.lastOutput = all.String()
}

// shell runs a script in the session's directory with bash: exports carry over, and curl
// shows each answer's HTTP status (for the claims). A server block runs in the background.
func (s *docSession) shell(t *testing.T, b docBlock, script string, background, failFast bool) string {
	t.Helper()
	opts := "set -o pipefail"
	if failFast {
		opts = "set -eo pipefail" // a console block shows failing commands with their output
	}
	prelude := fmt.Sprintf("%[2]s\nif [ -f %[1]q ]; then . %[1]q; fi\nif [ -f %[3]q ]; then cd \"$(cat %[3]q)\"; fi\n"+
		"curl() { command curl -w '\\n@@HTTP %%{http_code}@@\\n' \"$@\"; }\n", s.exportFile, opts, s.cwdFile)
	epilogue := fmt.Sprintf("\nexport -p > %q\nenv -0 > %q\npwd > %q\n", s.exportFile, s.envFile, s.cwdFile)
	if background {
		epilogue = ""
	}
	outFile, err := os.CreateTemp(s.tmp, "out-")
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	cmd := exec.Command("bash", "-c", prelude+script+epilogue)
	cmd.Dir = s.dir
	cmd.Env = s.currentEnv(t)
	cmd.Stdin = strings.NewReader(strings.Repeat("yes\n", 20))
	// A file, not a pipe: background jobs keep it open after bash exits.
	cmd.Stdout, cmd.Stderr = outFile, outFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.groups = append(s.groups, cmd.Process.Pid)
	if background {
		s.background = true
		go func() { _ = cmd.Wait() }()
		return ""
	}
	err = cmd.Wait()
	out, rerr := os.ReadFile(outFile.Name())
	if rerr != nil {
		t.Fatal(rerr)
	}
	if startsBackground(script) {
		s.background = true
	}
	if err != nil && failFast {
		t.Fatalf("%s: the commands fail (%v):\n%s\noutput:\n%s", b, err, script, out)
	}
	return string(out)
}

// startsBackground reports whether a script leaves a job running (a line ending with &).
func startsBackground(script string) bool {
	return regexp.MustCompile(`(?m)&\s*(#.*)?$`).MatchString(script)
}

// stopBackground stops what the page's blocks left running, and waits until the simulator's
// address is free.
func (s *docSession) stopBackground(t *testing.T) {
	t.Helper()
	if !s.background {
		return
	}
	s.stopGroups(t)
	s.background = false
	simtest.Eventually(t, time.Minute, "the simulator's address "+s.addr+" to be free", func() bool {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
}

// stopGroups ends the process groups of the page's blocks (their background jobs) and waits
// until none of their processes is left (they may write in the session's directory).
func (s *docSession) stopGroups(t *testing.T) {
	t.Helper()
	for _, g := range s.groups {
		_ = syscall.Kill(-g, syscall.SIGTERM)
	}
	simtest.Eventually(t, time.Minute, "the processes the page's blocks started to end", func() bool {
		for _, g := range s.groups {
			if groupAlive(g) {
				return false
			}
		}
		return true
	})
	s.groups = nil
}

// groupAlive reports whether a process group has a process that is not a zombie (an orphan's
// zombie waits for an init that may not reap it; it writes nothing). It reads /proc, or asks
// kill(2) where there is none.
func groupAlive(g int) bool {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return syscall.Kill(-g, 0) == nil
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone since the glob
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its ")".
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(g) {
			return true
		}
	}
	return false
}

// resolve replaces a command's placeholders (ID, ACCOUNT_ID...) with the ID of the last object
// of that kind the page made, or of one made for it, waiting until the object is static (a
// reader runs the next command once the last one is done).
func (s *docSession) resolve(t *testing.T, b docBlock, text string) string {
	t.Helper()
	if !placeholder.MatchString(text) {
		return text
	}
	reg := lifecycle.Builtin()
	c, err := client.New(client.Config{Endpoint: "http://" + s.addr})
	if err != nil {
		t.Fatal(err)
	}
	sim := &testSim{URL: "http://" + s.addr, Client: c}
	return placeholder.ReplaceAllStringFunc(text, func(ph string) string {
		m := placeholder.FindStringSubmatch(ph)
		var k *lifecycle.Kind
		if m[1] != "" {
			k, err = reg.Kind(strings.ToLower(m[1]))
		} else if coll := regexp.MustCompile(`/v1/([a-z_]+)/` + ph + `\b`).FindStringSubmatch(text); coll != nil {
			var ok bool
			if k, ok = reg.ByCollection(coll[1]); !ok {
				err = fmt.Errorf("no kind serves /v1/%s", coll[1])
			}
		} else {
			err = fmt.Errorf("no collection before it")
		}
		if err != nil {
			t.Fatalf("%s: cannot tell which object %s stands for in %q: %v", b, ph, text, err)
		}
		id, ok := s.made[k.Name]
		if !ok {
			all, err := c.ListAll(context.Background(), k.Collection, client.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) > 0 {
				id = all[len(all)-1].ID
			} else {
				id = sim.makeObject(t, k.Name, "docs-"+k.Name).ID
			}
			s.made[k.Name] = id
		}
		sim.waitStatic(t, k.Collection, id)
		return id
	})
}

// record notes the objects an output shows: the JSON objects with an id and a kind, one per
// line as the simulator answers them.
func (s *docSession) record(out string) {
	for line := range strings.Lines(out) {
		var v map[string]any
		if json.Unmarshal([]byte(line), &v) != nil {
			continue
		}
		id, _ := v["id"].(string)
		kind, _ := v["kind"].(string)
		if id != "" && kind != "" {
			s.made[kind] = id
		}
	}
}

// checkClaims checks what a command's comment says of its answer: HTTP statuses, states
// (one of a kind's states) and error codes must show in its output.
func (s *docSession) checkClaims(t *testing.T, b docBlock, c command, out string) {
	t.Helper()
	if c.comment == "" {
		return
	}
	var statuses []string
	for _, m := range statusOut.FindAllStringSubmatch(out, -1) {
		statuses = append(statuses, m[1])
	}
	if len(statuses) > 0 {
		if m := httpStatus.FindStringSubmatch(c.comment); m != nil {
			if !slices.Contains(statuses, m[1]) {
				t.Errorf("%s: %q says %s, the answer was %v:\n%s", b, c.text, m[1], statuses, out)
			}
		}
	}
	states := knownStates()
	for _, w := range claimWord.FindAllString(c.comment, -1) {
		if (states[w] || wire.StatusOf(wire.Code(w)) != http.StatusInternalServerError && strings.Contains(w, "_")) && !strings.Contains(out, w) {
			t.Errorf("%s: %q says %s, which its output does not show:\n%s", b, c.text, w, out)
		}
	}
}

var (
	statesOnce sync.Once
	statesSet  map[string]bool
)

// knownStates are the states of the built-in kinds (a word of a comment that is one is a claim).
func knownStates() map[string]bool {
	statesOnce.Do(func() {
		statesSet = map[string]bool{}
		for _, k := range lifecycle.Builtin().Kinds() {
			for _, st := range slices.Concat(k.StaticStates(), k.States.Transition) {
				if len(st) > 3 && strings.ToUpper(st) == st {
					statesSet[st] = true
				}
			}
		}
	})
	return statesSet
}

// normalize makes output comparable: box drawing and ANSI escapes dropped, words holding
// digits (IDs, durations) masked, white space (line wrapping included) collapsed.
func normalize(s string) string {
	s = regexp.MustCompile(`\x1b\[[0-9;]*m|[│╷╵]`).ReplaceAllString(s, " ")
	s = regexp.MustCompile(`\S*[0-9]\S*`).ReplaceAllString(s, "#")
	return strings.Join(strings.Fields(s), " ")
}

// checkOutput checks that every line the page shows appears in the output.
func (s *docSession) checkOutput(t *testing.T, b docBlock, want, got string) {
	t.Helper()
	g := normalize(got)
	for line := range strings.Lines(want) {
		if w := normalize(line); w != "" && !strings.Contains(g, w) {
			t.Errorf("%s: the page shows %q, the commands printed:\n%s", b, strings.TrimSpace(line), got)
		}
	}
}

// runHCL validates, applies, plans (empty) and destroys an HCL block against the page's
// simulator, or an in-process one when the page started none.
func (s *docSession) runHCL(t *testing.T, b docBlock) {
	t.Helper()
	env := s.currentEnv(t)
	if !s.background {
		sim := newTestSim(t)
		env = append(env, "LIFECYCLE_ENDPOINT="+sim.URL)
	}
	env = append(env, "TF_INPUT=0")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(s.x.cli.path, append([]string{"-chdir=" + dir}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: terraform %s: %v\n%s\nthe block:\n%s", b, strings.Join(args, " "), err, out, b.text)
		}
		return string(out)
	}
	text := s.substitute(b.text)
	if _, ok := b.mark("docs-test: cli-config"); ok {
		// The CLI configuration, pointed at the provider this test built, runs a plan of the
		// machine example.
		dir := s.x.copyExample(t, "resources/lifecycle_machine")
		text = regexp.MustCompile(`"/path/to/[^"]*"`).ReplaceAllString(text, fmt.Sprintf("%q", exampleBuildDir))
		rc := filepath.Join(s.tmp, "docs.tfrc")
		writeFile(t, rc, text)
		env = append(env, "TF_CLI_CONFIG_FILE="+rc)
		run(dir, "plan", "-no-color")
		return
	}
	var dir string
	if ex, ok := b.mark("docs-test: with"); ok {
		dir = s.x.copyExample(t, strings.TrimPrefix(ex, "examples/"))
		writeFile(t, filepath.Join(dir, "docs_block.tf"), text)
	} else {
		dir = t.TempDir()
		writeFile(t, filepath.Join(dir, "main.tf"), text)
		if !strings.Contains(text, "required_providers") {
			p, err := os.ReadFile(filepath.Join(examplesDir, "provider", "provider.tf"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "provider.tf"), string(p))
		}
	}
	run(dir, "validate", "-no-color")
	run(dir, "apply", "-auto-approve", "-no-color")
	cmd := exec.Command(s.x.cli.path, "-chdir="+dir, "plan", "-detailed-exitcode", "-no-color")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: terraform plan after the apply is not empty (%v):\n%s", b, err, out)
	}
	run(dir, "destroy", "-auto-approve", "-no-color")
}
