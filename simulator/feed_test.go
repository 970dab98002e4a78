package simulator

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

func TestEngineChanges(t *testing.T) {
	h := newTestServer(t, harnessOptions{tokens: map[string]string{"tok-a": "a", "tok-b": "b"}})
	e := h.engine
	start := e.ChangePosition("a")

	// A wait for tenant a is not woken by tenant b, and ends with its context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	h.token = "tok-b"
	h.create("accounts", client.CreateRequest{Name: "b-acct"})
	if ids, _, _, err := e.Changes(ctx, "a", start); !errors.Is(err, context.DeadlineExceeded) || ids != nil {
		t.Errorf("tenant a's wait = %v, %v; want the deadline", ids, err)
	}

	got := make(chan []string, 1)
	go func() {
		ids, _, _, err := e.Changes(context.Background(), "a", start)
		if err != nil {
			t.Error(err)
		}
		got <- ids
	}()
	h.token = "tok-a"
	acct := h.create("accounts", client.CreateRequest{Name: "a-acct"})
	select {
	case ids := <-got:
		if !slices.Equal(ids, []string{acct.ID}) {
			t.Errorf("tenant a's changes = %v, want [%s]", ids, acct.ID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("tenant a's wait was not woken by its change")
	}
}
