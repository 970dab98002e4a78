package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHCLString(t *testing.T) {
	tests := []struct {
		name, give, want string
	}{
		{name: "plain path", give: "/home/me/bin", want: `"/home/me/bin"`},
		{name: "windows path", give: `C:\Users\me\bin`, want: `"C:\\Users\\me\\bin"`},
		{name: "quote", give: `/tmp/a"b`, want: `"/tmp/a\"b"`},
		{name: "template sequences", give: "/tmp/${x}/%{y}", want: `"/tmp/$${x}/%%{y}"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hclString(tt.give); got != tt.want {
				t.Errorf("hclString(%q) = %s, want %s", tt.give, got, tt.want)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{give: "/work/repo/dev.tfrc", want: "/work/repo/dev.tfrc"},
		{give: "/my repo/dev.tfrc", want: `'/my repo/dev.tfrc'`},
		{give: "/it's/dev.tfrc", want: `'/it'\''s/dev.tfrc'`},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.give); got != tt.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tt.give, got, tt.want)
		}
	}
}

// TestDevOverrides: the command writes the configuration to -o (or standard output), names
// the directory it takes the provider from, and says how to use the file. Terraform reading
// it is tested by the provider's acceptance tests, whose CLI configuration this command writes.
func TestDevOverrides(t *testing.T) {
	dir := t.TempDir()
	binDir := filepath.Join(dir, "my bin")
	wantConf := devOverridesConfig(binDir)
	if !strings.Contains(wantConf, `"lifecyclesim/lifecycle" = "`+binDir+`"`) {
		t.Fatalf("devOverridesConfig(%q) = %s, want the override of lifecyclesim/lifecycle to %s", binDir, wantConf, binDir)
	}
	t.Chdir(dir)

	tests := []struct {
		name      string
		args      []string
		wantFile  string // the file written, relative to dir; "" for none
		wantOut   string // in standard output
		wantError string
	}{
		{name: "default file", args: []string{"-dir", binDir}, wantFile: "dev.tfrc",
			wantOut: "export TF_CLI_CONFIG_FILE=" + shellQuote(filepath.Join(dir, "dev.tfrc"))},
		{name: "named file", args: []string{"-dir", binDir, "-o", "sub.tfrc"}, wantFile: "sub.tfrc",
			wantOut: "export TF_CLI_CONFIG_FILE=" + shellQuote(filepath.Join(dir, "sub.tfrc"))},
		{name: "standard output", args: []string{"-dir", binDir, "-o", "-"}, wantOut: wantConf},
		{name: "relative directory", args: []string{"-dir", "my bin", "-o", "-"}, wantOut: wantConf},
		{name: "stray argument", args: []string{"dev.tfrc"}, wantError: `unexpected argument "dev.tfrc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := devOverrides(tt.args, &stdout, &stderr)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("devOverrides(%q) error = %v, want %q", tt.args, err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatalf("devOverrides(%q): %v (%s)", tt.args, err, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantOut) {
				t.Errorf("devOverrides(%q) printed %q, want it to contain %q", tt.args, stdout.String(), tt.wantOut)
			}
			if tt.wantFile == "" {
				return
			}
			got, err := os.ReadFile(filepath.Join(dir, tt.wantFile))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != wantConf {
				t.Errorf("%s = %s, want %s", tt.wantFile, got, wantConf)
			}
		})
	}
}
