package blazar_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/dialecttest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

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
	dialecttest.RequireOpenstack(t, "Blazar", "blazarclient")
	t.Parallel()
	base := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	t.Run("auth none", func(t *testing.T) {
		t.Parallel()
		sim := simtest.Start(t)
		env := append(base, "HOME="+t.TempDir())
		leaseLife(t, sim, dialecttest.CLI{T: t, Env: env, Args: []string{"--os-auth-type", "none", "--os-endpoint", sim.URL + httpapi.BlazarPrefix}}, "", nil)
	})
	t.Run("keystone", func(t *testing.T) {
		t.Parallel()
		sim := simtest.Start(t, simtest.WithTokens(map[string]string{"tok-ci": "ci"}), simtest.WithAdminToken("admin"))
		env := append(base, "HOME="+t.TempDir(), "OS_AUTH_URL="+sim.URL+httpapi.KeystonePrefix, "OS_IDENTITY_API_VERSION=3",
			"OS_USERNAME=ci", "OS_PASSWORD=tok-ci", "OS_PROJECT_NAME=ci", "OS_USER_DOMAIN_NAME=Default", "OS_PROJECT_DOMAIN_NAME=Default")
		// A wrong password is refused by the login.
		bad := dialecttest.CLI{T: t, Env: append(env[:len(env):len(env)], "OS_PASSWORD=wrong")}
		leaseLife(t, sim, dialecttest.CLI{T: t, Env: env}, "ci", func() {
			if out, errOut, ok := bad.Run("reservation", "lease", "list"); ok || !strings.Contains(errOut, "401") {
				t.Errorf("a login with a wrong password = %v\nstdout: %s\nstderr: %s\nwant a 401", ok, out, errOut)
			}
		})
	})
}

// wantEvent checks that `lease show -f json` lists the lease's event of type typ with that
// status, at that time unless it is zero. The CLI (blazarclient 3.5.0) gives the events as
// the text of their JSON objects, one after the other.
func wantEvent(t *testing.T, l map[string]any, typ string, at time.Time, status string) {
	t.Helper()
	evs, ok := l["events"].([]any)
	if s, isText := l["events"].(string); isText {
		// The client prints each event's JSON object, one after the other.
		ok = true
		for dec := json.NewDecoder(strings.NewReader(s)); dec.More(); {
			var e map[string]any
			if dec.Decode(&e) != nil {
				ok = false
				break
			}
			evs = append(evs, e)
		}
	}
	if !ok {
		t.Errorf("lease show's events = %#v, want a list", l["events"])
		return
	}
	for _, e := range evs {
		e, _ := e.(map[string]any)
		if e["event_type"] != typ {
			continue
		}
		if e["status"] != status || (!at.IsZero() && e["time"] != at.Format("2006-01-02T15:04:05.000000")) {
			t.Errorf("%s event = %v, want %s at %v", typ, e, status, at)
		}
		return
	}
	t.Errorf("lease show's events = %v, want a %s event", evs, typ)
}

// leaseLife runs the lease script through os and checks each step through the engine; also,
// when set, runs beside the first commands after the create.
func leaseLife(t *testing.T, sim *simtest.Sim, os dialecttest.CLI, tenant string, also func()) {
	ctx := context.Background()
	// A whole minute two hours ahead: the CLI takes HH:MM, and prolongs from the end it reads;
	// the before_end_lease event is an hour before it.
	end := sim.Clock().Now().UTC().Truncate(time.Minute).Add(2 * time.Hour)
	created := os.JSON("reservation", "lease", "create", "--start-date", "now", "--end-date", end.Format("2006-01-02 15:04"),
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
		out, errOut, ok := os.Run("reservation", "lease", "list", "-f", "json")
		if !ok || !strings.Contains(out, uuid) || !strings.Contains(out, `"lease-1"`) {
			t.Errorf("lease list = %v\nstdout: %s\nstderr: %s\nwant the lease", ok, out, errOut)
		}
	}, func() {
		l := os.JSON("reservation", "lease", "show", uuid, "-f", "json")
		if l["status"] != "ACTIVE" || l["name"] != "lease-1" {
			t.Errorf("lease show = %v, want lease-1 ACTIVE", l)
		}
		wantEnd(l, end)
		wantEvent(t, l, "before_end_lease", end.Add(-time.Hour), "UNDONE")
	}, func() {
		// Blazar's names are unique: the second create is refused with Blazar's message.
		_, errOut, ok := os.Run("reservation", "lease", "create", "--start-date", "now", "--end-date", end.Format("2006-01-02 15:04"),
			"--reservation", "resource_type=physical:host,min=1,max=2", "lease-1")
		if ok || !strings.Contains(errOut, "ERROR: The lease with name: lease-1 already exists") {
			t.Errorf("a second create named lease-1 = %v, stderr %q; want Blazar's refusal", ok, errOut)
		}
	})

	if out, errOut, ok := os.Run("reservation", "lease", "set", "--prolong-for", "1h", uuid); !ok {
		t.Fatalf("lease set --prolong-for 1h failed:\nstdout: %s\nstderr: %s", out, errOut)
	}
	simtest.Eventually(t, time.Minute, "the prolonged lease ACTIVE", state("ACTIVE"))
	o, err := sim.Engine.Lookup(ctx, tenant, id)
	if err != nil || o.Spec["end_date"] != end.Add(time.Hour).Format(time.RFC3339) {
		t.Fatalf("after the prolong the engine's lease = %v, %v; want end_date %s", o, err, end.Add(time.Hour).Format(time.RFC3339))
	}
	// The before_end_lease event moved with it, by the hour.
	wantEvent(t, os.JSON("reservation", "lease", "show", uuid, "-f", "json"), "before_end_lease", end, "UNDONE")

	sim.Advance(t, 3*time.Hour+time.Minute)
	simtest.Eventually(t, time.Minute, "the lease TERMINATED", state("TERMINATED"))
	l := os.JSON("reservation", "lease", "show", uuid, "-f", "json")
	if l["status"] != "TERMINATED" {
		t.Errorf("lease show after the clock advance = %v, want TERMINATED", l)
	}
	wantEnd(l, end.Add(time.Hour))
	for _, typ := range []string{"start_lease", "before_end_lease", "end_lease"} {
		wantEvent(t, l, typ, time.Time{}, "DONE")
	}

	if out, errOut, ok := os.Run("reservation", "lease", "delete", uuid); !ok {
		t.Fatalf("lease delete failed:\nstdout: %s\nstderr: %s", out, errOut)
	}
	simtest.Eventually(t, time.Minute, "the lease gone", func() bool {
		_, err := sim.Engine.Lookup(ctx, tenant, id)
		return err != nil
	})
	if out, errOut, ok := os.Run("reservation", "lease", "show", uuid); ok || !strings.Contains(errOut, "not found") {
		t.Errorf("lease show of the deleted lease = %v\nstdout: %s\nstderr: %s\nwant not found", ok, out, errOut)
	}
}
