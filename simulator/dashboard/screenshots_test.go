package dashboard_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// TestScreenshots makes the operator guide's screenshots (simulator/README.md) of the dashboard into $SCREENSHOTS_DIR
// (make screenshots); without it the test skips.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("SCREENSHOTS_DIR")
	if dir == "" {
		t.Skip("set SCREENSHOTS_DIR (make screenshots) to make the operator guide's screenshots")
	}
	s := startSim(t, 0.5, nil)
	c := s.client(t, "")
	ctx := context.Background()

	// A small world: OpenvCloud machines in a few states, a Blazar lease with its
	// reservations and events, a CB-Tumblebug MCI with its VMs, and a fault that fired.
	_, cs, vm := openvcloud(t, c, "shop")
	if _, err := c.WaitStatic(ctx, "machines", vm.ID, client.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shop-web-1", "shop-web-2", "shop-db"} {
		m, err := c.Create(ctx, "machines", client.CreateRequest{Name: name, ParentID: cs.ID, Spec: map[string]any{"image_id": "ubuntu-24.04"}})
		if err != nil {
			t.Fatal(err)
		}
		if name == "shop-db" {
			if _, err := c.WaitStatic(ctx, "machines", m.ID, client.WaitOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Act(ctx, "machines", m.ID, "stop", client.ActionRequest{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := s.engine.Clock().Now()
	if _, err := c.Create(ctx, "leases", client.CreateRequest{Name: "gpu-lease", Spec: map[string]any{
		"start_date": now.Add(time.Hour).Format(time.RFC3339), "end_date": now.Add(25 * time.Hour).Format(time.RFC3339),
		"reservations": []any{map[string]any{"resource_type": "physical:host", "min": 1, "max": 2}},
	}}); err != nil {
		t.Fatal(err)
	}
	sub := func(name string, n int, csp, region string) map[string]any {
		return map[string]any{"name": name, "count": n, "csp": csp, "region": region, "spec": "t3.small", "image": "ubuntu22.04"}
	}
	mci, err := c.Create(ctx, "mcis", client.CreateRequest{Name: "infra", Spec: map[string]any{"subgroups": []any{
		sub("web", 3, "aws", "us-east-1"), sub("db", 1, "gcp", "asia-northeast3"),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddFault(ctx, client.FaultRule{Kind: "machine", Action: "deploy", Mode: "fail", Message: "no capacity in the cluster", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "machines", client.CreateRequest{Name: "shop-cache", ParentID: cs.ID, Spec: map[string]any{"image_id": "ubuntu-24.04"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddFault(ctx, client.FaultRule{Kind: "vm", Action: "suspend", Mode: "slow", Factor: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitStatic(ctx, "mcis", mci.ID, client.WaitOptions{}); err != nil {
		t.Fatal(err)
	}

	b := browser(t)
	shot := func(name, url, ready string) {
		t.Helper()
		run(t, b, chromedp.Navigate(s.URL+url))
		waitJS(t, b, name, ready)
		png, err := chromedp.Run(b, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s.png (%d bytes)", name, len(png))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot("dashboard-objects", "/", `document.querySelector('.row[data-id=`+q(mci.ID)+`] [data-state]')?.dataset.state === 'Running' && document.querySelectorAll('.row .state.transition').length === 0`)
	shot("dashboard-object", "/#/object/"+mci.ID, `document.querySelector('#diagram .dash-current') !== null && document.querySelectorAll('[data-rel=child]').length === 4 && document.querySelector('#timeline-table') !== null`)
	shot("dashboard-faults", "/#/faults", `document.querySelectorAll('#faults-table tr[data-fault]').length === 2`)
}
