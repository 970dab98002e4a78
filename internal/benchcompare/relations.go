package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// The relations mode: CB-Tumblebug MCIs of many VMs (create, suspend, resume, scale, terminate
// and delete) against the physical limit of the served rate limits, another tenant's deploys
// during a large create, and many Blazar timers firing at once. Every server is fresh (one per
// MCI, per tenant run and per timer run) and runs with tenants (--token) and an admin token,
// so that a slow or unfinished operation leaves nothing behind for the next measurement.

// The servers' tokens: two tenants and the admin (the clock).
const (
	benchToken = "benchcompare-tenant-bench"
	otherToken = "benchcompare-tenant-other"
	adminToken = "benchcompare-admin"
)

// simBin is one lifecyclesim binary under measurement.
type simBin struct {
	name, path, version string
}

// parseSims reads -sims ("old=/a,new=/b"); empty means the -sim binary alone.
func parseSims(sims, sim string) ([]simBin, error) {
	if strings.TrimSpace(sims) == "" {
		sims = "lifecyclesim=" + sim
	}
	var out []simBin
	for _, f := range names(sims) {
		name, path, ok := strings.Cut(f, "=")
		if !ok {
			name, path = filepath.Base(f), f
		}
		name, path = strings.TrimSpace(name), strings.TrimSpace(path)
		if name == "" || path == "" {
			return nil, fmt.Errorf("-sims entry %q: want name=path", f)
		}
		if slices.ContainsFunc(out, func(b simBin) bool { return b.name == name }) {
			return nil, fmt.Errorf("-sims: %q twice", name)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("-sims %s: %w", name, err)
		}
		out = append(out, simBin{name: name, path: abs, version: binVersion(abs)})
	}
	return out, nil
}

// binVersion is what `lifecyclesim version` prints (the commit it was built from).
func binVersion(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, path, "version").Output()
	if err != nil {
		return "version unknown"
	}
	return strings.TrimSpace(string(b))
}

// relAPI is one relations server's HTTP API. Its client (c) reads and checks as tenant
// "bench"; what is timed is sent raw (call, waitRest), with each caller's token.
type relAPI struct {
	base string
	hc   *http.Client
	c    *client.Client
}

func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}}
}

// call sends one request as the holder of token; body, when not nil, is sent as JSON.
func (a *relAPI) call(ctx context.Context, token, method, path string, body any) (int, []byte, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	return send(ctx, a.hc, method, a.base+path, bearer(token), b, true)
}

// object decodes an answer that must have one of the statuses want.
func object(what string, status int, b []byte, err error, want ...int) (*client.Object, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !slices.Contains(want, status) {
		return nil, statusError(what, status, b)
	}
	var o client.Object
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &o, nil
}

// kind reads a kind as the server serves it.
func (a *relAPI) kind(ctx context.Context, name string) (*kindJSON, error) {
	status, b, err := a.call(ctx, benchToken, http.MethodGet, "/v1/kinds/"+name, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, statusError("GET /v1/kinds/"+name, status, b)
	}
	var k kindJSON
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("kind %s: %w", name, err)
	}
	return &k, nil
}

// actionSpec is how long an action of a kind takes by the phases the server serves, at
// timeScale.
func (a *relAPI) actionSpec(ctx context.Context, kind, action string, timeScale float64) (time.Duration, error) {
	k, err := a.kind(ctx, kind)
	if err != nil {
		return 0, err
	}
	d, err := k.actionTime(action)
	return scaled(d, timeScale), err
}

// errNotDone is a wait that reached its deadline.
var errNotDone = errors.New("not done")

// waitRest long-polls (GET ?wait=static) until the object rests in a static state or is gone,
// or until deadline (errNotDone, with the last object seen). A swamped server's transport
// errors and 429/503 answers are retried until the deadline.
func (a *relAPI) waitRest(ctx context.Context, token, collection, id string, deadline time.Time) (*client.Object, bool, error) {
	var last *client.Object
	for {
		rem := time.Until(deadline)
		if rem <= 0 {
			return last, false, errNotDone
		}
		poll := min(rem, 25*time.Second)
		rctx, cancel := context.WithTimeout(ctx, poll+20*time.Second)
		status, b, err := send(rctx, a.hc, http.MethodGet,
			fmt.Sprintf("%s/v1/%s/%s?wait=static&timeout=%dms", a.base, collection, id, max(poll.Milliseconds(), 1)), bearer(token), nil, true)
		cancel()
		if ctx.Err() != nil {
			return last, false, ctx.Err()
		}
		switch {
		case err != nil, status == http.StatusTooManyRequests, status == http.StatusServiceUnavailable:
			sleepCtx(ctx, 100*time.Millisecond)
		case status == http.StatusNotFound:
			return last, true, nil
		case status == http.StatusOK:
			var o client.Object
			if err := json.Unmarshal(b, &o); err != nil {
				return last, false, err
			}
			last = &o
			if o.Static {
				return last, false, nil
			}
		default:
			return last, false, statusError("GET "+collection+"/"+id+"?wait=static", status, b)
		}
	}
}

// vmCounts are an MCI's VMs in one state and in all, from its status_count (CB-Tumblebug's
// aggregate), or else by listing its VMs.
func (a *relAPI) vmCounts(ctx context.Context, mciID, state string) (inState, total int, mciState string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	o, err := a.c.Get(ctx, "mcis", mciID)
	if client.IsNotFound(err) {
		return 0, 0, "gone", nil
	}
	if err != nil {
		return 0, 0, "", err
	}
	if sc, ok := o.Status["status_count"].(map[string]any); ok {
		n, ok1 := sc["count_"+strings.ToLower(state)].(float64)
		t, ok2 := sc["count_total"].(float64)
		if ok1 && ok2 {
			return int(n), int(t), o.State + " (its status_count)", nil
		}
	}
	vms, err := a.c.ListAll(ctx, "vms", client.ListOptions{ParentID: mciID})
	if err != nil {
		return 0, 0, "", err
	}
	for _, v := range vms {
		if v.State == state {
			inState++
		}
	}
	return inState, len(vms), o.State + " (its VMs listed)", nil
}

// progress says how far an MCI got towards its VMs resting in state.
func (a *relAPI) progress(ctx context.Context, mciID, state string, want int) string {
	n, total, st, err := a.vmCounts(ctx, mciID, state)
	switch {
	case err != nil:
		return "progress unknown (" + err.Error() + ")"
	case st == "gone":
		return "the MCI is gone"
	}
	return fmt.Sprintf("%s of %s VMs %s (want %s), the MCI %s", thousands(int64(n)), thousands(int64(total)), state, thousands(int64(want)), st)
}

// relServer is one fresh lifecyclesim of the relations mode.
type relServer struct {
	srv  *server
	api  *relAPI
	tree []int
	db   string // the SQLite file, removed with its journal files at the end
	// clock is the server's clock once started: the simulated time and the time scale in force.
	clock *client.ClockState
}

// startRel starts bin on store with two tenants and an admin token, and reads its clock.
func startRel(ctx context.Context, cfg *config, bin simBin, store, logName string) (*relServer, error) {
	args, label, err := storeArgs(store, cfg.workdir)
	if err != nil {
		return nil, err
	}
	db := ""
	if store == "sqlite" {
		db = args[1]
	}
	args = append(args, "--token", "bench="+benchToken, "--token", "other="+otherToken, "--admin-token", adminToken)
	srv, api, err := launchSim(ctx, cfg, bin.path, bin.name+" "+label, args, cfg.timeScale, filepath.Join(cfg.workdir, logName+".log"))
	if err != nil {
		return nil, err
	}
	rs := &relServer{srv: srv, api: &relAPI{base: api.base, hc: api.hc}, tree: procTree(srv.pid()), db: db}
	rs.api.c, err = client.New(client.Config{Endpoint: api.base, Token: benchToken, UserAgent: "benchcompare"})
	if err == nil {
		rs.clock, err = rs.api.c.Clock(ctx)
	}
	if err != nil {
		rs.stop()
		return nil, err
	}
	return rs, nil
}

// stop ends the server and removes its SQLite files.
func (r *relServer) stop() {
	r.srv.stop()
	if r.db != "" {
		files, _ := filepath.Glob(r.db + "*")
		for _, f := range files {
			_ = os.Remove(f)
		}
	}
}

// relKey names one MCI series: a binary, a store, a layout and a size.
type relKey struct {
	sim, store, layout string
	size               int
}

// opRun is one measured MCI operation.
type opRun struct {
	op     string
	moved  int // VMs the operation makes, moves or ends
	limit  physLimit
	wall   time.Duration
	cpu    time.Duration // the server's CPU time over the operation
	others float64       // CPUs other processes used meanwhile
	done   bool
	note   string // why not done
}

// cpuPerVM is the server's CPU time per VM moved, in µs.
func (r opRun) cpuPerVM() float64 {
	if r.moved == 0 {
		return 0
	}
	return float64(r.cpu.Microseconds()) / float64(r.moved)
}

// mciRun is one MCI through its operations on a fresh server.
type mciRun struct {
	round  int
	layout string // where the VMs were
	ops    []opRun
	note   string // why it stopped early, or why it did not run
}

// done reports whether every operation finished.
func (m mciRun) done() bool {
	if m.note != "" {
		return false
	}
	for _, o := range m.ops {
		if !o.done {
			return false
		}
	}
	return len(m.ops) > 0
}

// mciStep is one operation of an MCI run.
type mciStep struct {
	op     mciOp
	moved  map[place]int // the VMs it moves, per place
	target string        // the MCI's state after it; "" for gone
	want   int           // VMs in target after it
	send   func(ctx context.Context, id string) (int, []byte, error)
	ok     []int // the statuses that accept it
}

// runMCI takes one MCI of size VMs in layout through create, suspend, resume, scale out and
// in (or in and out when the MCI cannot grow by a tenth), terminate and delete, on a fresh
// server. An operation not done within cfg.opTimeout ends the run with how far it got.
func runMCI(ctx context.Context, cfg *config, bin simBin, store, layout string, size, round int) (mciRun, error) {
	run := mciRun{round: round}
	rs, err := startRel(ctx, cfg, bin, store, fmt.Sprintf("relations-%s-%s-%s-%d-r%d", bin.name, store, layout, size, round))
	if err != nil {
		return run, err
	}
	defer rs.stop()
	api := rs.api
	mci, err := api.kind(ctx, "mci")
	if err != nil {
		return run, err
	}
	vm, err := api.kind(ctx, "vm")
	if err != nil {
		return run, err
	}
	sgs, maxCount, err := mciLayout(mci, layout, size)
	if err != nil {
		return run, err
	}
	run.layout = describeLayout(sgs)
	ops := map[string]mciOp{}
	for _, op := range mciOps(mci) {
		ops[op.name] = op
	}
	act := func(action string) func(ctx context.Context, id string) (int, []byte, error) {
		return func(ctx context.Context, id string) (int, []byte, error) {
			return api.call(ctx, benchToken, http.MethodPost, "/v1/mcis/"+id+"/actions/"+action, map[string]any{})
		}
	}
	patch := func(to []subgroup) func(ctx context.Context, id string) (int, []byte, error) {
		return func(ctx context.Context, id string) (int, []byte, error) {
			return api.call(ctx, benchToken, http.MethodPatch, "/v1/mcis/"+id, client.PatchRequest{Spec: map[string]any{"subgroups": to}})
		}
	}
	accepted := []int{http.StatusOK, http.StatusAccepted}
	steps := []mciStep{
		{op: ops["create"], moved: perPlace(sgs), target: "Running", want: size, ok: []int{http.StatusCreated, http.StatusAccepted},
			send: func(ctx context.Context, _ string) (int, []byte, error) {
				return api.call(ctx, benchToken, http.MethodPost, "/v1/mcis", client.CreateRequest{Name: "bench", Spec: map[string]any{"subgroups": sgs}})
			}},
		{op: ops["suspend"], moved: perPlace(sgs), target: "Suspended", want: size, ok: accepted, send: act("suspend")},
		{op: ops["resume"], moved: perPlace(sgs), target: "Running", want: size, ok: accepted, send: act("resume")},
	}
	delta := max(1, size/10)
	if up, ok := resized(sgs, delta, maxCount); ok {
		steps = append(steps,
			mciStep{op: ops["scale out"], moved: diffPlaces(sgs, up), target: "Running", want: size + delta, ok: accepted, send: patch(up)},
			mciStep{op: ops["scale in"], moved: diffPlaces(up, sgs), target: "Running", want: size, ok: accepted, send: patch(sgs)})
	} else if down, ok := resized(sgs, -delta, maxCount); ok {
		// The MCI holds as many VMs as its spec allows: it shrinks by a tenth and grows back.
		steps = append(steps,
			mciStep{op: ops["scale in"], moved: diffPlaces(sgs, down), target: "Running", want: size - delta, ok: accepted, send: patch(down)},
			mciStep{op: ops["scale out"], moved: diffPlaces(down, sgs), target: "Running", want: size, ok: accepted, send: patch(sgs)})
	}
	steps = append(steps, mciStep{op: ops["terminate+delete"], moved: perPlace(sgs), ok: []int{http.StatusAccepted, http.StatusNoContent},
		send: func(ctx context.Context, id string) (int, []byte, error) {
			return api.call(ctx, benchToken, http.MethodDelete, "/v1/mcis/"+id, nil)
		}})
	mine := append(slices.Clone(rs.tree), os.Getpid())
	var id string
	for _, st := range steps {
		r := opRun{op: st.op.name, moved: vmTotal(st.moved)}
		if r.limit, err = computeLimit(mci, vm, st.op, st.moved, rs.clock.TimeScale); err != nil {
			return run, err
		}
		waitIdle(ctx, []int{rs.srv.pid()}, 15*time.Second)
		cpu0, oth0 := sampleCPU(rs.tree), sampleOthers(mine)
		t0 := time.Now()
		deadline := t0.Add(cfg.opTimeout)
		sctx, cancel := context.WithDeadline(ctx, deadline)
		status, b, err := st.send(sctx, id)
		cancel()
		var o *client.Object
		gone := status == http.StatusNoContent
		switch {
		case ctx.Err() != nil:
			return run, ctx.Err()
		case err != nil || !slices.Contains(st.ok, status):
			if err == nil {
				err = statusError(st.op.name, status, b)
			}
			r.note = "refused: " + err.Error()
		case id == "":
			o, err = object("create", status, b, nil, st.ok...)
			if err != nil {
				r.note = err.Error()
				break
			}
			id = o.ID
			fallthrough
		default:
			if !gone {
				o, gone, err = api.waitRest(ctx, benchToken, "mcis", id, deadline)
			}
		}
		r.wall = time.Since(t0)
		cpu1, oth1 := sampleCPU(rs.tree), sampleOthers(mine)
		r.cpu = cpuBetween(cpu0, cpu1)
		r.others = oth1.since(oth0).Seconds() / r.wall.Seconds()
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
		if r.note == "" {
			r.done, r.note = judge(ctx, api, cfg, id, st, o, gone, err)
		}
		run.ops = append(run.ops, r)
		progress("%s %s %s %s VMs round %d: %-16s %s%s", bin.name, store, layout, thousands(int64(size)), round, st.op.name,
			fmtWall(r.wall), map[bool]string{true: "", false: "  " + r.note}[r.done])
		if !r.done {
			run.note = fmt.Sprintf("stopped at %s", st.op.name)
			break
		}
	}
	return run, nil
}

// judge says whether a step is done: the MCI rests in the target state with every VM there
// (or is gone), and otherwise how far it got.
func judge(ctx context.Context, api *relAPI, cfg *config, id string, st mciStep, o *client.Object, gone bool, err error) (bool, string) {
	vmState := st.target
	if vmState == "" {
		vmState = "Terminated"
	}
	switch {
	case errors.Is(err, errNotDone):
		return false, fmt.Sprintf("not done after %v: %s", cfg.opTimeout, api.progress(ctx, id, vmState, st.want))
	case err != nil:
		return false, err.Error()
	case st.target == "" && gone:
		// Its VMs go with it (cascade).
		if l, err := api.c.List(ctx, "vms", client.ListOptions{ParentID: id, Limit: 1}); err == nil && len(l.Items) > 0 {
			return false, fmt.Sprintf("the MCI is gone, but VM %s is still there (%s)", l.Items[0].ID, l.Items[0].State)
		}
		return true, ""
	case st.target == "":
		return false, fmt.Sprintf("the MCI rests in %s, not gone", o.State)
	case gone:
		return false, "the MCI is gone"
	case o.State != st.target:
		return false, fmt.Sprintf("the MCI rests in %s, not %s: %s", o.State, st.target, api.progress(ctx, id, st.target, st.want))
	}
	if n, total, _, err := api.vmCounts(ctx, id, st.target); err == nil && (n != st.want || total != st.want) {
		return false, fmt.Sprintf("the MCI rests in %s with %s of %s VMs %s, want %s", o.State, thousands(int64(n)), thousands(int64(total)), st.target, thousands(int64(st.want)))
	}
	return true, ""
}

// tenantRun is one series of another tenant's deploys during a large MCI create.
type tenantRun struct {
	round       int
	vms         int
	asked       int             // deploys asked for (0: the run did not happen)
	lat         []time.Duration // each landed deploy, from the request to DEPLOYED
	askedDuring []bool          // per deploy asked for: whether the MCI was still creating then
	during      []bool          // per landed deploy: whether the MCI was still creating then
	spec        time.Duration   // a cloudspace deploy per the spec, time-scaled
	failed      time.Duration   // how long the deploy that did not land was waited for
	mciAt       string          // how far the MCI got by the last deploy
	note        string
}

// runTenant starts an MCI create of cfg.tenantVMs VMs as tenant "bench" and, as soon as it
// is accepted, deploys cfg.tenantDeploys cloudspaces one after the other as tenant "other",
// each timed from its request to its landing (one POST ?wait=static, answered when it is
// DEPLOYED). The MCI is not waited for: the server is stopped after the deploys.
func runTenant(ctx context.Context, cfg *config, bin simBin, store string, round int) (tenantRun, error) {
	run := tenantRun{round: round, vms: cfg.tenantVMs}
	rs, err := startRel(ctx, cfg, bin, store, fmt.Sprintf("tenant-%s-%s-r%d", bin.name, store, round))
	if err != nil {
		return run, err
	}
	defer rs.stop()
	api := rs.api
	mci, err := api.kind(ctx, "mci")
	if err != nil {
		return run, err
	}
	if run.spec, err = api.actionSpec(ctx, "cloudspace", "create", rs.clock.TimeScale); err != nil {
		return run, err
	}
	sgs, _, err := mciLayout(mci, "spread", cfg.tenantVMs)
	if err != nil {
		return run, err
	}
	status, b, err := api.call(ctx, otherToken, http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "other"})
	acct, err := object("create account", status, b, err, http.StatusCreated, http.StatusAccepted)
	if err != nil {
		return run, err
	}
	if _, _, err := api.waitRest(ctx, otherToken, "accounts", acct.ID, time.Now().Add(time.Minute)); err != nil {
		return run, fmt.Errorf("account: %w", err)
	}
	status, b, err = api.call(ctx, benchToken, http.MethodPost, "/v1/mcis", client.CreateRequest{Name: "bench", Spec: map[string]any{"subgroups": sgs}})
	m, err := object("create mci", status, b, err, http.StatusCreated, http.StatusAccepted)
	if err != nil {
		return run, err
	}
	// When the MCI came to rest, as a long-poll beside the deploys tells (zero: not by the end).
	staticAt := make(chan time.Time, 1)
	wctx, stopWait := context.WithCancel(ctx)
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		if _, _, err := api.waitRest(wctx, benchToken, "mcis", m.ID, time.Now().Add(cfg.opTimeout)); err == nil {
			staticAt <- time.Now()
		}
	}()
	// A deploy is waited for at most 45 s: the server holds a wait for at most 60 s, and the
	// HTTP client gives up after 60 s.
	perDeploy := min(cfg.opTimeout, 45*time.Second)
	var asked, landed []time.Time
	for i := range cfg.tenantDeploys {
		run.asked++
		t0 := time.Now()
		asked = append(asked, t0)
		dctx, cancel := context.WithTimeout(ctx, perDeploy+10*time.Second)
		status, b, err := send(dctx, api.hc, http.MethodPost, fmt.Sprintf("%s/v1/cloudspaces?wait=static&timeout=%dms", api.base, perDeploy.Milliseconds()),
			bearer(otherToken), fmt.Appendf(nil, `{"name":"other-%d","parent_id":%q}`, i, acct.ID), true)
		cancel()
		t1 := time.Now()
		if ctx.Err() != nil {
			stopWait()
			<-waited
			return run, ctx.Err()
		}
		if note := deployLanded(status, b, err); note != "" {
			run.note = fmt.Sprintf("deploy %d: %s after %s", i+1, note, fmtWall(t1.Sub(t0)))
			run.failed = t1.Sub(t0)
			break
		}
		run.lat = append(run.lat, t1.Sub(t0))
		landed = append(landed, t1)
		progress("%s %s tenant round %d: deploy %d landed in %s", bin.name, store, round, i+1, fmtDur(t1.Sub(t0)))
	}
	var rested time.Time
	select {
	case rested = <-staticAt:
	default:
	}
	stopWait()
	<-waited
	for _, t := range asked {
		run.askedDuring = append(run.askedDuring, rested.IsZero() || t.Before(rested))
	}
	for _, t := range landed {
		run.during = append(run.during, rested.IsZero() || t.Before(rested))
	}
	run.mciAt = api.progress(ctx, m.ID, "Running", cfg.tenantVMs)
	return run, nil
}

// deployLanded checks the answer of POST ?wait=static: its last line is the object, static
// in DEPLOYED. It returns what went wrong, or "".
func deployLanded(status int, b []byte, err error) string {
	if err != nil {
		return err.Error()
	}
	if status != http.StatusCreated && status != http.StatusAccepted {
		return statusError("deploy", status, b).Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var o client.Object
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &o); err != nil {
		return "answer: " + err.Error()
	}
	switch {
	case o.ID == "":
		return "not landed: " + lines[len(lines)-1]
	case !o.Static || o.State != "DEPLOYED":
		return fmt.Sprintf("not landed: %s (static %v)", o.State, o.Static)
	}
	return ""
}

// timerRun is one set of leases whose start timers fire together.
type timerRun struct {
	round     int
	leases    int
	create    time.Duration // creating them (until none is CREATING)
	idle      []time.Duration
	firing    []time.Duration
	allActive time.Duration // from the clock advance until none is PENDING or STARTING
	active    int
	spec      time.Duration // a lease's start per the spec, time-scaled
	note      string
}

// runTimers creates cfg.leases Blazar leases starting at the same instant an hour ahead,
// measures a GET of an unrelated object from cfg.timerClients clients while idle, then advances
// the simulated clock past the start in one move and measures the same GET while the timers
// fire, until no lease is PENDING or STARTING.
func runTimers(ctx context.Context, cfg *config, bin simBin, store string, round int) (timerRun, error) {
	run := timerRun{round: round, leases: cfg.leases}
	rs, err := startRel(ctx, cfg, bin, store, fmt.Sprintf("timers-%s-%s-r%d", bin.name, store, round))
	if err != nil {
		return run, err
	}
	defer rs.stop()
	api := rs.api
	if run.spec, err = api.actionSpec(ctx, "lease", "start", rs.clock.TimeScale); err != nil {
		return run, err
	}
	start := rs.clock.Now.Add(time.Hour).Truncate(time.Second)
	end := start.Add(24 * time.Hour)
	status, b, err := api.call(ctx, benchToken, http.MethodPost, "/v1/accounts", client.CreateRequest{Name: "probe"})
	probe, err := object("create account", status, b, err, http.StatusCreated, http.StatusAccepted)
	if err != nil {
		return run, err
	}
	t0 := time.Now()
	cctx, cancel := context.WithTimeout(ctx, cfg.opTimeout)
	defer cancel()
	spec := map[string]any{"start_date": start.Format(time.RFC3339), "end_date": end.Format(time.RFC3339)}
	err = parallel(cctx, cfg.leases, 16, func(ctx context.Context, i int) error {
		status, b, err := api.call(ctx, benchToken, http.MethodPost, "/v1/leases", client.CreateRequest{Name: "lease-" + strconv.Itoa(i), Spec: spec})
		_, err = object("create lease", status, b, err, http.StatusCreated, http.StatusAccepted)
		return err
	})
	if err == nil {
		err = settle(cctx, api.c, "leases", "CREATING")
	}
	run.create = time.Since(t0)
	if ctx.Err() != nil {
		return run, ctx.Err()
	}
	if err != nil {
		run.note = fmt.Sprintf("creating the leases: %v (after %v)", err, run.create.Round(time.Millisecond))
		return run, nil
	}
	progress("%s %s timers round %d: %s leases created in %v", bin.name, store, round, thousands(int64(cfg.leases)), run.create.Round(time.Millisecond))
	get := func(ctx context.Context) (time.Duration, bool) {
		t := time.Now()
		status, _, err := send(ctx, api.hc, http.MethodGet, api.base+"/v1/accounts/"+probe.ID, bearer(benchToken), nil, false)
		return time.Since(t), err == nil && status == http.StatusOK
	}
	waitIdle(ctx, []int{rs.srv.pid()}, 15*time.Second)
	run.idle = getLoop(ctx, cfg.timerClients, get, time.Second)
	// The GETs run from before the advance until the last timer landed.
	fctx, stop := context.WithCancel(ctx)
	firing := make(chan []time.Duration, 1)
	go func() { firing <- getLoop(fctx, cfg.timerClients, get, cfg.opTimeout+time.Minute) }()
	t0 = time.Now()
	status, b, err = send(ctx, api.hc, http.MethodPost, api.base+"/v1/sim/clock", bearer(adminToken), []byte(`{"advance":"1h1m"}`), true)
	if err == nil && status != http.StatusOK {
		err = statusError("advance the clock", status, b)
	}
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, cfg.opTimeout)
		err = settle(wctx, api.c, "leases", "PENDING", "STARTING")
		cancel()
	}
	run.allActive = time.Since(t0)
	stop()
	run.firing = <-firing
	if ctx.Err() != nil {
		return run, ctx.Err()
	}
	if err != nil {
		run.note = fmt.Sprintf("not all leases started after %v: %v", run.allActive.Round(time.Millisecond), err)
	}
	cctx2, cancel2 := context.WithTimeout(ctx, time.Minute)
	defer cancel2()
	active, err := api.c.ListAll(cctx2, "leases", client.ListOptions{State: "ACTIVE"})
	if err != nil && run.note == "" {
		run.note = "counting ACTIVE leases: " + err.Error()
	}
	run.active = len(active)
	if run.note == "" && run.active != run.leases {
		run.note = fmt.Sprintf("%s of %s leases ACTIVE once none was PENDING or STARTING", thousands(int64(run.active)), thousands(int64(run.leases)))
	}
	progress("%s %s timers round %d: all started after %s, %s ACTIVE", bin.name, store, round, fmtWall(run.allActive), thousands(int64(run.active)))
	return run, nil
}

// getLoop runs get from clients clients back to back for d (or until ctx ends) and returns
// the sorted latencies of the successful ones.
func getLoop(ctx context.Context, clients int, get func(context.Context) (time.Duration, bool), d time.Duration) []time.Duration {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	lat := make([][]time.Duration, clients)
	done := make(chan struct{})
	for c := range clients {
		go func() {
			defer func() { done <- struct{}{} }()
			for ctx.Err() == nil {
				if l, ok := get(ctx); ok && ctx.Err() == nil {
					lat[c] = append(lat[c], l)
				}
			}
		}()
	}
	for range clients {
		<-done
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

// relResults is everything a relations run measured.
type relResults struct {
	rounds  int    // rounds run
	cut     string // why the later rounds were not run
	sims    []simBin
	stores  []string
	layouts []string
	sizes   []int
	mcis    map[relKey][]mciRun
	tenants map[[2]string][]tenantRun // sim, store
	timers  map[[2]string][]timerRun
}

func runRelations(ctx context.Context, cfg *config, out, raw io.Writer) error {
	sizes, err := intList(cfg.vms)
	if err != nil {
		return fmt.Errorf("-vms: %w", err)
	}
	slices.Sort(sizes)
	sims, err := parseSims(cfg.sims, cfg.sim)
	if err != nil {
		return err
	}
	parts := names(cfg.parts)
	for _, p := range parts {
		if p != "mci" && p != "tenant" && p != "timers" {
			return fmt.Errorf("-parts %q: want mci, tenant and/or timers", p)
		}
	}
	layouts := names(cfg.layouts)
	for _, l := range layouts {
		if l != "spread" && l != "single" {
			return fmt.Errorf("-layout %q: want spread and/or single", l)
		}
	}
	stores := names(cfg.stores)
	for _, s := range stores {
		if _, _, err := storeArgs(s, cfg.workdir); err != nil {
			return fmt.Errorf("-stores: %w", err)
		}
	}
	if cfg.rounds < 1 || cfg.opTimeout <= 0 || cfg.tenantDeploys < 1 || cfg.leases < 1 || cfg.timerClients < 1 || cfg.tenantVMs < 1 {
		return errors.New("-rounds, -op-timeout, -tenant-deploys, -tenant-vms, -leases and -timer-clients must be positive")
	}
	var fs *fsyncResult
	if slices.Contains(stores, "sqlite") {
		r, err := measureFsync(cfg.workdir, cfg.fsyncN)
		if err != nil {
			return fmt.Errorf("fsync measurement: %w", err)
		}
		fs = &r
	}
	res := &relResults{sims: sims, stores: stores, layouts: layouts, sizes: sizes,
		mcis: map[relKey][]mciRun{}, tenants: map[[2]string][]tenantRun{}, timers: map[[2]string][]timerRun{}}
	fmt.Fprintf(raw, "# benchcompare -mode relations %s\n", cfg.label)
	for _, s := range sims {
		fmt.Fprintf(raw, "# sim %s = %s (%s)\n", s.name, s.path, s.version)
	}
	fmt.Fprintf(raw, "# time_scale=%g op_timeout=%v rounds=%d sim_args=%q\n", cfg.timeScale, cfg.opTimeout, cfg.rounds, cfg.simArgs)
	fmt.Fprintln(raw, "# mci\tsim\tstore\tlayout\tvms\tround\top\tmoved\twaves\tvm_action_us\tmci_own_us\tmci_after_us\tlimit_us\twall_us\tserver_cpu_us\tdone\tother_processes_cpus\tnote")
	fmt.Fprintln(raw, "# tenant\tsim\tstore\tmci_vms\tround\tdeploy\tspec_us\tlatency_us\tasked_during_create\tlanded_during_create")
	fmt.Fprintln(raw, "# timers\tsim\tstore\tleases\tround\tcreate_us\tstart_spec_us\tall_started_us\tactive\tidle_n\tidle_p50_us\tidle_p99_us\tidle_max_us\tfiring_n\tfiring_p50_us\tfiring_p99_us\tfiring_max_us\tnote")
	begin := time.Now()
	// A series with an operation not done is not run again in later rounds; one whose create
	// was not done is not run at larger sizes either (they would not be done sooner).
	stuck := map[relKey]string{}
	type createNotDone struct {
		size int
		why  string
	}
	tooLarge := map[relKey]createNotDone{} // per series (size 0): the smallest create not done
	tenantStuck := map[[2]string]string{}
	var lastRound time.Duration
	for round := 1; round <= cfg.rounds; round++ {
		if round > 1 && cfg.budget > 0 && time.Since(begin)+lastRound > cfg.budget {
			res.cut = fmt.Sprintf("Rounds %d to %d were not run: round %d took %v, and one more would have ended past -budget %v.",
				round, cfg.rounds, round-1, lastRound.Round(time.Second), cfg.budget)
			progress("%s", res.cut)
			break
		}
		roundStart := time.Now()
		res.rounds = round
		if slices.Contains(parts, "mci") {
			for _, size := range sizes {
				for _, layout := range layouts {
					for _, store := range stores {
						for _, sim := range sims {
							key := relKey{sim.name, store, layout, size}
							series := relKey{sim.name, store, layout, 0}
							why := stuck[key]
							if prev, ok := tooLarge[series]; ok && why == "" && size > prev.size {
								why = prev.why
							}
							if why != "" {
								res.mcis[key] = append(res.mcis[key], mciRun{round: round, note: why})
								continue
							}
							run, err := runMCI(ctx, cfg, sim, store, layout, size, round)
							if err != nil {
								return fmt.Errorf("%s %s %s %d VMs: %w", sim.name, store, layout, size, err)
							}
							res.mcis[key] = append(res.mcis[key], run)
							writeMCIRaw(raw, key, run)
							if !run.done() {
								stuck[key] = fmt.Sprintf("not run: round %d %s", run.round, run.note)
								if len(run.ops) > 0 && run.ops[0].op == "create" && !run.ops[0].done {
									if prev, ok := tooLarge[series]; !ok || size < prev.size {
										tooLarge[series] = createNotDone{size, fmt.Sprintf("not run: the %s-VM create was not done in round %d", thousands(int64(size)), round)}
									}
								}
							}
						}
					}
				}
			}
		}
		if slices.Contains(parts, "tenant") {
			for _, store := range stores {
				for _, sim := range sims {
					key := [2]string{sim.name, store}
					if why := tenantStuck[key]; why != "" {
						res.tenants[key] = append(res.tenants[key], tenantRun{round: round, vms: cfg.tenantVMs, note: why})
						continue
					}
					run, err := runTenant(ctx, cfg, sim, store, round)
					if err != nil {
						return fmt.Errorf("%s %s tenant: %w", sim.name, store, err)
					}
					res.tenants[key] = append(res.tenants[key], run)
					for i, l := range run.lat {
						fmt.Fprintf(raw, "tenant\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%v\t%v\n", sim.name, store, run.vms, round, i+1,
							run.spec.Microseconds(), l.Microseconds(), run.askedDuring[i], run.during[i])
					}
					if run.note != "" {
						fmt.Fprintf(raw, "# tenant %s %s round %d: %s\n", sim.name, store, round, run.note)
						tenantStuck[key] = fmt.Sprintf("not run: round %d %s", round, run.note)
					}
				}
			}
		}
		if slices.Contains(parts, "timers") {
			for _, store := range stores {
				for _, sim := range sims {
					run, err := runTimers(ctx, cfg, sim, store, round)
					if err != nil {
						return fmt.Errorf("%s %s timers: %w", sim.name, store, err)
					}
					key := [2]string{sim.name, store}
					res.timers[key] = append(res.timers[key], run)
					q := func(l []time.Duration, p float64) int64 { return percentile(l, p).Microseconds() }
					fmt.Fprintf(raw, "timers\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n",
						sim.name, store, run.leases, round, run.create.Microseconds(), run.spec.Microseconds(), run.allActive.Microseconds(), run.active,
						len(run.idle), q(run.idle, 50), q(run.idle, 99), q(run.idle, 100),
						len(run.firing), q(run.firing, 50), q(run.firing, 99), q(run.firing, 100), run.note)
				}
			}
		}
		lastRound = time.Since(roundStart)
	}
	progress("relations done in %v", time.Since(begin).Round(time.Second))
	writeRelationsReport(out, cfg, fs, parts, res)
	return nil
}

func writeMCIRaw(raw io.Writer, k relKey, run mciRun) {
	for _, o := range run.ops {
		fmt.Fprintf(raw, "mci\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%v\t%.2f\t%s\n", k.sim, k.store, k.layout, k.size, run.round,
			strings.ReplaceAll(o.op, " ", "_"), o.moved, o.limit.waves, o.limit.vmAction.Microseconds(), o.limit.mciOwn.Microseconds(),
			o.limit.mciAfter.Microseconds(), o.limit.total().Microseconds(), o.wall.Microseconds(), o.cpu.Microseconds(), o.done, o.others, o.note)
	}
	if run.note != "" {
		fmt.Fprintf(raw, "# %s %s %s %d round %d: %s\n", k.sim, k.store, k.layout, k.size, run.round, run.note)
	}
}
