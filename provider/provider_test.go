package provider

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// testAccProviders serves the provider in-process to terraform-plugin-testing.
var testAccProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"lifecycle": func() (tfprotov6.ProviderServer, error) { return NewServer("test")(), nil },
}

// testSim is an in-process simulator for one test.
type testSim struct {
	URL    string
	Engine *engine.Engine
	Client *client.Client
}

// withMiddleware wraps the simulator's HTTP handler (to watch requests).
func withMiddleware(mw func(http.Handler) http.Handler) simtest.Option {
	return simtest.WithMiddleware(mw)
}

// withKinds makes the simulator serve user-defined kinds besides the built-in ones.
func withKinds(kinds ...*lifecycle.Kind) simtest.Option { return simtest.WithKinds(kinds...) }

// withTokens makes the simulator require one of tokens (token → tenant); the test client
// uses the lexically first token.
func withTokens(tokens map[string]string) simtest.Option { return simtest.WithTokens(tokens) }

// newTestSim starts a simulator on an in-memory store with fast transitions. Its state lives
// across the test's steps (each terraform command gets a new provider server).
func newTestSim(t *testing.T, opts ...simtest.Option) *testSim {
	t.Helper()
	opts = append([]simtest.Option{simtest.WithTimeScale(0.002), simtest.WithHealAfter(10 * time.Minute)}, opts...)
	s := simtest.Start(t, opts...)
	return &testSim{URL: s.URL, Engine: s.Engine, Client: s.Client}
}

// config prefixes a test configuration with the provider block pointing at the simulator.
func (s *testSim) config(body string) string {
	return fmt.Sprintf("provider \"lifecycle\" {\n  endpoint = %q\n}\n\n%s", s.URL, body)
}

// act runs an action out of band (as another tool or a person would) and waits until the
// object is static again.
func (s *testSim) act(t *testing.T, collection, id, action string) *client.Object {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Client.Act(ctx, collection, id, action, client.ActionRequest{}); err != nil {
		t.Fatalf("%s %s: %v", action, id, err)
	}
	return s.waitStatic(t, collection, id)
}

// waitStatic waits until the object is static.
func (s *testSim) waitStatic(t *testing.T, collection, id string) *client.Object {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := s.Client.WaitStatic(ctx, collection, id, client.WaitOptions{PollTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("waiting for %s %s: %v", collection, id, err)
	}
	return o
}

// waitFor polls the object until cond holds: for changes that happen without a transition
// (cascades), which WaitStatic cannot see coming.
func (s *testSim) waitFor(collection, id string, cond func(*client.Object) bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		o, err := s.Client.Get(ctx, collection, id)
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", collection, id, err)
		}
		if cond(o) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s never reached the expected condition; last state %s", collection, id, o.State)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// addFault adds a fault rule to the simulator.
func (s *testSim) addFault(t *testing.T, rule client.FaultRule) client.FaultRule {
	t.Helper()
	r, err := s.Engine.Faults().Add(context.Background(), "", rule)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// captureID stores a resource's ID for later steps (PreConfig functions, CheckDestroy).
func captureID(addr string, id *string) resource.TestCheckFunc {
	return resource.TestCheckResourceAttrWith(addr, "id", func(v string) error {
		*id = v
		return nil
	})
}

// expectPriorState checks a string attribute of a resource in the plan's prior state: the
// state as refreshed, before the planned change (drift shows up here).
func expectPriorState(addr, attr, want string) plancheck.PlanCheck {
	return priorStateCheck{addr: addr, attr: attr, want: want}
}

type priorStateCheck struct{ addr, attr, want string }

func (c priorStateCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if req.Plan.PriorState == nil || req.Plan.PriorState.Values == nil || req.Plan.PriorState.Values.RootModule == nil {
		resp.Error = fmt.Errorf("%s: the plan has no prior state", c.addr)
		return
	}
	for _, r := range req.Plan.PriorState.Values.RootModule.Resources {
		if r.Address != c.addr {
			continue
		}
		if got, _ := r.AttributeValues[c.attr].(string); got != c.want {
			resp.Error = fmt.Errorf("%s.%s in the prior state = %q, want %q", c.addr, c.attr, got, c.want)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the prior state", c.addr)
}

// waitGone waits until the object no longer exists.
func (s *testSim) waitGone(t *testing.T, collection, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := s.Client.WaitStatic(ctx, collection, id, client.WaitOptions{PollTimeout: 5 * time.Second})
	if !client.IsNotFound(err) {
		t.Fatalf("%s %s should be gone; got %v, %v", collection, id, o, err)
	}
}

// expectSimState checks the object's state on the server.
func expectSimState(s *testSim, collection, id, want string) error {
	o, err := s.Client.Get(context.Background(), collection, id)
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", collection, id, err)
	}
	if o.State != want {
		return fmt.Errorf("%s %s is %s on the server, want %s", collection, id, o.State, want)
	}
	return nil
}

// expectGone checks the object no longer exists on the server.
func expectGone(s *testSim, collection, id string) error {
	if id == "" {
		return fmt.Errorf("no %s ID was captured", collection)
	}
	o, err := s.Client.Get(context.Background(), collection, id)
	if !client.IsNotFound(err) {
		return fmt.Errorf("%s %s should be gone; got %v, %v", collection, id, o, err)
	}
	return nil
}

// expectCount checks how many objects a collection holds and returns them.
func expectCount(t *testing.T, s *testSim, collection string, want int) []client.Object {
	t.Helper()
	objs, err := s.Client.ListAll(context.Background(), collection, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != want {
		t.Fatalf("%d %s on the server, want %d: %+v", len(objs), collection, want, objs)
	}
	return objs
}

// operations lists the actions that ran on an object, oldest first, one per operation.
func operations(s *testSim, collection, id string) ([]string, error) {
	evs, err := s.Client.Events(context.Background(), collection, id)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range evs {
		if e.OperationID == "" || seen[e.OperationID] {
			continue
		}
		seen[e.OperationID] = true
		out = append(out, e.Action)
	}
	return out, nil
}

// expectActions checks that the last operations on an object ran these actions, in order.
func expectActions(s *testSim, collection, id string, want ...string) error {
	got, err := operations(s, collection, id)
	if err != nil {
		return err
	}
	if len(got) < len(want) || !slices.Equal(got[len(got)-len(want):], want) {
		return fmt.Errorf("actions on %s %s = %v, want them to end with %v", collection, id, got, want)
	}
	return nil
}

// errorLike matches an error message whose words may be wrapped across lines: each space in
// the pattern matches any run of white space.
func errorLike(pattern string) *regexp.Regexp {
	return regexp.MustCompile("(?s)" + strings.ReplaceAll(pattern, " ", `\s+`))
}

// kindDataConfig reads the machine kind: the smallest configuration that configures the provider.
const kindDataConfig = `
data "lifecycle_kind" "machine" {
  name = "machine"
}
`
