package blazar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// openstackCLI is Debian's OpenStack client (python3-openstackclient, with
// python3-blazarclient for the reservation commands).
const openstackCLI = "/usr/bin/openstack"

// requireOpenstack skips the test when the OpenStack client is not installed, or fails it
// where it must run (CI, or LIFECYCLESIM_REQUIRE_OPENSTACK set): .ci/run and make test
// install it with scripts/ensure-openstack.sh.
func requireOpenstack(t *testing.T) {
	t.Helper()
	_, err := os.Stat(openstackCLI)
	_, errPlugin := os.Stat("/usr/lib/python3/dist-packages/blazarclient")
	if err == nil && errPlugin == nil {
		return
	}
	msg := "Debian's OpenStack client with Blazar's plugin is not installed: run 'bash scripts/ensure-openstack.sh' (as root) or 'sudo apt-get install -y python3-openstackclient python3-blazarclient'"
	if os.Getenv("CI") != "" || os.Getenv("LIFECYCLESIM_REQUIRE_OPENSTACK") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// cli runs the openstack command with the given environment (none of the caller's OS_*
// variables or clouds.yaml: HOME is a fresh directory).
type cli struct {
	t    *testing.T
	env  []string
	args []string
}

// run runs `openstack ARGS…` and returns its stdout, stderr and whether it succeeded.
func (c cli) run(args ...string) (stdout, stderr string, ok bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, openstackCLI, append(append([]string{}, c.args...), args...)...)
	cmd.Env = c.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		c.t.Fatalf("openstack %s: no answer within the bound: %v", strings.Join(args, " "), ctx.Err())
	}
	return out.String(), errOut.String(), err == nil
}

// json runs a command that must succeed and decodes its JSON output (after any text the
// command prints first, such as "Created a new lease:").
func (c cli) json(args ...string) map[string]any {
	c.t.Helper()
	out, errOut, ok := c.run(args...)
	i := strings.IndexByte(out, '{')
	var v map[string]any
	if !ok || i < 0 || json.Unmarshal([]byte(out[i:]), &v) != nil {
		c.t.Fatalf("openstack %s failed or printed no JSON object:\nstdout: %s\nstderr: %s", strings.Join(args, " "), out, errOut)
	}
	return v
}

// parallel runs fs at once (each CLI call costs ~1.7 s) and waits for them.
func parallel(fs ...func()) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
}

// TestOpenstackCLI drives a lease's whole life with the real `openstack reservation lease`
// commands: without Keystone (--os-auth-type none --os-endpoint), and through the ordinary
// Keystone login (OS_AUTH_URL, a user and a password: a tenant's token), which maps the
// caller to that tenant. The commands are the guide's (simulator/dialects/blazar.md).
func TestOpenstackCLI(t *testing.T) {
	requireOpenstack(t)
	t.Parallel()
	base := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	t.Run("auth none", func(t *testing.T) {
		t.Parallel()
		sim := simtest.Start(t)
		env := append(base, "HOME="+t.TempDir())
		leaseLife(t, sim, cli{t: t, env: env, args: []string{"--os-auth-type", "none", "--os-endpoint", sim.URL + httpapi.BlazarPrefix}}, "", nil)
	})
	t.Run("keystone", func(t *testing.T) {
		t.Parallel()
		sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-ci": "ci"}), simtest.WithAdminToken("admin"))
		env := append(base, "HOME="+t.TempDir(), "OS_AUTH_URL="+sim.URL+httpapi.KeystonePrefix, "OS_IDENTITY_API_VERSION=3",
			"OS_USERNAME=ci", "OS_PASSWORD=tok-ci", "OS_PROJECT_NAME=ci", "OS_USER_DOMAIN_NAME=Default", "OS_PROJECT_DOMAIN_NAME=Default")
		// A wrong password is refused by the login.
		bad := cli{t: t, env: append(env[:len(env):len(env)], "OS_PASSWORD=wrong")}
		leaseLife(t, sim, cli{t: t, env: env}, "ci", func() {
			if out, errOut, ok := bad.run("reservation", "lease", "list"); ok || !strings.Contains(errOut, "401") {
				t.Errorf("a login with a wrong password = %v\nstdout: %s\nstderr: %s\nwant a 401", ok, out, errOut)
			}
		})
	})
}

// leaseLife runs the lease script through os and checks each step through the engine; also,
// when set, runs beside the first commands after the create.
func leaseLife(t *testing.T, sim *simtest.Sim, os cli, tenant string, also func()) {
	ctx := context.Background()
	// A whole minute an hour ahead: the CLI takes HH:MM, and prolongs from the end it reads.
	end := sim.Clock().Now().UTC().Truncate(time.Minute).Add(time.Hour)
	created := os.json("reservation", "lease", "create", "--start-date", "now", "--end-date", end.Format("2006-01-02 15:04"),
		"--reservation", "resource_type=physical:host,min=1,max=2", "lease-1", "-f", "json")
	uuid, _ := created["id"].(string)
	id, ok := dialect.IDOf("lease", uuid)
	if !ok {
		t.Fatalf("the created lease's id %q is not a lease's UUID: %v", uuid, created)
	}
	state := func(want string) func() bool {
		return func() bool {
			o, err := sim.Engine.Lookup(ctx, tenant, id)
			return err == nil && o.State == want && o.Op == nil
		}
	}
	simtest.Eventually(t, time.Minute, "the lease ACTIVE", state("ACTIVE"))

	wantEnd := func(l map[string]any, at time.Time) {
		t.Helper()
		if got := l["end_date"]; got != at.Format("2006-01-02T15:04:05.000000") {
			t.Errorf("end_date = %v, want %s", got, at.Format("2006-01-02T15:04:05.000000"))
		}
	}
	if also == nil {
		also = func() {}
	}
	parallel(also, func() {
		out, errOut, ok := os.run("reservation", "lease", "list", "-f", "json")
		if !ok || !strings.Contains(out, uuid) || !strings.Contains(out, `"lease-1"`) {
			t.Errorf("lease list = %v\nstdout: %s\nstderr: %s\nwant the lease", ok, out, errOut)
		}
	}, func() {
		l := os.json("reservation", "lease", "show", uuid, "-f", "json")
		if l["status"] != "ACTIVE" || l["name"] != "lease-1" {
			t.Errorf("lease show = %v, want lease-1 ACTIVE", l)
		}
		wantEnd(l, end)
	}, func() {
		// Blazar's names are unique: the second create is refused with Blazar's message.
		_, errOut, ok := os.run("reservation", "lease", "create", "--start-date", "now", "--end-date", end.Format("2006-01-02 15:04"),
			"--reservation", "resource_type=physical:host,min=1,max=2", "lease-1")
		if ok || !strings.Contains(errOut, "ERROR: The lease with name: lease-1 already exists") {
			t.Errorf("a second create named lease-1 = %v, stderr %q; want Blazar's refusal", ok, errOut)
		}
	})

	if out, errOut, ok := os.run("reservation", "lease", "set", "--prolong-for", "1h", uuid); !ok {
		t.Fatalf("lease set --prolong-for 1h failed:\nstdout: %s\nstderr: %s", out, errOut)
	}
	simtest.Eventually(t, time.Minute, "the prolonged lease ACTIVE", state("ACTIVE"))
	o, err := sim.Engine.Lookup(ctx, tenant, id)
	if err != nil || o.Spec["end_date"] != end.Add(time.Hour).Format(time.RFC3339) {
		t.Fatalf("after the prolong the engine's lease = %v, %v; want end_date %s", o, err, end.Add(time.Hour).Format(time.RFC3339))
	}

	sim.Advance(t, 2*time.Hour+time.Minute)
	simtest.Eventually(t, time.Minute, "the lease TERMINATED", state("TERMINATED"))
	l := os.json("reservation", "lease", "show", uuid, "-f", "json")
	if l["status"] != "TERMINATED" {
		t.Errorf("lease show after the clock advance = %v, want TERMINATED", l)
	}
	wantEnd(l, end.Add(time.Hour))

	if out, errOut, ok := os.run("reservation", "lease", "delete", uuid); !ok {
		t.Fatalf("lease delete failed:\nstdout: %s\nstderr: %s", out, errOut)
	}
	simtest.Eventually(t, time.Minute, "the lease gone", func() bool {
		_, err := sim.Engine.Lookup(ctx, tenant, id)
		return err != nil
	})
	if out, errOut, ok := os.run("reservation", "lease", "show", uuid); ok || !strings.Contains(errOut, "not found") {
		t.Errorf("lease show of the deleted lease = %v\nstdout: %s\nstderr: %s\nwant not found", ok, out, errOut)
	}
}
