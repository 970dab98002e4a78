package main

import (
	"errors"
	"io"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// errCheckUsage is the answer to a check or render without files.
var errCheckUsage = errors.New("name the kind files: lifecyclesim check FILE... (or render FILE...)")

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
