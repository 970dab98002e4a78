package simtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// A provider author's test starts a simulator in one call and points the code under test at
// sim.URL (a provider's endpoint), or uses sim.Client as here. In a test, pass its *testing.T;
// an Example has none, so this one passes a stand-in.
func Example() {
	t := &exampleT{}
	defer t.done() // a test's t.Cleanup does this

	sim := simtest.Start(t, simtest.WithTimeScale(0.001))
	ctx := context.Background()

	account, err := sim.Client.Create(ctx, "accounts", client.CreateRequest{Name: "acme"})
	if err != nil {
		panic(err)
	}
	cs, err := sim.Client.Create(ctx, "cloudspaces", client.CreateRequest{Name: "net", ParentID: account.ID})
	if err != nil {
		panic(err)
	}
	fmt.Println("created:", cs.State)
	cs, err = sim.Client.WaitStatic(ctx, "cloudspaces", cs.ID, client.WaitOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("then:", cs.State)
	// Output:
	// created: DEPLOYING
	// then: DEPLOYED
}

// exampleT stands in for the *testing.T a test would pass.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (*exampleT) Helper()                           {}
func (t *exampleT) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }
func (*exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func (t *exampleT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
