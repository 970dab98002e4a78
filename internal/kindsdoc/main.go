// Command kindsdoc writes the kind file format's reference page (a tfplugindocs guide
// template) and its JSON Schema, both generated from the Go types of lifecycle/. make generate
// runs it before tfplugindocs, so make docs-check finds them stale when a key changes.
//
//	go run ./internal/kindsdoc [-root DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle/kindref"
)

func main() {
	root := flag.String("root", ".", "the repository's root `directory`")
	flag.Parse()
	files := map[string][]byte{
		filepath.Join(*root, "templates", "guides", "kind-reference.md.tmpl"): kindref.KindsReference(),
		filepath.Join(*root, "lifecycle", "kinds.schema.json"):                kindref.KindsJSONSchema(),
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "kindsdoc:", err)
			os.Exit(1)
		}
	}
}
