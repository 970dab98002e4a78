// Command advicedoc writes the recovery table of the state-machine guide's template from the
// provider's one source of advice (provider.RecoveryTable): what Terraform does and what the
// user runs in each situation, as the provider's messages say. make generate runs it before
// tfplugindocs, so make docs-check finds the guide stale when the advice changes.
//
//	go run ./internal/advicedoc [-root DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/provider"
)

func main() {
	root := flag.String("root", ".", "the repository's root `directory`")
	flag.Parse()
	if err := run(filepath.Join(*root, "templates", "guides", "state-machines.md.tmpl")); err != nil {
		fmt.Fprintln(os.Stderr, "advicedoc:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	tmpl, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := provider.WithRecoveryTable(tmpl)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}
