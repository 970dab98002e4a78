package provider

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// The examples under examples/ are what users copy: TestAccExamples runs them the way the
// docs say to, with the provider built from this checkout (dev_overrides, no terraform init)
// against an in-process simulator per example.
//
//   - every directory holding .tf files passes terraform validate (but examples/actions, whose
//     action blocks need Terraform 1.14),
//     with examples/provider/provider.tf copied next to it when it has no terraform block of
//     its own;
//   - every resource example applies as it is, then plans empty; the data-source examples that
//     read what it made apply against the same simulator; then it is destroyed;
//   - its import block (import-by-string-id.hcl: terraform loads no .hcl file, so a copy of the
//     directory applies as it is) and its import.sh, with the placeholder ID replaced by the
//     real one, import the object into a fresh state;
//   - the functions, lifecycle_kind and demo configurations apply;
//   - with a Terraform 1.12+ (or OpenTofu 1.12+) in TF_ACC_TERRAFORM_PATH, its identity import
//     block (import-by-identity.hcl) imports the object; with a Terraform 1.14+, its action
//     examples run (terraform apply -invoke) and its list example runs (terraform query). The
//     files marked "Terraform 1.16+" run only with 1.16 or later. Below those releases the
//     protocol-level TestExamplesNewerBlocks checks them.

const examplesDir = "../examples"

// exampleReads pairs data-source examples with the resource example that makes what they
// read; by default a data source reads what the resource of its name makes.
var exampleReads = map[string]string{
	"lifecycle_image":       "lifecycle_machine", // it reads the machine example's cloudspace and image
	"lifecycle_vm":          "lifecycle_mci",
	"lifecycle_reservation": "lifecycle_lease",
	"lifecycle_event":       "lifecycle_lease",
}

// exampleKinds are the user-defined kinds a resource example needs the simulator to serve
// (lifecyclesim --kinds FILE), relative to the example's directory.
var exampleKinds = map[string]string{
	"lifecycle_object": "certificates.yaml",
}

func TestAccExamples(t *testing.T) {
	x := newExampleRunner(t)

	dirs := exampleDirs(t)
	t.Run("validate", func(t *testing.T) {
		for _, dir := range dirs {
			t.Run(dir, func(t *testing.T) {
				t.Parallel()
				work := x.copyExample(t, dir)
				if m := moduleTestDir.FindStringSubmatch(dir); m != nil {
					// A configuration of a module's test suite may call the module (../..):
					// validate it inside a copy of the whole module.
					work = filepath.Join(x.copyExample(t, m[1]), filepath.FromSlash(m[2]))
				}
				if needsGet(work) {
					x.mustRun(t, work, nil, "get")
				}
				x.mustRun(t, work, nil, "validate", "-no-color")
			})
		}
	})

	resources := exampleNames(t, "resources")
	dataSources := exampleNames(t, "data-sources")
	readers := map[string][]string{}
	for _, ds := range dataSources {
		res := ds
		if r, ok := exampleReads[ds]; ok {
			res = r
		}
		if slices.Contains(resources, res) {
			readers[res] = append(readers[res], ds)
		}
	}
	for _, res := range resources {
		t.Run("resources/"+res, func(t *testing.T) {
			t.Parallel()
			x.runResource(t, res, readers[res])
		})
	}
	standalone := []string{"demo", "provider", "data-sources/lifecycle_kind"}
	for _, fn := range exampleNames(t, "functions") {
		standalone = append(standalone, "functions/"+fn)
	}
	for _, ds := range dataSources {
		if r, ok := exampleReads[ds]; (ok && !slices.Contains(resources, r)) || (!ok && !slices.Contains(resources, ds) && ds != "lifecycle_kind") {
			t.Errorf("data-source example %s reads nothing an example makes: pair it in exampleReads", ds)
		}
	}
	for _, dir := range standalone {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			sim := newTestSim(t)
			env := []string{"LIFECYCLE_ENDPOINT=" + sim.URL}
			work := x.copyExample(t, dir)
			x.mustRun(t, work, env, "apply", "-auto-approve", "-no-color")
			x.mustRun(t, work, env, "destroy", "-auto-approve", "-no-color")
		})
	}
}

// moduleTestDir matches a directory of a module's test suite: the module, and the directory in it.
var moduleTestDir = regexp.MustCompile(`^(modules/[^/]+)/(tests/.+)$`)

// runResource applies a resource example, checks that it plans empty, applies the
// data-source examples that read it, imports its object the ways its page shows, and
// destroys it all.
func (x *exampleRunner) runResource(t *testing.T, res string, readers []string) {
	var opts []simtest.Option
	if f, ok := exampleKinds[res]; ok {
		kinds, err := lifecycle.LoadFile(filepath.Join(examplesDir, "resources", res, f))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, withKinds(kinds...))
	}
	sim := newTestSim(t, opts...)
	env := []string{"LIFECYCLE_ENDPOINT=" + sim.URL}
	dir := "resources/" + res

	work := x.copyExample(t, dir)
	x.mustRun(t, work, env, "apply", "-auto-approve", "-no-color")
	if out, code := x.run(t, work, env, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("terraform plan after the apply of %s: exit code %d, want 0 (no changes):\n%s", dir, code, out)
	}

	for _, ds := range readers {
		dsWork := x.copyExample(t, "data-sources/"+ds)
		x.mustRun(t, dsWork, env, "apply", "-auto-approve", "-no-color")
		x.mustRun(t, dsWork, env, "destroy", "-auto-approve", "-no-color")
	}

	ids := stateIDs(t, x.mustRun(t, work, env, "show", "-json"))
	if block, err := os.ReadFile(filepath.Join(examplesDir, dir, "import-by-string-id.hcl")); err == nil {
		x.checkImportBlock(t, dir, env, string(block), ids)
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if script, err := os.ReadFile(filepath.Join(examplesDir, dir, "import.sh")); err == nil {
		x.checkImportScript(t, dir, env, string(script), ids)
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}

	if x.cli.atLeast(1, 12) {
		x.checkIdentityImport(t, dir, env, ids)
	}
	if x.cli.hasActions() {
		x.runActionExamples(t, res, work, env)
		x.runListExample(t, res, work, env)
	}

	x.mustRun(t, work, env, "destroy", "-auto-approve", "-no-color")
}

var (
	importTo = regexp.MustCompile(`(?m)^\s*to\s*=\s*(\S+)`)
	importID = regexp.MustCompile(`(?m)^(\s*id\s*=\s*)"([^"]+)"`)
	// placeholderID is the made-up ID the import snippets show.
	placeholderID = regexp.MustCompile(`[a-z_]+-0a1b2c3d4e5f6a7b`)
)

// checkImportBlock plans the example with its import block, the placeholder ID replaced by
// the real one, in a fresh state: the plan must import the object.
func (x *exampleRunner) checkImportBlock(t *testing.T, dir string, env []string, block string, ids map[string]string) {
	t.Helper()
	to, id := importTo.FindStringSubmatch(block), importID.FindStringSubmatch(block)
	if to == nil || id == nil {
		t.Fatalf("%s/import-by-string-id.hcl: no import block with to and id", dir)
	}
	real, ok := ids[to[1]]
	if !ok {
		t.Fatalf("%s/import-by-string-id.hcl imports %s, which the example does not declare", dir, to[1])
	}
	block = importID.ReplaceAllString(block, `${1}"`+placeholderID.ReplaceAllString(id[2], real)+`"`)
	work := x.copyExample(t, dir)
	writeFile(t, filepath.Join(work, "import.tf"), block)
	out := x.mustRun(t, work, env, "plan", "-no-color")
	if !strings.Contains(out, "1 to import") {
		t.Errorf("the import block of %s does not import %s:\n%s", dir, to[1], out)
	}
}

// checkImportScript runs each terraform import command of import.sh, the placeholder ID
// replaced by the real one, in a fresh state.
func (x *exampleRunner) checkImportScript(t *testing.T, dir string, env []string, script string, ids map[string]string) {
	t.Helper()
	n := 0
	for line := range strings.Lines(script) {
		fields := strings.Fields(line)
		if len(fields) != 4 || fields[0] != "terraform" || fields[1] != "import" {
			continue
		}
		n++
		real, ok := ids[fields[2]]
		if !ok {
			t.Fatalf("%s/import.sh imports %s, which the example does not declare", dir, fields[2])
		}
		work := x.copyExample(t, dir)
		x.mustRun(t, work, env, "import", "-no-color", fields[2], placeholderID.ReplaceAllString(fields[3], real))
	}
	if n == 0 {
		t.Errorf("%s/import.sh has no terraform import command", dir)
	}
}

// stateIDs maps the root module's resource addresses to their IDs, from terraform show -json.
func stateIDs(t *testing.T, show string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for addr, vals := range stateResources(t, show) {
		if id, ok := vals["id"].(string); ok {
			ids[addr] = id
		}
	}
	return ids
}

// stateResources maps the root module's resource addresses to their attribute values, from
// terraform show -json.
func stateResources(t *testing.T, show string) map[string]map[string]any {
	t.Helper()
	var st struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(show), &st); err != nil {
		t.Fatalf("terraform show -json: %v\n%s", err, show)
	}
	vals := map[string]map[string]any{}
	for _, r := range st.Values.RootModule.Resources {
		vals[r.Address] = r.Values
	}
	return vals
}

// TestAccExamplesFirstError: when the simulator is down, the token is wrong or
// LIFECYCLE_ENDPOINT is no URL, the first error terraform prints is the provider's own, with
// or without a provider block. Terraform
// adds its generic "requires explicit configuration" error whenever the provider's Configure
// fails and the root module has no provider block, so the provider reports these failures
// where the simulator is first needed instead.
func TestAccExamplesFirstError(t *testing.T) {
	x := newExampleRunner(t)
	down := downEndpoint(t)
	sim := newTestSim(t, withTokens(map[string]string{"s3cret": "acme"}))

	tests := []struct {
		name          string
		providerBlock bool
		env           []string
		want          string
	}{
		{"down", true, []string{"LIFECYCLE_ENDPOINT=" + down}, "Cannot reach the lifecycle simulator"},
		{"down without a provider block", false, []string{"LIFECYCLE_ENDPOINT=" + down}, "Cannot reach the lifecycle simulator"},
		{"wrong token", true, []string{"LIFECYCLE_ENDPOINT=" + sim.URL, "LIFECYCLE_TOKEN=wrong"}, "The lifecycle simulator rejected the token"},
		{"wrong token without a provider block", false, []string{"LIFECYCLE_ENDPOINT=" + sim.URL, "LIFECYCLE_TOKEN=wrong"}, "The lifecycle simulator rejected the token"},
		{"endpoint no URL without a provider block", false, []string{"LIFECYCLE_ENDPOINT=127.0.0.1:7575"}, "Invalid lifecycle endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			work := x.copyExample(t, "resources/lifecycle_node")
			if !tt.providerBlock {
				writeFile(t, filepath.Join(work, "provider.tf"),
					"terraform {\n  required_providers {\n    lifecycle = { source = \"lifecyclesim/lifecycle\" }\n  }\n}\n")
			}
			out, code := x.run(t, work, tt.env, "plan", "-no-color")
			if code == 0 {
				t.Fatalf("terraform plan succeeded:\n%s", out)
			}
			first := regexp.MustCompile(`(?m)^Error: (.*)$`).FindStringSubmatch(out)
			if first == nil || first[1] != tt.want {
				t.Errorf("first error = %q, want %q:\n%s", first, tt.want, out)
			}
			if strings.Contains(out, "requires explicit configuration") {
				t.Errorf("terraform printed its generic provider configuration error:\n%s", out)
			}
		})
	}
}

// exampleRunner runs the terraform TF_ACC_TERRAFORM_PATH names (an OpenTofu's tofu too), or
// else the one on PATH, with the provider built from this checkout.
type exampleRunner struct {
	env []string
	// cli is the terraform (or tofu) the examples run with.
	cli *terraformCLI
	// copies maps the directories copyExample made to the examples they copy, for messages.
	copies sync.Map
}

var (
	exampleBuildOnce sync.Once
	exampleBuildDir  string
	exampleBuildErr  error
)

// newExampleRunner builds the provider once per test binary and writes a CLI configuration
// pointing at it. It skips the test unless TF_ACC is set.
func newExampleRunner(t *testing.T) *exampleRunner {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run terraform on the examples")
	}
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("terraform"); err != nil {
			t.Skip("terraform is not on PATH")
		}
	}
	cli, err := newTerraformCLI(bin)
	if err != nil {
		t.Fatal(err)
	}
	providerBuild(t)
	env := []string{"TF_CLI_CONFIG_FILE=" + filepath.Join(exampleBuildDir, "terraformrc"),
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "CHECKPOINT_") && !strings.HasPrefix(kv, "LIFECYCLE_") {
			env = append(env, kv)
		}
	}
	return &exampleRunner{env: env, cli: cli}
}

// providerBuild builds the provider once per test binary with a plain go build, into a
// directory with the CLI configuration `terraform-provider-lifecycle dev-overrides` writes for
// it (terraformrc), as a user runs it; it returns the directory.
func providerBuild(t *testing.T) string {
	t.Helper()
	exampleBuildOnce.Do(func() {
		// Not t.TempDir: every test of the binary shares the build; TestMain removes it.
		exampleBuildDir, exampleBuildErr = os.MkdirTemp("", "lifecycle-examples-") //nolint:usetesting // outlives the test that builds it
		if exampleBuildErr != nil {
			return
		}
		bin := filepath.Join(exampleBuildDir, "terraform-provider-lifecycle")
		out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput()
		if err != nil {
			exampleBuildErr = &buildError{err: err, out: string(out)}
			return
		}
		cmd := exec.Command(bin, "dev-overrides", "-o", "terraformrc")
		cmd.Dir = exampleBuildDir
		if out, err := cmd.CombinedOutput(); err != nil {
			exampleBuildErr = &buildError{err: err, out: string(out)}
		}
	})
	if exampleBuildErr != nil {
		t.Fatalf("building the provider: %v", exampleBuildErr)
	}
	return exampleBuildDir
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// TestMain removes the provider the examples test built.
func TestMain(m *testing.M) {
	code := m.Run()
	if exampleBuildDir != "" {
		os.RemoveAll(exampleBuildDir)
	}
	os.Exit(code)
}

// run runs terraform in dir with extra environment variables, returning its output and its
// exit code.
func (x *exampleRunner) run(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(x.cli.path, append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = append(slices.Clone(x.env), env...)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	return out.String(), code
}

// mustRun is run that fails the test when terraform fails; it returns the output.
func (x *exampleRunner) mustRun(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, code := x.run(t, dir, env, args...)
	if code != 0 {
		name := dir
		if ex, ok := x.copies.Load(dir); ok {
			name = fmt.Sprintf("a copy of examples/%s (%s)", ex, dir)
		}
		t.Fatalf("terraform %s in %s failed (exit code %d):\n%s", strings.Join(args, " "), name, code, out)
	}
	return out
}

// copyExample copies an example directory (examples/<rel>) into a new directory, adding
// examples/provider/provider.tf when the example has no required_providers of its own, as
// the docs tell users to.
func (x *exampleRunner) copyExample(t *testing.T, rel string) string {
	t.Helper()
	src := filepath.Join(examplesDir, rel)
	dst := t.TempDir()
	ownBlock := false
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == ".terraform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, r), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.Dir(r) == "." && strings.HasSuffix(p, ".tf") && strings.Contains(string(b), "required_providers") {
			ownBlock = true
		}
		return os.WriteFile(filepath.Join(dst, r), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ownBlock {
		b, err := os.ReadFile(filepath.Join(examplesDir, "provider", "provider.tf"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, "provider.tf"), string(b))
	}
	x.copies.Store(dst, rel)
	return dst
}

// exampleDirs lists every directory under examples/ that holds .tf files.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(examplesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(examplesDir, p)
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if d.IsDir() && filepath.ToSlash(rel) == "actions" {
			return filepath.SkipDir // action blocks need Terraform 1.14: tested at the protocol level
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tf") {
			if dir := filepath.ToSlash(filepath.Dir(rel)); !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 30 {
		t.Fatalf("found %d example directories under %s, want at least 30", len(dirs), examplesDir)
	}
	return dirs
}

// exampleNames lists the directories of examples/<group>.
func exampleNames(t *testing.T, group string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(examplesDir, group))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// needsGet reports whether a configuration calls modules or has a terraform test suite
// (whose run blocks may call modules): terraform get installs them, asking no registry.
func needsGet(dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(p, ".tftest.hcl") {
			found = true
		} else if strings.HasSuffix(p, ".tf") {
			b, _ := os.ReadFile(p)
			found = found || regexp.MustCompile(`(?m)^\s*module\s+"`).Match(b)
		}
		return nil
	})
	return found
}
