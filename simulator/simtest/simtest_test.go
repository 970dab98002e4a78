package simtest_test

import (
	"bufio"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore/sqlitetest"
)

// With tokens the client sends the first one, and a request without one is refused.
func TestStartWithTokens(t *testing.T) {
	sim := simtest.Start(t, simtest.WithTokens(map[string]string{"b-token": "b", "a-token": "a"}))
	ctx := context.Background()
	if _, err := sim.Client.Create(ctx, "accounts", client.CreateRequest{Name: "acme"}); err != nil {
		t.Fatalf("Create with the first token = %v", err)
	}
	anon, err := client.New(client.Config{Endpoint: sim.URL, RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Create(ctx, "accounts", client.CreateRequest{Name: "x"}); !client.IsUnauthorized(err) {
		t.Errorf("Create without a token = %v, want unauthorized", err)
	}
}

// Without a worker and on a manual clock nothing moves until Advance.
func TestStartManualClock(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(t0)), simtest.WithoutWorker(), simtest.WithTimeScale(1),
		simtest.WithStore(sqlitetest.Open(t, filepath.Join(t.TempDir(), "sim.db"))))
	ctx := context.Background()
	acct, err := sim.Client.Create(ctx, "accounts", client.CreateRequest{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sim.Client.Create(ctx, "cloudspaces", client.CreateRequest{Name: "net", ParentID: acct.ID})
	if err != nil {
		t.Fatal(err)
	}
	sim.Advance(t, time.Second)
	if got, _ := sim.Client.Get(ctx, "cloudspaces", cs.ID); got.State != cs.State {
		t.Errorf("after 1s: %s, want still %s", got.State, cs.State)
	}
	sim.Advance(t, time.Hour)
	if got, _ := sim.Client.Get(ctx, "cloudspaces", cs.ID); got.State != "DEPLOYED" {
		t.Errorf("after an hour: %s, want DEPLOYED", got.State)
	}
	if now := sim.Clock().Now(); !now.Equal(t0.Add(time.Hour + time.Second)) {
		t.Errorf("clock = %v", now)
	}
}

func TestNextEvent(t *testing.T) {
	sc := bufio.NewScanner(strings.NewReader("retry: 1000\n\n: ping\n\nid: p1\nevent: change\ndata: {\"a\":1}\n\nevent: resync\ndata: one\ndata: two\n\nevent: cut"))
	for _, want := range [][2]string{{"change", `{"a":1}`}, {"resync", "one\ntwo"}} {
		if name, data, ok := simtest.NextEvent(sc); !ok || name != want[0] || data != want[1] {
			t.Errorf("NextEvent = %q %q %v, want %q %q", name, data, ok, want[0], want[1])
		}
	}
	if name, _, ok := simtest.NextEvent(sc); ok {
		t.Errorf("NextEvent at an event the stream cut short = %q, want none", name)
	}
}
