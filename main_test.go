package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs main when the test binary is started as the provider (runMainEnv set), so that
// a test runs the command a user runs without building it again.
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Args = append([]string{"terraform-provider-lifecycle"}, strings.Fields(os.Getenv(runMainArgsEnv))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	runMainEnv     = "LIFECYCLE_TEST_RUN_MAIN"
	runMainArgsEnv = "LIFECYCLE_TEST_MAIN_ARGS"
)

// runMain runs this binary as terraform-provider-lifecycle with args; it returns its output.
func runMain(t *testing.T, args string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgsEnv+"="+args)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestHelpListsDocs: terraform-provider-lifecycle --help names the docs subcommand and its
// flags, and the docs subcommand's own help says what it writes.
func TestHelpListsDocs(t *testing.T) {
	tests := []struct {
		args string
		want []string
	}{
		{"--help", []string{"terraform-provider-lifecycle docs [-dir DIR] FILE...", "-version", "-debug"}},
		{"docs -help", []string{"usage: terraform-provider-lifecycle docs [-dir DIR] FILE...", "-dir directory"}},
	}
	for _, tt := range tests {
		out, _ := runMain(t, tt.args) // -help exits 0 for the flag package's own, 2 for ours
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("terraform-provider-lifecycle %s = %q, want it to contain %q", tt.args, out, w)
			}
		}
	}
}
