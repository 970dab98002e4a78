package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// tutorialStep loads one step of the kind tutorial (examples/kinds/tutorial) as
// lifecyclesim --kinds loads it.
func tutorialStep(t *testing.T, n int) []*lifecycle.Kind {
	t.Helper()
	file := fmt.Sprintf("../examples/kinds/tutorial/step%d.yaml", n)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	kinds, warns, err := lifecycle.ParseWarn(file, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Fatalf("the tutorial warns: %v", warns)
	}
	return kinds
}

const greenhouseAddr = "lifecycle_object.greenhouse"

// greenhouseConfig is the tutorial's configuration (examples/kinds/tutorial/main.tf, shown in
// docs/guides/kinds-tutorial.md), with another status and heating.
func greenhouseConfig(t *testing.T, status string, heated bool) string {
	t.Helper()
	data, err := os.ReadFile("../examples/kinds/tutorial/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	config := string(data)
	for from, to := range map[string]string{`status = "OPEN"`: fmt.Sprintf("status = %q", status), `heated = false`: fmt.Sprintf("heated = %t", heated)} {
		if !strings.Contains(config, from) {
			t.Fatalf("main.tf lacks %s", from)
		}
		config = strings.Replace(config, from, to, 1)
	}
	return config
}

// TestAccKindTutorial applies the tutorial's last step with Terraform: a greenhouse of a user
// kind with fields (and defaults), its beds made as children, the guard on sowing and the
// derived status.
func TestAccKindTutorial(t *testing.T) {
	sim := newTestSim(t, withKinds(tutorialStep(t, 5)...))
	var id string
	beds := func() ([]client.Object, error) {
		return sim.Client.ListAll(context.Background(), "beds", client.ListOptions{ParentID: id})
	}
	derived := func(want map[string]any) resource.TestCheckFunc {
		return func(*terraform.State) error {
			return sim.waitFor("greenhouses", id, func(o *client.Object) bool {
				for k, v := range want {
					if !reflect.DeepEqual(o.Status[k], v) {
						return false
					}
				}
				return true
			})
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(greenhouseConfig(t, "OPEN", false)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(greenhouseAddr, tfjsonpath.New("state"), knownvalue.StringExact("OPEN")),
					// area_m2 is not configured: effective_spec shows the kind's default.
					statecheck.ExpectKnownValue(greenhouseAddr, tfjsonpath.New("effective_spec").AtMapKey("area_m2"), knownvalue.StringExact("50")),
				},
				Check: resource.ComposeTestCheckFunc(
					captureID(greenhouseAddr, &id),
					func(*terraform.State) error {
						o, err := sim.Client.Get(context.Background(), "greenhouses", id)
						if err != nil {
							return err
						}
						// area_m2 was not configured: the kind's default.
						if o.Spec["area_m2"] != 50.0 {
							return fmt.Errorf("area_m2 = %v, want the default 50", o.Spec["area_m2"])
						}
						bs, err := beds()
						if err != nil {
							return err
						}
						if len(bs) != 2 {
							return fmt.Errorf("the greenhouse has %d beds, want 2", len(bs))
						}
						return nil
					},
					derived(map[string]any{"beds": map[string]any{"EMPTY": 2.0}, "growing": 0.0, "needs_care": false, "mostly": "EMPTY"}),
					// Sowing a bed while the greenhouse is open; the derived status follows.
					func(*terraform.State) error {
						bs, err := beds()
						if err != nil {
							return err
						}
						ctx := context.Background()
						if _, err := sim.Client.Act(ctx, "beds", bs[0].ID, "sow", client.ActionRequest{}); err != nil {
							return err
						}
						_, err = sim.Client.WaitStatic(ctx, "beds", bs[0].ID, client.WaitOptions{})
						return err
					},
					derived(map[string]any{"beds": map[string]any{"EMPTY": 1.0, "GROWING": 1.0}, "growing": 1.0}),
				),
			},
			{
				// A change in place, and a status change: close the greenhouse.
				Config: sim.config(greenhouseConfig(t, "CLOSED", true)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(greenhouseAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(greenhouseAddr, tfjsonpath.New("state"), knownvalue.StringExact("CLOSED")),
					statecheck.ExpectKnownValue(greenhouseAddr, tfjsonpath.New("spec").AtMapKey("heated"), knownvalue.Bool(true)),
				},
				// The guard: no sowing while the greenhouse is closed.
				Check: func(*terraform.State) error {
					bs, err := beds()
					if err != nil {
						return err
					}
					for _, b := range bs {
						if b.State != "EMPTY" {
							continue
						}
						_, err := sim.Client.Act(context.Background(), "beds", b.ID, "sow", client.ActionRequest{})
						var apiErr *client.Error
						if !errors.As(err, &apiErr) || apiErr.Code != client.CodeInvalidTransition || !strings.Contains(err.Error(), "greenhouse") || !strings.Contains(err.Error(), "OPEN") {
							return fmt.Errorf("sowing in a closed greenhouse = %v, want a refusal naming the greenhouse and OPEN", err)
						}
						return nil
					}
					return errors.New("no empty bed left to try")
				},
			},
			{
				// The hint offers the states a greenhouse can be asked to be in: not BROKEN,
				// an error state only a failure reaches.
				Config:      sim.config(greenhouseConfig(t, "BUILDING", true)),
				PlanOnly:    true,
				ExpectError: errorLike("Invalid status.*\"BUILDING\" is not a state a greenhouse can be asked to be in. Choose one of\\s+`CLOSED`, `OPEN`\\."),
			},
		},
		CheckDestroy: func(*terraform.State) error { return expectGone(sim, "greenhouses", id) },
	})
}

// TestAccKindTutorialSteps applies each earlier step of the tutorial too: the greenhouse as
// that step declares it (no spec before step 2, no beds before step 3), opened.
func TestAccKindTutorialSteps(t *testing.T) {
	configs := map[int]string{
		1: `
resource "lifecycle_object" "greenhouse" {
  kind   = "greenhouse"
  name   = "north"
  status = "OPEN"
}
`,
		2: `
resource "lifecycle_object" "greenhouse" {
  kind   = "greenhouse"
  name   = "north"
  status = "OPEN"
  spec = {
    crop = "peppers"
  }
}
`,
		3: greenhouseConfig(t, "OPEN", false),
		4: greenhouseConfig(t, "OPEN", true),
	}
	for step := 1; step <= 4; step++ {
		t.Run(fmt.Sprintf("step%d", step), func(t *testing.T) {
			sim := newTestSim(t, withKinds(tutorialStep(t, step)...))
			var id string
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProviders,
				Steps: []resource.TestStep{{
					Config: sim.config(configs[step]),
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(greenhouseAddr, tfjsonpath.New("state"), knownvalue.StringExact("OPEN")),
					},
					Check: captureID(greenhouseAddr, &id),
				}},
				CheckDestroy: func(*terraform.State) error { return expectGone(sim, "greenhouses", id) },
			})
		})
	}
}
