package provider

import (
	"archive/tar"
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// composeService is the part of a compose service the operator guide's example (simulator/README.md) uses.
type composeService struct {
	Image       string            `yaml:"image"`
	PullPolicy  string            `yaml:"pull_policy"`
	WorkingDir  string            `yaml:"working_dir"`
	Command     []string          `yaml:"command"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// TestAccComposeExample checks examples/compose/compose.yaml (shown in simulator/README.md) without a
// container engine, which CI does not have:
//
//   - its simulator image is pinned to the version CHANGELOG.md is preparing (the release's
//     tag), and its tag variable set to latest names a tag `make image` gives the docker-archive
//     (the image is built by the exact mkimage command of make image's recipe, from a host build
//     of lifecyclesim for each architecture), its healthcheck is the image's, and its
//     LIFECYCLESIM_* variables are ones lifecyclesim reads;
//   - the tests service mounts the directory make image builds the linux provider into;
//   - lifecyclesim started with the service's environment (over the image's) passes the
//     healthcheck command, and the tests service's command (terraform test of an example
//     module), run with its environment and working directory mapped through its volumes,
//     passes against it.
func TestAccComposeExample(t *testing.T) {
	x := newExampleRunner(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	composeDir := filepath.Join(root, "examples", "compose")
	b, err := os.ReadFile(filepath.Join(composeDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	sim, tests := compose.Services["lifecyclesim"], compose.Services["tests"]
	if sim.Image == "" || tests.Image == "" {
		t.Fatalf("compose.yaml needs the services lifecyclesim and tests, with images: %+v", compose.Services)
	}

	// make image's recipe, as make prints it, run for real with a host build of lifecyclesim
	// in place of the static linux one (the image's content does not matter here, its tags
	// and configuration do).
	work := t.TempDir()
	binDir := filepath.Join(work, "bin")
	relBin, err := filepath.Rel(root, binDir) // make image puts $(CURDIR)/ before BIN_DIR
	if err != nil {
		t.Fatal(err)
	}
	recipe := makeDryRun(t, root, "image", "BIN_DIR="+relBin, "VERSION=v0.0.0-test", "IMAGE_ARCH=amd64")
	var mkimage, providerOut string
	for _, cmd := range recipe {
		switch {
		case strings.Contains(cmd, "cmd/mkimage build"):
			mkimage = cmd
		case strings.Contains(cmd, "-o "+relBin+"/linux_amd64/terraform-provider-lifecycle"):
			providerOut = filepath.Join(binDir, "linux_amd64")
		}
	}
	if mkimage == "" || providerOut == "" {
		t.Fatalf("make -n image prints no mkimage build or linux provider build:\n%s", strings.Join(recipe, "\n"))
	}
	simBin := filepath.Join(binDir, "linux_amd64", "lifecyclesim")
	goBuild(t, root, simBin, "./simulator/cmd/lifecyclesim")
	archs := regexp.MustCompile(`--binary (\w+)=(\S+)`).FindAllStringSubmatch(mkimage, -1)
	if len(archs) < 2 {
		t.Errorf("make image builds the image for %d architectures, want amd64 and arm64: %s", len(archs), mkimage)
	}
	hostBin, err := os.ReadFile(simBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range archs {
		if a[2] != simBin {
			if err := os.MkdirAll(filepath.Dir(a[2]), 0o755); err != nil {
				t.Fatal(err)
			}
			writeExecutable(t, a[2], hostBin)
		}
	}
	run := exec.Command("bash", "-c", mkimage)
	run.Dir = root
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("make image's mkimage build: %v\n%s", err, out)
	}
	tags, config := readDockerArchive(t, filepath.Join(binDir, "lifecyclesim-image.tar"))
	tagVar := regexp.MustCompile(`\$\{(\w+):-[^}]+\}$`).FindStringSubmatch(sim.Image)
	if tagVar == nil {
		t.Fatalf("compose.yaml runs the image %q, want its tag as ${VAR:-version} (pinned, and a local build by VAR=latest)", sim.Image)
	}
	if got, want := os.Expand(sim.Image, composeDefault), "ghcr.io/lifecyclesim/lifecyclesim:"+changelogVersion(t, root); got != want {
		t.Errorf("compose.yaml runs the image %s by default, want %s (the release CHANGELOG.md prepares)", got, want)
	}
	local := os.Expand(sim.Image, func(string) string { return "latest" })
	if !slices.Contains(tags, local) {
		t.Errorf("compose.yaml with %s=latest runs the image %q; make image tags %q", tagVar[1], local, tags)
	}
	if sim.Healthcheck.Test != nil && !slices.Equal(sim.Healthcheck.Test, config.Healthcheck.Test) {
		t.Errorf("compose.yaml's healthcheck is %q, the image's %q", sim.Healthcheck.Test, config.Healthcheck.Test)
	}
	help, _ := exec.Command(simBin, "--help").CombinedOutput()
	for k := range sim.Environment {
		if !strings.Contains(string(help), "["+k+"]") {
			t.Errorf("compose.yaml sets %s, which lifecyclesim does not read (lifecyclesim --help)", k)
		}
	}
	volumes := map[string]string{} // container path → host path
	for _, v := range tests.Volumes {
		parts := strings.Split(os.Expand(v, composeDefault), ":")
		if len(parts) < 2 {
			t.Fatalf("compose.yaml: volume %q is not HOST:CONTAINER", v)
		}
		volumes[parts[1]] = filepath.Clean(filepath.Join(composeDir, parts[0]))
	}
	rc, ok := tests.Environment["TF_CLI_CONFIG_FILE"]
	if !ok {
		t.Fatal("the tests service sets no TF_CLI_CONFIG_FILE: where does its terraform find the provider?")
	}
	rcHost := hostPath(t, volumes, rc)
	rcText, err := os.ReadFile(rcHost)
	if err != nil {
		t.Fatal(err)
	}
	override := regexp.MustCompile(`"lifecyclesim/lifecycle"\s*=\s*"([^"]+)"`).FindSubmatch(rcText)
	if override == nil {
		t.Fatalf("%s has no dev_overrides entry for lifecyclesim/lifecycle", rcHost)
	}
	providerMount := string(override[1])
	if got, want := hostPath(t, volumes, providerMount), filepath.Join(root, "bin", "linux_amd64"); got != want {
		t.Errorf("the tests service finds the provider in %s (%s on the host); make image builds it into %s", providerMount, got, want)
	}

	// The simulator, as the container runs it: the image's environment, then the service's.
	env := map[string]string{}
	for _, kv := range config.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range sim.Environment {
		env[k] = v
	}
	if env["LIFECYCLESIM_DB"] != ":memory:" {
		env["LIFECYCLESIM_DB"] = filepath.Join(work, "lifecyclesim.db")
	}
	env["LIFECYCLESIM_ADDR"] = "127.0.0.1:0"
	env["LIFECYCLESIM_LOG_FORMAT"] = "text"
	addr := startSimBinary(t, simBin, env)

	hc := sim.Healthcheck.Test
	if len(hc) < 2 || hc[0] != "CMD" || hc[1] != config.Entrypoint[0] {
		t.Fatalf("compose.yaml's healthcheck %q does not run the image's entrypoint %q", hc, config.Entrypoint)
	}
	check := exec.Command(simBin, hc[2:]...)
	check.Env = append(os.Environ(), "LIFECYCLESIM_ADDR="+strings.TrimPrefix(addr, "http://"))
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("the healthcheck %q fails against the simulator: %v\n%s", hc, err, out)
	}

	// The tests service: terraform (the image's entrypoint, unless the service sets one) with
	// its command, environment and working directory, host paths in place of its mounts and
	// the simulator's address in place of the service name. The checkout is mounted
	// read-only: run on a copy, so nothing written lands in the repository.
	if len(tests.Entrypoint) != 0 {
		t.Fatalf("the tests service sets an entrypoint (%q); this test runs terraform", tests.Entrypoint)
	}
	if !strings.HasPrefix(tests.Image, "hashicorp/terraform:") {
		t.Fatalf("the tests service runs %s, not hashicorp/terraform", tests.Image)
	}
	copyRoot := filepath.Join(work, "checkout")
	for _, dir := range []string{"examples"} {
		if err := os.CopyFS(filepath.Join(copyRoot, dir), os.DirFS(filepath.Join(root, dir))); err != nil {
			t.Fatal(err)
		}
	}
	for c, h := range volumes {
		switch h {
		case root:
			volumes[c] = copyRoot
		case filepath.Join(root, "bin", "linux_amd64"):
			volumes[c] = exampleBuildDir // the provider built for this host
		}
	}
	cmdEnv := slices.Clone(x.env)
	for k, v := range tests.Environment {
		switch {
		case k == "TF_CLI_CONFIG_FILE":
			host := filepath.Join(work, "terraformrc")
			writeFile(t, host, strings.ReplaceAll(string(rcText), `"`+providerMount+`"`, `"`+hostPath(t, volumes, providerMount)+`"`))
			v = host
		case k == "TF_DATA_DIR":
			v = filepath.Join(work, "tfdata")
		case strings.Contains(v, "://lifecyclesim:"):
			v = regexp.MustCompile(`http://lifecyclesim:\d+`).ReplaceAllString(v, addr)
		}
		cmdEnv = append(cmdEnv, k+"="+v)
	}
	cmd := exec.Command("terraform", tests.Command...)
	cmd.Dir = hostPath(t, volumes, tests.WorkingDir)
	cmd.Env = cmdEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests service's terraform %s in %s failed: %v\n%s", strings.Join(tests.Command, " "), tests.WorkingDir, err, out)
	}
	plain := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAll(out, nil)
	if !regexp.MustCompile(`Success! \d+ passed, 0 failed`).Match(plain) {
		t.Errorf("the tests service's terraform %s ran no passing test:\n%s", strings.Join(tests.Command, " "), out)
	}
}

// changelogVersion is the version of CHANGELOG.md's first section (## X.Y.Z ...).
func changelogVersion(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## (\d+\.\d+\.\d+) `).FindSubmatch(b)
	if m == nil {
		t.Fatal("CHANGELOG.md has no ## X.Y.Z section")
	}
	return string(m[1])
}

// composeDefault expands ${VAR:-default} as compose does when VAR is unset (IMAGE_ARCH).
func composeDefault(s string) string {
	if _, def, ok := strings.Cut(s, ":-"); ok {
		return def
	}
	return ""
}

// hostPath maps a container path through the service's volumes (container → host).
func hostPath(t *testing.T, volumes map[string]string, p string) string {
	t.Helper()
	best := ""
	for c := range volumes {
		if (p == c || strings.HasPrefix(p, c+"/")) && len(c) > len(best) {
			best = c
		}
	}
	if best == "" {
		t.Fatalf("%s is on no volume of the tests service", p)
	}
	return filepath.Join(volumes[best], strings.TrimPrefix(p, best))
}

// makeDryRun returns the commands make would run for a target (make -n), one per entry,
// backslash-continued lines joined.
func makeDryRun(t *testing.T, dir, target string, vars ...string) []string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-n", target}, vars...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", target, err, out)
	}
	var cmds []string
	cur := ""
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\n")
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cur += s
			continue
		}
		cmds = append(cmds, cur+line)
		cur = ""
	}
	return cmds
}

// goBuild builds a package of the module into out.
func goBuild(t *testing.T, root, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// imageConfig is the part of an OCI image configuration the compose file depends on.
type imageConfig struct {
	Entrypoint  []string `json:"Entrypoint"`
	Env         []string `json:"Env"`
	Healthcheck struct {
		Test []string `json:"Test"`
	} `json:"Healthcheck"`
}

// readDockerArchive returns the tags and the configuration of the image of a docker-archive
// (docker load's format).
func readDockerArchive(t *testing.T, path string) ([]string, imageConfig) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Size < 1<<20 { // manifest.json and the config, not the layers
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
	var manifest []struct {
		Config   string
		RepoTags []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("%s: manifest.json: %v (%d images)", path, err, len(manifest))
	}
	var cfg struct {
		Config imageConfig `json:"config"`
	}
	if err := json.Unmarshal(files[manifest[0].Config], &cfg); err != nil {
		t.Fatalf("%s: %s: %v", path, manifest[0].Config, err)
	}
	return manifest[0].RepoTags, cfg.Config
}

// startSimBinary starts a lifecyclesim binary with exactly env (and PATH) and returns its
// URL; it is stopped when the test ends.
func startSimBinary(t *testing.T, bin string, env map[string]string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`addr=(http://[0-9.:]+)`)
		sent := false
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			t.Fatal("lifecyclesim exited without saying where it listens")
		}
		return addr
	case <-time.After(30 * time.Second):
		t.Fatalf("lifecyclesim did not say where it listens within 30s (env %v)", env)
	}
	return ""
}
