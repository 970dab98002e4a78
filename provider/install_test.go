package provider

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// mirrorVersion is the version the local build is installed under in the filesystem mirror: a
// prerelease, which Terraform selects only when a configuration asks for it by its exact version.
const mirrorVersion = "0.0.1-dev"

// TestAccInstallFromMirror installs the provider as a user without Go does: the binary of a
// plain go build in a filesystem mirror in the registry's layout, `terraform init
// -plugin-dir=<mirror>` with no CLI configuration and every proxy pointing nowhere (so init
// works offline or fails), then apply and an empty plan against a simulator. The requests'
// User-Agent shows the mirror's binary served them (the in-process provider says "test").
func TestAccInstallFromMirror(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run terraform init against a filesystem mirror")
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not on PATH")
	}
	t.Parallel()
	var mu sync.Mutex
	agents := map[string]bool{}
	sim := newTestSim(t, withMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			agents[r.UserAgent()] = true
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}))

	mirror := t.TempDir()
	platform := runtime.GOOS + "_" + runtime.GOARCH
	dir := filepath.Join(mirror, "registry.terraform.io", "lifecyclesim", "lifecycle", mirrorVersion, platform)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(filepath.Join(providerBuild(t), "terraform-provider-lifecycle"))
	if err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, filepath.Join(dir, "terraform-provider-lifecycle_v"+mirrorVersion), bin)

	work := t.TempDir()
	writeFile(t, filepath.Join(work, "main.tf"), `terraform {
  required_providers {
    lifecycle = {
      source  = "lifecyclesim/lifecycle"
      version = "`+mirrorVersion+`"
    }
  }
}

provider "lifecycle" {
  endpoint = "`+sim.URL+`"
}

resource "lifecycle_image" "img" {
  name = "from-the-mirror"
}
`)
	cliConfig := filepath.Join(work, "empty.tfrc")
	writeFile(t, cliConfig, "")
	env := []string{"TF_CLI_CONFIG_FILE=" + cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0",
		"HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "TF_") && !strings.HasPrefix(name, "CHECKPOINT_") &&
			!strings.HasPrefix(name, "LIFECYCLE_") && !strings.HasSuffix(strings.ToUpper(name), "_PROXY") {
			env = append(env, kv)
		}
	}
	terraform := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("terraform", append([]string{"-chdir=" + work}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	terraform("init", "-no-color", "-plugin-dir="+mirror)
	lock, err := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatalf("terraform init wrote no lock file: %v", err)
	}
	if want := `version     = "` + mirrorVersion + `"`; !strings.Contains(string(lock), want) {
		t.Fatalf(".terraform.lock.hcl = %s, want %s", lock, want)
	}
	terraform("apply", "-no-color", "-auto-approve")
	terraform("plan", "-no-color", "-detailed-exitcode") // exit code 2 (changes) fails

	mu.Lock()
	want := "Terraform/" + terraformVersion(t) + " terraform-provider-lifecycle/dev"
	if len(agents) != 1 || !agents[want] {
		t.Errorf("User-Agents of the requests = %v, want only %q (the mirror's binary)", agents, want)
	}
	mu.Unlock()
	images, err := sim.Client.ListAll(context.Background(), "images", client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 1 || images[0].Name != "from-the-mirror" {
		t.Fatalf("images after apply = %+v, want the one the configuration declares", images)
	}
}

// writeExecutable writes an executable file.
func writeExecutable(t *testing.T, name string, content []byte) {
	t.Helper()
	if err := os.WriteFile(name, content, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestAccMakeDevOverrides runs what `make dev-overrides` runs after its build (make -n), with
// the test's build in place of bin/, and then terraform apply with the file it wrote and no
// terraform init, as the README says.
func TestAccMakeDevOverrides(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run terraform with the written dev_overrides configuration")
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not on PATH")
	}
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	binDir, err := filepath.Rel(root, providerBuild(t))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	rc := filepath.Join(work, "dev.tfrc")
	var write string
	for _, cmd := range makeDryRun(t, root, "dev-overrides", "BIN_DIR="+binDir, "DEV_TFRC="+rc) {
		if strings.Contains(cmd, "terraform-provider-lifecycle dev-overrides") {
			write = cmd
		}
	}
	want := binDir + "/terraform-provider-lifecycle dev-overrides -o " + rc
	if write != want {
		t.Fatalf("make -n dev-overrides runs %q, want %q", write, want)
	}
	cmd := exec.Command("bash", "-c", write)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", write, err, out)
	}
	if !strings.Contains(string(out), "export TF_CLI_CONFIG_FILE="+rc) {
		t.Errorf("%s printed %s, want the export line for %s", write, out, rc)
	}

	sim := newTestSim(t)
	writeFile(t, filepath.Join(work, "main.tf"), `terraform {
  required_providers {
    lifecycle = { source = "lifecyclesim/lifecycle" }
  }
}

provider "lifecycle" {
  endpoint = "`+sim.URL+`"
}

resource "lifecycle_image" "img" {
  name = "dev-overrides"
}
`)
	env := []string{"TF_CLI_CONFIG_FILE=" + rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0"}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "TF_") && !strings.HasPrefix(name, "CHECKPOINT_") && !strings.HasPrefix(name, "LIFECYCLE_") {
			env = append(env, kv)
		}
	}
	apply := exec.Command("terraform", "-chdir="+work, "apply", "-auto-approve", "-no-color")
	apply.Env = env
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("terraform apply with %s: %v\n%s", rc, err, out)
	}
	images, err := sim.Client.ListAll(context.Background(), "images", client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 1 || images[0].Name != "dev-overrides" {
		t.Fatalf("images after apply = %+v, want the one the configuration declares", images)
	}
}
