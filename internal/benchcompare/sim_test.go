package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCheckpointedWaitsForTheJournal: the scale benchmark measures a server only once its
// /metrics show every journaled commit checkpointed.
func TestCheckpointedWaitsForTheJournal(t *testing.T) {
	const help = "# HELP lifecyclesim_store_journal_commits_total Store commits.\n# TYPE lifecyclesim_store_journal_commits_total counter\n"
	serve := func(pages ...string) (*simAPI, *atomic.Int32) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			i := min(int(n.Add(1))-1, len(pages)-1)
			fmt.Fprint(w, pages[i])
		}))
		t.Cleanup(srv.Close)
		return &simAPI{base: srv.URL, hc: srv.Client()}, &n
	}
	metrics := func(commits, checkpointed string) string {
		return help + "lifecyclesim_store_journal_commits_total " + commits + "\n" +
			`lifecyclesim_transitions_total{kind="machine"} 9` + "\n" +
			"lifecyclesim_store_checkpointed_commits_total " + checkpointed + "\n"
	}
	t.Run("drains", func(t *testing.T) {
		api, n := serve(metrics("1.2e+06", "1.1e+06"), metrics("1.2e+06", "1.19e+06"), metrics("1.2e+06", "1.2e+06"))
		if err := api.checkpointed(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != 3 {
			t.Errorf("asked /metrics %d times, want 3 (until the journal was empty)", got)
		}
	})
	t.Run("no journal", func(t *testing.T) {
		api, n := serve("go_goroutines 12\n")
		if err := api.checkpointed(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("asked /metrics %d times, want 1", got)
		}
	})
	t.Run("older lifecyclesim", func(t *testing.T) {
		// Journal commits but no checkpointed counter: nothing to wait for, not a minute.
		api, n := serve(help + "lifecyclesim_store_journal_commits_total 12345\n")
		if err := api.checkpointed(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("asked /metrics %d times, want 1", got)
		}
	})
	t.Run("timestamps", func(t *testing.T) {
		api, n := serve(metrics("10 1700000000000", "4 1700000000000"), metrics("10 1700000000001", "10 1700000000001"))
		if err := api.checkpointed(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != 2 {
			t.Errorf("asked /metrics %d times, want 2 (samples with timestamps read)", got)
		}
	})
	t.Run("stuck", func(t *testing.T) {
		api, _ := serve(metrics("10", "4"))
		err := api.checkpointed(t.Context(), 100*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "still holds 6 commits") {
			t.Fatalf("checkpointed = %v, want the 6 commits left named", err)
		}
	})
}
