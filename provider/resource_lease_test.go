package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// leaseConfig is a lease with a host and an instance reservation.
func leaseConfig(dates string) string {
	return fmt.Sprintf(`resource "lifecycle_lease" "capacity" {
  name = "capacity"
%s
  reservation {
    resource_type = "physical:host"
    min           = 1
    max           = 2
  }
  reservation {
    resource_type = "virtual:instance"
    amount        = 2
    vcpus         = 4
  }
}`, dates)
}

// simNow is the simulator's clock.
func simNow(t *testing.T, s *testSim) time.Time {
	t.Helper()
	c, err := s.Client.Clock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c.Now
}

// advance moves the simulator's clock (the lease timers run on it).
func advance(t *testing.T, s *testSim, d time.Duration) {
	t.Helper()
	if _, err := s.Client.AdvanceClock(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// leaseKit names the resources of a lease kind: the built-in lease, or a user's renamed copy
// of the Blazar kinds, whose typed resource is derived from its spec the same way.
type leaseKit struct {
	typ, block, reservations, events, collection string
	providers                                    map[string]func() (tfprotov6.ProviderServer, error)
	opts                                         []simtest.Option
	// twoEvents: the kind makes start_lease and end_lease only (no before_end_lease).
	twoEvents bool
}

var builtinLease = leaseKit{typ: "lease", block: "reservation", reservations: "reservation_states", events: "events",
	collection: "leases", providers: testAccProviders}

func (lk leaseKit) addr() string { return "lifecycle_" + lk.typ + ".capacity" }

func (lk leaseKit) newSim(t *testing.T) *testSim { return newTestSim(t, lk.opts...) }

// config is a lease of the kit's kind with a host and an instance reservation.
func (lk leaseKit) config(dates string) string {
	r := strings.NewReplacer(`"lifecycle_lease"`, `"lifecycle_`+lk.typ+`"`, "  reservation {", "  "+lk.block+" {")
	return r.Replace(leaseConfig(dates))
}

func (lk leaseKit) reservationStates(states ...string) statecheck.StateCheck {
	vals := make([]knownvalue.Check, len(states))
	for i, s := range states {
		vals[i] = knownvalue.ObjectPartial(map[string]knownvalue.Check{"state": knownvalue.StringExact(s)})
	}
	return statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New(lk.reservations), knownvalue.ListExact(vals))
}

// leaseEvents checks the lease's events (by name: before_end_lease, end_lease, start_lease);
// a kit whose kind makes two events (a copy of the kinds before before_end_lease) has no
// before_end_lease.
func (lk leaseKit) leaseEvents(start, beforeEnd, end string) statecheck.StateCheck {
	var checks []knownvalue.Check
	if !lk.twoEvents {
		checks = append(checks, knownvalue.ObjectPartial(map[string]knownvalue.Check{"event_type": knownvalue.StringExact("before_end_lease"), "state": knownvalue.StringExact(beforeEnd)}))
	}
	checks = append(checks,
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"event_type": knownvalue.StringExact("end_lease"), "state": knownvalue.StringExact(end)}),
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"event_type": knownvalue.StringExact("start_lease"), "state": knownvalue.StringExact(start)}),
	)
	return statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New(lk.events), knownvalue.ListExact(checks))
}

// TestAccLeaseNowUntilActive: no start_date means now; wait_for = ACTIVE waits for the
// lease's start; its end moves in place; the start of a started lease only by a replacement; import; the
// lease ending by itself is kept.
func TestAccLeaseNowUntilActive(t *testing.T) { testLeaseNowUntilActive(t, builtinLease) }

func testLeaseNowUntilActive(t *testing.T, lk leaseKit) {
	sim := lk.newSim(t)
	end := simNow(t, sim).Add(48 * time.Hour).UTC().Format(time.RFC3339)
	later := simNow(t, sim).Add(96 * time.Hour).UTC().Format(time.RFC3339)
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: lk.providers,
		Steps: []resource.TestStep{
			{
				Config: sim.config(lk.config(fmt.Sprintf("  end_date = %q\n  wait_for = \"ACTIVE\"", end))),
				Check:  captureID(lk.addr(), &id),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("ACTIVE")),
					statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New("start_date"), knownvalue.NotNull()),
					lk.reservationStates("active", "active"),
					lk.leaseEvents("DONE", "UNDONE", "UNDONE"),
				},
			},
			// The effective start is kept: no drift.
			{Config: sim.config(lk.config(fmt.Sprintf("  end_date = %q\n  wait_for = \"ACTIVE\"", end))), PlanOnly: true},
			{
				Config: sim.config(lk.config(fmt.Sprintf("  end_date = %q\n  wait_for = \"ACTIVE\"", later))),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(lk.addr(), plancheck.ResourceActionUpdate),
					// The reservations cannot change in place: their IDs stay known, so nothing
					// fed one is replaced.
					plancheck.ExpectKnownValue(lk.addr(), tfjsonpath.New(lk.reservations).AtSliceIndex(0).AtMapKey("id"), knownvalue.NotNull()),
					plancheck.ExpectKnownValue(lk.addr(), tfjsonpath.New(lk.reservations).AtSliceIndex(1).AtMapKey("name"), knownvalue.StringExact("capacity-2")),
					plancheck.ExpectKnownValue(lk.addr(), tfjsonpath.New(lk.events).AtSliceIndex(0).AtMapKey("id"), knownvalue.NotNull()),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New("end_date"), knownvalue.StringExact(later)),
					statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("ACTIVE")),
				},
				Check: func(*terraform.State) error {
					return expectActions(sim, lk.collection, id, "create", "start", "update")
				},
			},
			{
				Config: sim.config(lk.config(fmt.Sprintf("  start_date = %q\n  end_date = %q\n  wait_for = \"ACTIVE\"",
					simNow(t, sim).Add(time.Hour).UTC().Format(time.RFC3339), later))),
				// Only a new lease can start later: the plan replaces this one (and warns why).
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(lk.addr(), plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
			{
				ResourceName:            lk.addr(),
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts", "wait_for"},
			},
			{
				// The lease ends by itself at end_date: the next plan keeps it, no replacement.
				PreConfig: func() { advance(t, sim, 100*time.Hour) },
				Config:    sim.config(lk.config(fmt.Sprintf("  end_date = %q\n  wait_for = \"ACTIVE\"", later))),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("TERMINATED")),
					lk.reservationStates("deleted", "deleted"),
					lk.leaseEvents("DONE", "DONE", "DONE"),
				},
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, lk.collection, id) },
	})
}

// TestAccLeaseFutureStart: a future start leaves the lease PENDING; when the simulator's clock
// passes it, the refresh shows it ACTIVE.
func TestAccLeaseFutureStart(t *testing.T) { testLeaseFutureStart(t, builtinLease) }

func testLeaseFutureStart(t *testing.T, lk leaseKit) {
	sim := lk.newSim(t)
	now := simNow(t, sim)
	dates := fmt.Sprintf("  start_date = %q\n  end_date   = %q",
		now.Add(24*time.Hour).UTC().Format(time.RFC3339), now.Add(48*time.Hour).UTC().Format(time.RFC3339))
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: lk.providers,
		Steps: []resource.TestStep{
			{
				Config: sim.config(lk.config(dates)),
				Check:  captureID(lk.addr(), &id),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("PENDING")),
					lk.reservationStates("pending", "pending"),
					lk.leaseEvents("UNDONE", "UNDONE", "UNDONE"),
				},
			},
			{
				PreConfig: func() {
					advance(t, sim, 25*time.Hour)
					if err := sim.waitFor(lk.collection, id, func(o *client.Object) bool { return o.State == "ACTIVE" }); err != nil {
						t.Fatal(err)
					}
				},
				Config:   sim.config(lk.config(dates)),
				PlanOnly: true,
			},
			{
				Config: sim.config(lk.config(dates)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(lk.addr(), tfjsonpath.New("state"), knownvalue.StringExact("ACTIVE")),
					lk.reservationStates("active", "active"),
				},
			},
		},
	})
}

// TestAccLeaseStartFails: a start fault gives ERROR with the server's message.
func TestAccLeaseStartFails(t *testing.T) { testLeaseStartFails(t, builtinLease) }

func testLeaseStartFails(t *testing.T, lk leaseKit) {
	sim := lk.newSim(t)
	end := simNow(t, sim).Add(48 * time.Hour).UTC().Format(time.RFC3339)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: lk.providers,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: lk.typ, Action: "start", Mode: "fail", Count: 1, Message: "not enough hosts"})
				},
				Config:      sim.config(lk.config(fmt.Sprintf("  end_date = %q\n  wait_for = \"ACTIVE\"", end))),
				ExpectError: errorLike(`(?s)ERROR.*not enough hosts`),
			},
		},
	})
}

// TestAccLeaseDeleteWhileStarting: delete works from a transitional state.
func TestAccLeaseDeleteWhileStarting(t *testing.T) { testLeaseDeleteWhileStarting(t, builtinLease) }

func testLeaseDeleteWhileStarting(t *testing.T, lk leaseKit) {
	sim := lk.newSim(t)
	now := simNow(t, sim)
	dates := fmt.Sprintf("  start_date = %q\n  end_date   = %q",
		now.Add(time.Hour).UTC().Format(time.RFC3339), now.Add(48*time.Hour).UTC().Format(time.RFC3339))
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: lk.providers,
		Steps: []resource.TestStep{
			{
				Config: sim.config(lk.config(dates)),
				Check:  captureID(lk.addr(), &id),
			},
			{
				PreConfig: func() {
					sim.addFault(t, client.FaultRule{Kind: lk.typ, Action: "start", Mode: "slow", Factor: 20000})
					advance(t, sim, time.Hour)
					if err := sim.waitFor(lk.collection, id, func(o *client.Object) bool { return o.State == "STARTING" }); err != nil {
						t.Fatal(err)
					}
				},
				Config:  sim.config(lk.config(dates)),
				Destroy: true,
				Check:   func(*terraform.State) error { return expectGone(sim, lk.collection, id) },
			},
		},
	})
}

// TestAccLeaseObjectKindsMadeByParent: lifecycle_object refuses a kind only a lease makes,
// with an error that says so; the reservation data source reads one.
func TestAccLeaseObjectKindsMadeByParent(t *testing.T) {
	sim := newTestSim(t)
	end := simNow(t, sim).Add(48 * time.Hour).UTC().Format(time.RFC3339)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(`resource "lifecycle_object" "ev" {
  kind = "event"
  name = "e"
}`),
				PlanOnly:    true,
				ExpectError: errorLike(`(?s)event objects are made and removed by their lease`),
			},
			{
				Config: sim.config(leaseConfig(fmt.Sprintf("  end_date = %q\n  wait_for = \"ACTIVE\"", end)) + `

data "lifecycle_reservation" "host" {
  id = lifecycle_lease.capacity.reservation_states[0].id
}

data "lifecycle_lease" "capacity" {
  id = lifecycle_lease.capacity.id
}`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.lifecycle_reservation.host", tfjsonpath.New("state"), knownvalue.StringExact("active")),
					statecheck.ExpectKnownValue("data.lifecycle_reservation.host", tfjsonpath.New("resource_type"), knownvalue.StringExact("physical:host")),
					statecheck.ExpectKnownValue("data.lifecycle_lease.capacity", tfjsonpath.New("reservation").AtSliceIndex(1).AtMapKey("amount"), knownvalue.Int64Exact(2)),
				},
			},
		},
	})
}
