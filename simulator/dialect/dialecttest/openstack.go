// Package dialecttest holds what the dialects' tests share: the real OpenStack client
// (Debian's /usr/bin/openstack) run against an in-process simulator. Only tests import it
// (TestLayers keeps it so).
package dialecttest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// OpenstackCLI is Debian's OpenStack client (python3-openstackclient, with a service's plugin
// such as python3-blazarclient for its commands).
const OpenstackCLI = "/usr/bin/openstack"

// RequireOpenstack skips the test when the OpenStack client with service's plugin (the
// Python package plugin, as blazarclient) is not installed, or fails it where it must run
// (CI, or LIFECYCLESIM_REQUIRE_OPENSTACK set): .ci/run and make test install it with
// scripts/ensure-openstack.sh.
func RequireOpenstack(t *testing.T, service, plugin string) {
	t.Helper()
	_, err := os.Stat(OpenstackCLI)
	_, errPlugin := os.Stat("/usr/lib/python3/dist-packages/" + plugin)
	if err == nil && errPlugin == nil {
		return
	}
	msg := "Debian's OpenStack client with " + service + "'s plugin is not installed: run 'bash scripts/ensure-openstack.sh' (as root) or 'sudo apt-get install -y python3-openstackclient python3-" + plugin + "'"
	if os.Getenv("CI") != "" || os.Getenv("LIFECYCLESIM_REQUIRE_OPENSTACK") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// CLI runs the openstack command with the given environment (none of the caller's OS_*
// variables or clouds.yaml: HOME is a fresh directory) and arguments before each command's.
type CLI struct {
	T    *testing.T
	Env  []string
	Args []string
}

// Run runs `openstack ARGS…` and returns its stdout, stderr and whether it succeeded.
func (c CLI) Run(args ...string) (stdout, stderr string, ok bool) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, OpenstackCLI, append(append([]string{}, c.Args...), args...)...)
	cmd.Env = c.Env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		c.T.Fatalf("openstack %s: no answer within the bound: %v", strings.Join(args, " "), ctx.Err())
	}
	return out.String(), errOut.String(), err == nil
}

// JSON runs a command that must succeed and decodes its JSON output (after any text the
// command prints first, such as "Created a new lease:").
func (c CLI) JSON(args ...string) map[string]any {
	c.T.Helper()
	out, errOut, ok := c.Run(args...)
	i := strings.IndexByte(out, '{')
	var v map[string]any
	if !ok || i < 0 || json.Unmarshal([]byte(out[i:]), &v) != nil {
		c.T.Fatalf("openstack %s failed or printed no JSON object:\nstdout: %s\nstderr: %s", strings.Join(args, " "), out, errOut)
	}
	return v
}
