package provider

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// testAccProviders serves the provider in-process to terraform-plugin-testing.
var testAccProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"lifecycle": providerserver.NewProtocol6WithError(New("test")()),
}

// testSim is an in-process simulator for one test.
type testSim struct {
	URL    string
	Engine *simulator.Engine
	Client *client.Client
}

// simOptions tune newTestSim.
type simOptions struct {
	timeScale float64
	healAfter time.Duration
	kinds     []*lifecycle.Kind
}

// newTestSim starts a simulator on an in-memory store with fast transitions. Its state lives
// across the test's steps (each terraform command gets a new provider server).
func newTestSim(t *testing.T, opts ...func(*simOptions)) *testSim {
	t.Helper()
	o := simOptions{timeScale: 0.002, healAfter: 10 * time.Minute}
	for _, f := range opts {
		f(&o)
	}
	reg := lifecycle.Builtin()
	if len(o.kinds) > 0 {
		if err := reg.Add(o.kinds...); err != nil {
			t.Fatal(err)
		}
	}
	engine := simulator.NewEngine(simulator.NewMemStore(), reg, simulator.NewSimClock(),
		simulator.Options{TimeScale: o.timeScale, HealAfter: o.healAfter})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = engine.Run(ctx)
	}()
	srv := httptest.NewServer(simulator.NewServer(engine, simulator.ServerOptions{}))
	t.Cleanup(func() {
		engine.Drain()
		srv.Close()
		cancel()
		<-done
	})
	c, err := client.New(client.Config{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return &testSim{URL: srv.URL, Engine: engine, Client: c}
}

// config prefixes a test configuration with the provider block pointing at the simulator.
func (s *testSim) config(body string) string {
	return fmt.Sprintf("provider \"lifecycle\" {\n  endpoint = %q\n}\n\n%s", s.URL, body)
}
