package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// providerSource is the provider's address in configurations, the key of its override.
const providerSource = "lifecyclesim/lifecycle"

// devOverrides is `terraform-provider-lifecycle dev-overrides`: it writes the Terraform CLI
// configuration that runs this binary in place of the registry's provider (dev_overrides),
// so a local build needs no hand-written file and no terraform init.
func devOverrides(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev-overrides", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "dev.tfrc", "the `file` to write (- for standard output)")
	dir := fs.String("dir", "", "the `directory` holding terraform-provider-lifecycle (default: this binary's)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: terraform-provider-lifecycle dev-overrides [-o FILE] [-dir DIR]\n\n"+
			"Writes a Terraform CLI configuration whose dev_overrides run this build of the provider;\n"+
			"point TF_CLI_CONFIG_FILE at it.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (the flags are -o and -dir)", fs.Arg(0))
	}
	d := *dir
	if d == "" {
		var err error
		if d, err = executableDir(); err != nil {
			return err
		}
	}
	d, err := filepath.Abs(d)
	if err != nil {
		return fmt.Errorf("the provider's directory: %w", err)
	}
	conf := devOverridesConfig(d)
	if *out == "-" {
		_, err := io.WriteString(stdout, conf)
		return err
	}
	path, err := filepath.Abs(*out)
	if err != nil {
		return fmt.Errorf("the configuration's path: %w", err)
	}
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return fmt.Errorf("writing the configuration: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s: terraform runs the provider from %s.\n"+
		"Use it with:\n  export TF_CLI_CONFIG_FILE=%s\n"+
		"then terraform plan and apply (skip terraform init before Terraform 1.15: it would ask the registry).\n",
		*out, d, shellQuote(path))
	return nil
}

// executableDir is the directory of the running binary, which must be a build that stays
// (not `go run`'s, which is deleted when it exits) named as Terraform looks for it.
func executableDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("finding this binary: %w", err)
	}
	base := filepath.Base(exe)
	if !strings.HasPrefix(base, "terraform-provider-lifecycle") {
		return "", errors.New("this binary is named " + strconv.Quote(base) + ", and terraform looks for " +
			"terraform-provider-lifecycle: build it with `go build -o bin/ .` (or make build), run " +
			"bin/terraform-provider-lifecycle dev-overrides, or name the directory with -dir")
	}
	return filepath.Dir(exe), nil
}

// devOverridesConfig is the CLI configuration that takes the provider from dir; every other
// provider is installed as usual.
func devOverridesConfig(dir string) string {
	return fmt.Sprintf(`# Written by terraform-provider-lifecycle dev-overrides: terraform runs the provider
# %s from the directory below instead of installing it.
provider_installation {
  dev_overrides {
    %q = %s
  }
  direct {}
}
`, providerSource, providerSource, hclString(dir))
}

// hclString quotes s as an HCL string literal: Go's escapes (which HCL shares for quotes,
// backslashes and \uNNNN), and the template sequences ${ and %{ escaped as HCL wants them.
func hclString(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
