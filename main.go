// Command terraform-provider-lifecycle serves the lifecycle Terraform provider. Run as
// `terraform-provider-lifecycle docs [-dir DIR] FILE...`, it writes the Markdown pages of the
// typed resources of the user-defined kinds in the kinds files instead; as
// `terraform-provider-lifecycle dev-overrides [-o FILE]`, the Terraform CLI configuration that
// runs this build (dev_overrides).
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/lifecyclesim/terraform-provider-lifecycle/provider"
)

// version is set by the linker at release time.
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "docs" {
		docs(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "dev-overrides" {
		err := devOverrides(os.Args[2:], os.Stdout, os.Stderr)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "terraform-provider-lifecycle dev-overrides:", err)
			os.Exit(2)
		}
		return
	}
	var debug bool
	var showVersion bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.BoolVar(&showVersion, "version", false, "print the version and exit")
	flag.Usage = usage
	flag.Parse()
	if showVersion {
		fmt.Println("terraform-provider-lifecycle", version)
		return
	}
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	// provider.NewServer is the framework's server, with a StopProvider that lets an
	// interrupted action report that it was interrupted (see its doc comment).
	if err := tf6server.Serve("registry.terraform.io/lifecyclesim/lifecycle", provider.NewServer(version), opts...); err != nil {
		log.Fatal(err)
	}
}

// usage is the -help text: Terraform starts the provider itself; a user runs it for its
// version or its docs subcommand.
func usage() {
	out := flag.CommandLine.Output()
	fmt.Fprint(out, `usage: terraform-provider-lifecycle [-debug] [-version]
       terraform-provider-lifecycle docs [-dir DIR] FILE...

Terraform (or OpenTofu) starts the provider itself. Run by hand, it prints its version
(-version), serves a debugger session (-debug), or, with the docs subcommand, writes the
Markdown pages of the typed resources of the user-defined kinds in the kinds files
(terraform-provider-lifecycle docs -help).

Flags:
`)
	flag.PrintDefaults()
}

// docs writes the Markdown pages of the user kinds' typed resources.
func docs(args []string) {
	fs := flag.NewFlagSet("docs", flag.ExitOnError)
	dir := fs.String("dir", "docs/resources", "the `directory` to write the pages into")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: terraform-provider-lifecycle docs [-dir DIR] FILE...\n\n"+
			"Writes lifecycle_<kind>.md for each kind of the kinds files that has a typed resource.")
		fs.PrintDefaults()
	}
	_ = fs.Parse(args)
	if err := provider.WriteKindDocs(os.Stdout, *dir, fs.Args()...); err != nil {
		fmt.Fprintln(os.Stderr, "terraform-provider-lifecycle docs:", err)
		os.Exit(1)
	}
}
