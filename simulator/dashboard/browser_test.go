package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// The browser tests drive Debian's chromium, headless, through the DevTools protocol
// (chromedp). Where chromium is missing they skip, except under CI (CI or
// LIFECYCLESIM_REQUIRE_BROWSER set), where they fail: .ci/run and make test install it.

// waitFor bounds every wait on the page: the tests wait on conditions, never on sleeps. A
// passing wait ends as soon as its condition holds; the bound only decides when a failing
// one gives up. On a 2-core machine running the race-detector suites beside an acceptance
// run, drawing a state diagram took over 20 s.
const waitFor = 60 * time.Second

// chromiumPath finds the browser, or skips (fails under CI) when there is none.
func chromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium not found: install it with `apt-get install -y chromium` (make test and .ci/run do it as root), or set CHROMIUM to its path"
	if os.Getenv("CI") != "" || os.Getenv("LIFECYCLESIM_REQUIRE_BROWSER") != "" {
		t.Fatal(msg + " (browser tests are required under CI)")
	}
	t.Skip(msg)
	return ""
}

// sim is an in-process lifecyclesim.
type sim struct {
	URL    string
	engine *engine.Engine
}

// startSim runs a simulator with a wall clock at the given time scale.
func startSim(t testing.TB, scale float64, tokens map[string]string) *sim {
	t.Helper()
	s := simtest.Start(t, simtest.WithTimeScale(scale), simtest.WithSeed(1), simtest.WithTokens(tokens))
	return &sim{URL: s.URL, engine: s.Engine}
}

func (s *sim) client(t testing.TB, token string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Endpoint: s.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// browser starts a fresh headless chromium (its own profile) and returns a tab's context.
func browser(t testing.TB) context.Context {
	t.Helper()
	path := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// Start the browser now, so a broken install fails here with a clear message.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

func run(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// js is a step that evaluates JavaScript for its effect.
func js(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[any](expr, chromedp.EvalAwaitPromise)(ctx, tg)
		return chromedp.Void{}, err
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) into a T.
func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitJS waits until a JavaScript expression is truthy, failing with what after waitFor.
func waitJS(t testing.TB, ctx context.Context, what, expr string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[any]("(() => { try { return !!("+expr+") } catch (e) { return false } })()", chromedp.WithPollingInterval(10*time.Millisecond))); err != nil {
		dump, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText.slice(0, 2000)`))
		t.Fatalf("waiting for %s (%s): %v\npage:\n%s", what, expr, err, dump)
	}
}

func q(s string) string { return strconv.Quote(s) }

// rowState is a JavaScript expression: the state the object list shows for an object.
func rowState(id string) string {
	return `(document.querySelector('.row[data-id=` + q(id) + `] [data-state]') || {}).dataset?.state`
}

// openvcloud makes an account, a deployed cloudspace and a machine in it.
func openvcloud(t testing.TB, c *client.Client, name string) (acct, cs, vm *client.Object) {
	t.Helper()
	ctx := context.Background()
	var err error
	if acct, err = c.Create(ctx, "accounts", client.CreateRequest{Name: name + "-acct"}); err != nil {
		t.Fatal(err)
	}
	if cs, err = c.Create(ctx, "cloudspaces", client.CreateRequest{Name: name + "-net", ParentID: acct.ID}); err != nil {
		t.Fatal(err)
	}
	if cs, err = c.WaitStatic(ctx, "cloudspaces", cs.ID, client.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	if vm, err = c.Create(ctx, "machines", client.CreateRequest{Name: name + "-vm", ParentID: cs.ID, Spec: map[string]any{"image_id": "ubuntu-24.04"}}); err != nil {
		t.Fatal(err)
	}
	return acct, cs, vm
}

// TestBrowserObjectsLive: objects made through the API appear on the page and change state
// there, without a reload; the list filters by kind, state and name.
func TestBrowserObjectsLive(t *testing.T) {
	s := startSim(t, 0.2, nil)
	c := s.client(t, "")
	ctx := browser(t)
	run(t, ctx, chromedp.Navigate(s.URL+"/"))
	waitJS(t, ctx, "the live stream", `document.querySelector('#live.on') !== null`)
	run(t, ctx, js(`window.notReloaded = true`))

	_, cs, vm := openvcloud(t, c, "live")
	waitJS(t, ctx, "the machine's row", rowState(vm.ID)+` !== undefined`)
	waitJS(t, ctx, "the machine RUNNING", rowState(vm.ID)+` === 'RUNNING'`)
	// The stop is slowed (400 ms of STOPPING become 400 s) until the page has shown STOPPING,
	// then the clock is moved past it: a loaded machine may not render a 400 ms state in time.
	if _, err := c.AddFault(context.Background(), client.FaultRule{Kind: "machine", Action: "stop", Mode: "slow", Factor: 1000, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Act(context.Background(), "machines", vm.ID, "stop", client.ActionRequest{}); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the machine STOPPING", rowState(vm.ID)+` === 'STOPPING'`)
	if _, err := c.AdvanceClock(context.Background(), 7*time.Minute); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the machine HALTED", rowState(vm.ID)+` === 'HALTED'`)
	waitJS(t, ctx, "the summary's machine card", `document.querySelector('.kind-card[data-kind=machine] .chip[data-state=HALTED]') !== null`)

	// Filters: by kind, then state, then name.
	run(t, ctx, chromedp.SetValue(chromedp.CSS("#f-kind"), "cloudspace"),
		js(`document.querySelector('#f-kind').dispatchEvent(new Event('change'))`))
	waitJS(t, ctx, "only cloudspaces", `document.querySelectorAll('.row').length === 1 && `+rowState(cs.ID)+` === 'DEPLOYED'`)
	run(t, ctx, chromedp.SetValue(chromedp.CSS("#f-state"), "DISABLED"),
		js(`document.querySelector('#f-state').dispatchEvent(new Event('change'))`))
	waitJS(t, ctx, "no DISABLED cloudspace", `document.querySelectorAll('.row').length === 0`)
	run(t, ctx, chromedp.SetValue(chromedp.CSS("#f-kind"), ""),
		js(`document.querySelector('#f-kind').dispatchEvent(new Event('change'))`),
		chromedp.SendKeys(chromedp.CSS("#f-name"), "live-vm"))
	waitJS(t, ctx, "the machine by name", `document.querySelectorAll('.row').length === 1 && `+rowState(vm.ID)+` === 'HALTED'`)

	if !eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Error("the page reloaded")
	}
}

// TestBrowserObjectPage: an object's page shows its state diagram with the current state
// highlighted, its timeline with actors and durations, and its parent and children; all
// follow the object live.
func TestBrowserObjectPage(t *testing.T) {
	s := startSim(t, 0.1, nil)
	c := s.client(t, "")
	_, cs, vm := openvcloud(t, c, "page")
	vm, err := c.WaitStatic(context.Background(), "machines", vm.ID, client.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	run(t, ctx, chromedp.Navigate(s.URL+"/"))
	waitJS(t, ctx, "the machine's row", rowState(vm.ID)+` === 'RUNNING'`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`.row[data-id=`+q(vm.ID)+`]`)))

	waitJS(t, ctx, "a diagram", `document.querySelector('#diagram svg') !== null`)
	waitJS(t, ctx, "the diagram with RUNNING highlighted",
		`document.querySelector('#diagram svg') !== null && document.querySelector('#diagram').dataset.current === 'RUNNING' && document.querySelector('#diagram .dash-current') !== null`)
	highlighted := eval[string](t, ctx, `document.querySelector('#diagram .dash-current').textContent.trim()`)
	if highlighted != "RUNNING" {
		t.Errorf("highlighted state = %q, want RUNNING", highlighted)
	}
	waitJS(t, ctx, "the timeline", `document.querySelectorAll('#timeline-table tbody tr').length >= 2`)
	timeline := eval[string](t, ctx, `document.querySelector('#timeline-table').innerText`)
	for _, want := range []string{"user", "deploy", "DEPLOYING", "RUNNING"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q:\n%s", want, timeline)
		}
	}
	waitJS(t, ctx, "the parent link", `document.querySelector('[data-rel=parent] [data-rel-id=`+q(cs.ID)+`]') !== null`)

	// The page follows the object: stop it from the page's own action button.
	run(t, ctx, chromedp.Click(chromedp.CSS(`#actions [data-action=stop]`)))
	waitJS(t, ctx, "HALTED highlighted", `document.querySelector('#diagram').dataset.current === 'HALTED' && document.querySelector('#diagram .dash-current') !== null`)
	waitJS(t, ctx, "the stop in the timeline", `[...document.querySelectorAll('#timeline-table tbody tr')].some(r => r.innerText.includes('STOPPING') && r.innerText.includes('HALTED'))`)

	// The cloudspace's page lists the machine among its children.
	run(t, ctx, chromedp.Click(chromedp.CSS(`[data-rel=parent] a`)))
	waitJS(t, ctx, "the machine as a child", `document.querySelector('[data-rel=child] [data-rel-id=`+q(vm.ID)+`]') !== null`)
}

// TestBrowserFaults: a fault added from the form fires on the next matching transition (its
// count and the object's timeline show it), and the remove button removes it.
func TestBrowserFaults(t *testing.T) {
	s := startSim(t, 0.1, nil)
	c := s.client(t, "")
	ctx := browser(t)
	run(t, ctx, chromedp.Navigate(s.URL+"/#/faults"))
	waitJS(t, ctx, "the empty fault list", `document.querySelector('#no-faults') !== null`)
	run(t, ctx,
		chromedp.SetValue(chromedp.CSS(`#fault-form [name=kind]`), "machine"),
		chromedp.SendKeys(chromedp.CSS(`#fault-form [name=action]`), "deploy"),
		chromedp.SetValue(chromedp.CSS(`#fault-form [name=mode]`), "fail"),
		chromedp.SendKeys(chromedp.CSS(`#fault-form [name=message]`), "hypervisor on fire"),
		chromedp.SendKeys(chromedp.CSS(`#fault-form [name=count]`), "1"),
		chromedp.Click(chromedp.CSS(`#fault-add`)))
	waitJS(t, ctx, "the new rule", `document.querySelector('#faults-table tr[data-fault] .fired')?.textContent === '0'`)
	rules, err := c.Faults(context.Background())
	if err != nil || len(rules) != 1 || rules[0].Kind != "machine" || rules[0].Action != "deploy" || rules[0].Message != "hypervisor on fire" {
		t.Fatalf("rules after the form = %+v, %v", rules, err)
	}

	_, _, vm := openvcloud(t, c, "faulty")
	waitJS(t, ctx, "the rule fired", `document.querySelector('#faults-table tr[data-fault] .fired')?.textContent === '1'`)
	run(t, ctx, chromedp.Navigate(s.URL+"/#/object/"+vm.ID))
	waitJS(t, ctx, "the failure in the timeline", `[...document.querySelectorAll('#timeline-table td.err')].some(td => td.innerText.includes('hypervisor on fire'))`)
	waitJS(t, ctx, "the machine rolled back to VIRTUAL", `document.querySelector('#diagram').dataset.current === 'VIRTUAL'`)

	run(t, ctx, chromedp.Navigate(s.URL+"/#/faults"))
	waitJS(t, ctx, "the rule listed", `document.querySelector('[data-remove]') !== null`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`[data-remove]`)))
	waitJS(t, ctx, "the rule removed", `document.querySelector('#no-faults') !== null`)
	if rules, err := c.Faults(context.Background()); err != nil || len(rules) != 0 {
		t.Errorf("rules after remove = %+v, %v", rules, err)
	}
}

// TestBrowserRequests: the Requests page shows the tenant's request journal, newest first, with
// an error's code and the idempotency key a create sent, and filters it by status.
func TestBrowserRequests(t *testing.T) {
	s := startSim(t, 0.1, nil)
	c := s.client(t, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "accounts", client.CreateRequest{Name: "journaled"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "machines", "machine-nope"); err == nil {
		t.Fatal("reading machine-nope succeeded")
	}
	tab := browser(t)
	run(t, tab, chromedp.Navigate(s.URL+"/#/requests"))
	waitJS(t, tab, "the create in the journal", `[...document.querySelectorAll('#journal-table td.req')].some(td => td.textContent.startsWith('POST /v1/accounts'))`)
	if key := eval[string](t, tab, `[...document.querySelectorAll('#journal-table tr[data-seq]')].find(tr => tr.querySelector('td.req').textContent.startsWith('POST /v1/accounts')).querySelectorAll('td.id')[1].textContent`); key == "" {
		t.Error("the create's row shows no idempotency key")
	}
	if first := eval[string](t, tab, `document.querySelector('#journal-table tr[data-seq] td.req').textContent`); !strings.Contains(first, "/v1/") {
		t.Errorf("the first row is %q, want the newest API request", first)
	}
	run(t, tab, chromedp.SendKeys(chromedp.CSS(`#journal-form [name=status]`), "4xx"), chromedp.Click(chromedp.CSS(`#journal-refresh`)))
	waitJS(t, tab, "only the 404 after filtering", `[...document.querySelectorAll('#journal-table td.status')].every(td => td.textContent === '404') &&
		[...document.querySelectorAll('#journal-table td.err')].some(td => td.textContent.startsWith('not_found'))`)
}

// TestBrowserClockAndReset: the clock advances from its form, the time scale changes from
// its form, and reset asks for confirmation (cancel keeps everything).
func TestBrowserClockAndReset(t *testing.T) {
	s := startSim(t, 0.1, nil)
	c := s.client(t, "")
	acct, err := c.Create(context.Background(), "accounts", client.CreateRequest{Name: "keep-me"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	run(t, ctx, chromedp.Navigate(s.URL+"/#/sim"))
	waitJS(t, ctx, "the clock", `document.querySelector('#sim-scale').textContent === '0.1'`)
	before := s.engine.Clock().Now()
	run(t, ctx, chromedp.SendKeys(chromedp.CSS(`#advance-form [name=advance]`), "24h"),
		chromedp.Click(chromedp.CSS(`#advance-form button`)))
	waitJS(t, ctx, "the advanced clock on the page",
		`new Date(document.querySelector('#sim-now').textContent.replace(' ', 'T')) - new Date(`+q(before.Format(time.RFC3339))+`) > 23*3600e3`)
	if d := s.engine.Clock().Now().Sub(before); d < 24*time.Hour {
		t.Errorf("clock moved %v, want 24h", d)
	}
	run(t, ctx, chromedp.SetValue(chromedp.CSS(`#config-form [name=time_scale]`), "0.5"),
		chromedp.Click(chromedp.CSS(`#config-form button`)))
	waitJS(t, ctx, "the new time scale", `document.querySelector('#sim-scale').textContent === '0.5'`)

	run(t, ctx, chromedp.Click(chromedp.CSS(`#reset`)))
	waitJS(t, ctx, "the confirmation", `document.querySelector('#confirm-reset').open`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#reset-cancel`)))
	waitJS(t, ctx, "the confirmation closed", `!document.querySelector('#confirm-reset').open`)
	if _, err := c.Get(context.Background(), "accounts", acct.ID); err != nil {
		t.Fatalf("cancelled reset removed the account: %v", err)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#reset`)))
	waitJS(t, ctx, "the confirmation", `document.querySelector('#confirm-reset').open`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#reset-confirm`)))
	waitJS(t, ctx, "the reset toast", `document.querySelector('#toast').innerText.includes('Reset done')`)
	if _, err := c.Get(context.Background(), "accounts", acct.ID); !client.IsNotFound(err) {
		t.Errorf("after reset the account reads %v, want not found", err)
	}
	run(t, ctx, chromedp.Navigate(s.URL+"/#/"))
	waitJS(t, ctx, "an empty list", `document.querySelector('#count')?.textContent === '0 of 0 objects'`)
}

// TestBrowserSignIn: with tokens the page asks for one, shows only its tenant's objects, and
// signs out.
func TestBrowserSignIn(t *testing.T) {
	s := startSim(t, 0.1, map[string]string{"tok-acme": "acme", "tok-globex": "globex"})
	acme, globex := s.client(t, "tok-acme"), s.client(t, "tok-globex")
	mine, err := acme.Create(context.Background(), "accounts", client.CreateRequest{Name: "acme-account"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := globex.Create(context.Background(), "accounts", client.CreateRequest{Name: "globex-account"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	run(t, ctx, chromedp.Navigate(s.URL+"/"))
	waitJS(t, ctx, "the sign-in form", `document.querySelector('#signin-form') !== null`)
	run(t, ctx, chromedp.SendKeys(chromedp.CSS("#signin-token"), "wrong"), chromedp.Click(chromedp.CSS("#signin-form button")))
	waitJS(t, ctx, "the refusal", `document.querySelector('#toast .bad')?.innerText.includes('unknown token')`)
	run(t, ctx, chromedp.SetValue(chromedp.CSS("#signin-token"), "tok-acme"), chromedp.Click(chromedp.CSS("#signin-form button")))
	waitJS(t, ctx, "acme's account", rowState(mine.ID)+` === 'CONFIRMED'`)
	who := eval[string](t, ctx, `document.querySelector('#who').textContent`)
	others := eval[int](t, ctx, `document.querySelectorAll('.row[data-id=`+q(theirs.ID)+`]').length`)
	if who != "tenant acme" || others != 0 {
		t.Errorf("signed in as %q with %d of globex's rows", who, others)
	}
	// Live for this tenant only.
	late, err := acme.Create(context.Background(), "accounts", client.CreateRequest{Name: "acme-late"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := globex.Create(context.Background(), "accounts", client.CreateRequest{Name: "globex-late"}); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "acme's new account", rowState(late.ID)+` === 'CONFIRMED'`)
	if held := eval[int](t, ctx, `window.dash.S.objects.size`); held != 2 {
		t.Errorf("the page holds %d objects, want acme's 2", held)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS("#signout")))
	waitJS(t, ctx, "the sign-in form again", `document.querySelector('#signin-form') !== null`)
	run(t, ctx, chromedp.Reload())
	waitJS(t, ctx, "still signed out after a reload", `document.querySelector('#signin-form') !== null`)
}

// TestBrowserTenThousand measures, in the browser, with 10,000 objects: how long the object
// list takes to render (from navigation to painted rows), and how long after a transition
// (the event's time) the changed state shows in the list: figures, printed (aim: under a second).
func TestBrowserTenThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 10,000-object measurement")
	}
	if raceEnabled {
		t.Skip("under -race the server is several times slower: make test measures the figures in a run without -race")
	}
	s := startSim(t, 0.05, nil)
	c := s.client(t, "")
	const n = 10000
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				o, err := c.Create(context.Background(), "accounts", client.CreateRequest{Name: fmt.Sprintf("acct-%05d", i)})
				if err != nil {
					errs <- err
					return
				}
				ids[i] = o.ID
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}

	ctx := browser(t)
	var renderMs []float64
	for range 3 {
		run(t, ctx, chromedp.Navigate(s.URL+"/"))
		waitJS(t, ctx, "the list rendered", `window.dash.metrics.listRenderedAt !== undefined && document.querySelectorAll('.row').length > 0`)
		m := eval[struct {
			At, Render, Snapshot float64
			Objects              int
		}](t, ctx, `({At: window.dash.metrics.listRenderedAt, Render: window.dash.metrics.listRenderMs, Snapshot: window.dash.metrics.snapshotMs, Objects: window.dash.metrics.objects})`)
		if m.Objects != n {
			t.Fatalf("the page holds %d objects, want %d", m.Objects, n)
		}
		t.Logf("list with %d objects: painted %.0f ms after navigation (snapshot fetch %.0f ms, list render %.0f ms)", n, m.At, m.Snapshot, m.Render)
		renderMs = append(renderMs, m.At)
	}
	slices.Sort(renderMs)
	median := renderMs[len(renderMs)/2]
	t.Logf("FIGURE list render with %d objects: median %.0f ms from navigation to painted rows (%v)", n, median, renderMs)
	// The figure is the measure (make dashboard-figures prints it; its aim is under a second); the
	// bound only catches a list that no longer renders in any useful time, since a loaded 2-core
	// machine misses a tight wall-clock bound now and then.
	if median > 10000 {
		t.Errorf("the list took %.0f ms to render, want well under 10 s (aim: under 1 s)", median)
	}

	// The newest account is the list's first row. Record, in the page, when its state cell
	// changes; compare with the time the simulator recorded the transition.
	target := eval[string](t, ctx, `document.querySelector('.row').dataset.id`)
	if !slices.Contains(ids, target) {
		t.Fatalf("the first row is %q, not one of the accounts", target)
	}
	run(t, ctx, js(`(() => {
		window.seen = [];
		new MutationObserver(() => {
			const st = document.querySelector('.row[data-id=`+q(target)+`] [data-state]')?.dataset.state;
			const last = window.seen[window.seen.length - 1];
			if (st && (!last || last.state !== st)) window.seen.push({state: st, at: performance.timeOrigin + performance.now()});
		}).observe(document.querySelector('#rows'), {childList: true, subtree: true, characterData: true});
	})()`))
	var lat []time.Duration
	for i := range 10 {
		action, via, to := "disable", "DISABLING", "DISABLED"
		if i%2 == 1 {
			action, via, to = "enable", "ENABLING", "CONFIRMED"
		}
		if _, err := c.Act(context.Background(), "accounts", target, action, client.ActionRequest{}); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, to+" on the page", `window.seen.some(s => s.state === `+q(to)+`)`)
		evs, err := c.Events(context.Background(), "accounts", target)
		if err != nil {
			t.Fatal(err)
		}
		seen := eval[[]seenState](t, ctx, `window.seen.splice(0)`)
		for _, st := range []string{via, to} {
			ev := lastEvent(evs, st)
			at := slices.IndexFunc(seen, func(s seenState) bool { return s.State == st })
			if ev == nil || at < 0 {
				continue // a phase shorter than a frame may never be painted: only landings count
			}
			d := time.Duration((seen[at].At - float64(ev.Time.UnixNano())/1e6) * float64(time.Millisecond))
			lat = append(lat, d)
		}
	}
	if len(lat) < 10 {
		t.Fatalf("only %d transitions measured", len(lat))
	}
	slices.Sort(lat)
	p50, worst := lat[len(lat)/2], lat[len(lat)-1]
	// A figure, not a bound: a loaded 2-core machine misses any wall-clock bound now and then.
	// Every state change showing at all is what waitJS checked.
	t.Logf("FIGURE transition to page with %d objects: median %v, max %v over %d transitions", n, p50.Round(100*time.Microsecond), worst.Round(100*time.Microsecond), len(lat))
}

// seenState is a state the page showed, and when (ms since the epoch).
type seenState struct {
	State string
	At    float64
}

func lastEvent(evs []client.Event, to string) *client.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].To == to {
			return &evs[i]
		}
	}
	return nil
}
