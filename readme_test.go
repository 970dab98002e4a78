package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

var update = flag.Bool("update", false, "rewrite the generated parts of the pages")

// pages are the repository's own Markdown pages: the front page and the pages it links.
var pages = []string{"README.md", "PROVIDER.md", "BENCHMARKS.md", "CONTRIBUTING.md", "CHANGELOG.md", "simulator/README.md", "simulator/dialects/blazar.md", "simulator/dialects/sahara.md"}

var (
	mdLink  = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	fence   = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
)

// slug is GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists a Markdown file's heading anchors.
func anchors(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
		out = append(out, slug(m[1]))
	}
	return out
}

// TestPageLinks: every relative link of the front page and the pages split from it leads to a
// file of the repository, and every #anchor to a heading of its page, so moving text between
// pages cannot leave a link behind.
func TestPageLinks(t *testing.T) {
	n := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := fence.ReplaceAllString(string(b), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue // https:, mailto:
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: the link %s leads nowhere (%s does not exist)", page, target, path)
					continue
				}
			}
			if anchor != "" && !slices.Contains(anchors(t, path), anchor) {
				t.Errorf("%s: the link %s names no heading of %s", page, target, path)
			}
		}
	}
	if n < 50 {
		t.Errorf("checked %d relative links in %v, want at least 50", n, pages)
	}
}

// errorCodesPage holds the list of the API's error codes, between the markers below.
const (
	errorCodesPage  = "simulator/README.md"
	errorCodesBegin = "<!-- error codes: generated from simulator/wire by go test -run TestErrorCodesList -update . -->\n"
	errorCodesEnd   = "<!-- end of error codes -->\n"
)

// wireCodes lists the error codes simulator/wire declares (its constants of type Code).
func wireCodes(t *testing.T) []wire.Code {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("simulator", "wire", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var codes []wire.Code
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok || vs.Type == nil || fmt.Sprint(vs.Type) != "Code" {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok {
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						codes = append(codes, wire.Code(s))
					}
				}
			}
		}
	}
	if len(codes) < 7 {
		t.Fatalf("found %d error codes in simulator/wire, want at least 7", len(codes))
	}
	return codes
}

// errorCodesList renders the codes with their HTTP statuses, by status.
func errorCodesList(codes []wire.Code) string {
	slices.SortFunc(codes, func(a, b wire.Code) int {
		if d := wire.StatusOf(a) - wire.StatusOf(b); d != 0 {
			return d
		}
		return strings.Compare(string(a), string(b))
	})
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, "| `%s` | %d |\n", c, wire.StatusOf(c))
	}
	return "| code | HTTP status |\n|---|---|\n" + b.String()
}

// TestErrorCodesList: the operator's guide lists every error code of the wire package with the
// status the server answers it with; -update rewrites the list.
func TestErrorCodesList(t *testing.T) {
	b, err := os.ReadFile(errorCodesPage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	begin, end := strings.Index(page, errorCodesBegin), strings.Index(page, errorCodesEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no generated list of error codes (between %q and %q)", errorCodesPage, errorCodesBegin, errorCodesEnd)
	}
	want := errorCodesList(wireCodes(t))
	got := page[begin+len(errorCodesBegin) : end]
	if got == want {
		return
	}
	if *update {
		page = page[:begin+len(errorCodesBegin)] + want + page[end:]
		if err := os.WriteFile(errorCodesPage, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s lists other error codes than simulator/wire (go test -run TestErrorCodesList -update .):\ngot:\n%s\nwant:\n%s", errorCodesPage, got, want)
}
