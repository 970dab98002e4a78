package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// terraformCLI is the terraform binary the examples run with, and what it supports.
type terraformCLI struct {
	path         string
	major, minor int
	// tofu is OpenTofu, which has no action blocks and no terraform query.
	tofu bool
}

// newTerraformCLI asks a terraform (or tofu) binary its version.
func newTerraformCLI(path string) (*terraformCLI, error) {
	version := func(args ...string) *exec.Cmd {
		cmd := exec.Command(path, append([]string{"version"}, args...)...)
		// An empty CLI configuration: a missing one makes it print a warning first.
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+os.DevNull, "CHECKPOINT_DISABLE=1")
		return cmd
	}
	out, err := version("-json").Output()
	if err != nil {
		return nil, fmt.Errorf("%s version -json: %w", path, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("%s version -json: %w", path, err)
	}
	c := &terraformCLI{path: path}
	if _, err := fmt.Sscanf(v.Version, "%d.%d", &c.major, &c.minor); err != nil {
		return nil, fmt.Errorf("%s reports version %q: %w", path, v.Version, err)
	}
	text, err := version().Output()
	if err != nil {
		return nil, fmt.Errorf("%s version: %w", path, err)
	}
	c.tofu = regexp.MustCompile(`(?m)^OpenTofu v`).Match(text)
	return c, nil
}

// atLeast reports whether the binary is release major.minor or later.
func (c *terraformCLI) atLeast(major, minor int) bool {
	return c.major > major || (c.major == major && c.minor >= minor)
}

// hasActions reports whether it runs action blocks and list resources (Terraform 1.14+).
func (c *terraformCLI) hasActions() bool { return !c.tofu && c.atLeast(1, 14) }

var (
	identityID = regexp.MustCompile(`(identity\s*=\s*\{[^}]*\bid\s*=\s*)"([^"]+)"`)
	// actionBlock finds the action blocks of an example, for terraform apply -invoke.
	actionBlock = regexp.MustCompile(`(?m)^action\s+"(\w+)"\s+"(\w+)"`)
	// refusal is the provider's answer to an action the object's state does not allow: accepted
	// only for an example whose comments say the plan refuses it there (and why).
	refusal = regexp.MustCompile(`is\s+not\s+allowed\s+from\s+state`)
	// refusalNoted is how an action example says the plan refuses it in the example's state.
	refusalNoted = regexp.MustCompile(`(?i)refuse`)
)

// checkIdentityImport plans the example with its identity import block, the placeholder ID
// replaced by the real one, in a fresh state: the plan must import the object.
func (x *exampleRunner) checkIdentityImport(t *testing.T, dir string, env []string, ids map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examplesDir, dir, "import-by-identity.hcl"))
	if os.IsNotExist(err) {
		return // TestDocsPagesComplete requires one for every resource with an identity
	}
	if err != nil {
		t.Fatal(err)
	}
	block := string(b)
	to, id := importTo.FindStringSubmatch(block), identityID.FindStringSubmatch(block)
	if to == nil || id == nil {
		t.Fatalf("%s/import-by-identity.hcl: no import block with to and identity = { id = ... }", dir)
	}
	real, ok := ids[to[1]]
	if !ok {
		t.Fatalf("%s/import-by-identity.hcl imports %s, which the example does not declare", dir, to[1])
	}
	block = identityID.ReplaceAllString(block, `${1}"`+placeholderID.ReplaceAllString(id[2], real)+`"`)
	if m := regexp.MustCompile(`kind\s*=\s*"(\w+)"`).FindStringSubmatch(block); m != nil {
		block = strings.Replace(block, m[0], `kind = "`+strings.SplitN(real, "-", 2)[0]+`"`, 1)
	}
	work := x.copyExample(t, dir)
	writeFile(t, filepath.Join(work, "import.tf"), block)
	out := x.mustRun(t, work, env, "plan", "-no-color")
	if !strings.Contains(out, "1 to import") {
		t.Errorf("the identity import block of %s does not import %s:\n%s", dir, to[1], out)
	}
}

// runActionExamples adds the action examples of a type to its applied resource example, then
// invokes each action block: it runs, or the provider refuses it by name before anything runs.
func (x *exampleRunner) runActionExamples(t *testing.T, res, work string, env []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examplesDir, "actions", res, "action*.tf"))
	if err != nil {
		t.Fatal(err)
	}
	var actions [][]string
	refuses := map[string]bool{} // the actions whose example says the plan refuses them here
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := newerMarker.FindSubmatch(b); m != nil && string(m[1]) == "1.16" && !x.cli.atLeast(1, 16) {
			continue
		}
		writeFile(t, filepath.Join(work, "example_"+filepath.Base(f)), string(b))
		found := actionBlock.FindAllStringSubmatch(string(b), -1)
		for _, a := range found {
			refuses[a[2]] = refusalNoted.Match(b)
		}
		actions = append(actions, found...)
	}
	if len(actions) == 0 {
		return
	}
	x.mustRun(t, work, env, "apply", "-auto-approve", "-no-color")
	for _, a := range actions {
		addr := "action." + a[1] + "." + a[2]
		out, code := x.run(t, work, env, "apply", "-auto-approve", "-no-color", "-invoke="+addr)
		switch {
		case code == 0:
			t.Logf("terraform apply -invoke=%s: ran", addr)
		case refusal.MatchString(out) && refuses[a[2]]:
			t.Logf("terraform apply -invoke=%s: refused before it ran, as its example says", addr)
		default:
			t.Errorf("terraform apply -invoke=%s (examples/actions/%s) failed (exit code %d):\n%s", addr, res, code, out)
		}
	}
}

// runListExample runs terraform query with the list example of a type beside its applied
// resource example (whose provider block it uses).
func (x *exampleRunner) runListExample(t *testing.T, res, work string, env []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examplesDir, "list-resources", res, "list-resource.tfquery.hcl"))
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "example.tfquery.hcl"), string(b))
	x.mustRun(t, work, env, "query", "-no-color")
}
