package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/fixture"
)

// errCheckUsage is the answer to a check or render without files.
var errCheckUsage = errors.New("name the kind files: lifecyclesim check FILE... (or render FILE...), or a fixture file: lifecyclesim check --fixtures FILE [--kinds FILE]")

// check is lifecyclesim check: kind files (FILE... or --kinds FILE), and with --fixtures FILE
// a fixture file against the built-in kinds and those.
func check(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("lifecyclesim check", flag.ContinueOnError)
	fs.SetOutput(out)
	fixtures := fs.String("fixtures", "", "a fixture `file` (--fixtures of the server) to check")
	kinds := fs.String("kinds", "", "a kind `file` (--kinds of the server) the fixture file's objects may use")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errCheckUsage
		}
		return err
	}
	files := fs.Args()
	if *kinds != "" {
		files = append([]string{*kinds}, files...)
	}
	if *fixtures == "" {
		return checkKinds(files, out)
	}
	reg := lifecycle.Builtin()
	if len(files) > 0 {
		if _, err := reg.LoadFiles(files...); err != nil {
			lifecycle.CheckFiles(out, files...)
			return errors.New("the kind files do not load: fix the problems above")
		}
	}
	return checkFixtures(*fixtures, reg, out)
}

// checkFixtures is lifecyclesim check --fixtures FILE: every problem of the file, with its
// file:line and fix, as --fixtures would refuse it (but for its tenants' tokens, which only
// the server knows).
func checkFixtures(file string, reg *lifecycle.Registry, out io.Writer) error {
	f, err := fixture.ReadFile(file)
	var ps fixture.Problems
	switch {
	case errors.As(err, &ps):
	case err != nil:
		return err
	default:
		ps = fixture.Check(f, reg)
	}
	if len(ps) > 0 {
		for _, p := range ps {
			loc := p.File
			if p.Line > 0 {
				loc = fmt.Sprintf("%s:%d", p.File, p.Line)
			}
			fmt.Fprintf(out, "%s: error: %s\n", loc, p.Msg)
		}
		fmt.Fprintf(out, "%d %s in %s\n", len(ps), plural(len(ps), "problem", "problems"), file)
		return errors.New("the fixture file does not load: fix the problems above")
	}
	objects, tenants := 0, make([]string, 0, len(f.Tenants))
	for _, t := range f.Tenants {
		objects += len(t.Objects)
		name := t.Name
		if name == "" {
			name = "the open tenant"
		}
		tenants = append(tenants, name)
	}
	fmt.Fprintf(out, "%s: %d %s OK (%s: %s)\n", file, objects, plural(objects, "object", "objects"), plural(len(tenants), "tenant", "tenants"), strings.Join(tenants, ", "))
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkKinds is lifecyclesim check FILE...: the files load as --kinds loads them, with the
// built-in kinds; every problem and warning is printed with its file:line and fix.
func checkKinds(files []string, out io.Writer) error {
	if len(files) == 0 || files[0] == "-h" || files[0] == "--help" {
		return errCheckUsage
	}
	if !lifecycle.CheckFiles(out, files...) {
		return errors.New("the kind files do not load: fix the problems above")
	}
	return nil
}

// renderKinds is lifecyclesim render FILE...: the Mermaid diagrams of the files' kinds.
func renderKinds(files []string, out io.Writer) error {
	if len(files) == 0 || files[0] == "-h" || files[0] == "--help" {
		return errCheckUsage
	}
	return lifecycle.RenderFiles(out, files...)
}
