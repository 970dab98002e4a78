package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// simAPI talks to one lifecyclesim over its public HTTP API only: the simulator's internals
// are being rewritten, and the benchmark must keep measuring across that.
type simAPI struct {
	base string
	hc   *http.Client
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// simObject is the part of an object the benchmark reads.
type simObject struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// create POSTs an object and returns it as answered (not waiting for its transition).
func (a *simAPI) create(ctx context.Context, collection, name, parent string, spec map[string]any) (simObject, error) {
	body, err := json.Marshal(map[string]any{"name": name, "parent_id": parent, "spec": spec})
	if err != nil {
		return simObject{}, err
	}
	status, b, err := send(ctx, a.hc, http.MethodPost, a.base+"/v1/"+collection, jsonHeader, body, true)
	if err != nil {
		return simObject{}, err
	}
	if status != http.StatusCreated && status != http.StatusAccepted {
		return simObject{}, statusError("create "+collection, status, b)
	}
	var o simObject
	return o, json.Unmarshal(b, &o)
}

// waitStatic long-polls an object until it rests in a static state.
func (a *simAPI) waitStatic(ctx context.Context, collection, id string) (simObject, error) {
	status, b, err := send(ctx, a.hc, http.MethodGet, a.base+"/v1/"+collection+"/"+id+"?wait=static&timeout=30s", nil, nil, true)
	if err != nil {
		return simObject{}, err
	}
	if status != http.StatusOK {
		return simObject{}, statusError("wait for "+id, status, b)
	}
	var o simObject
	return o, json.Unmarshal(b, &o)
}

// createStatic creates an object and waits until it rests in want.
func (a *simAPI) createStatic(ctx context.Context, collection, name, parent string, spec map[string]any, want string) (string, error) {
	o, err := a.create(ctx, collection, name, parent, spec)
	if err != nil {
		return "", err
	}
	if o, err = a.waitStatic(ctx, collection, o.ID); err != nil {
		return "", err
	}
	if o.State != want {
		return "", fmt.Errorf("%s %s rests in %s, want %s", collection, o.ID, o.State, want)
	}
	return o.ID, nil
}

// act runs an action and waits until the object rests in want.
func (a *simAPI) actStatic(ctx context.Context, collection, id, action, want string) error {
	status, b, err := send(ctx, a.hc, http.MethodPost, a.base+"/v1/"+collection+"/"+id+"/actions/"+action, jsonHeader, []byte("{}"), true)
	if err != nil {
		return err
	}
	if status != http.StatusAccepted {
		return statusError(action+" "+id, status, b)
	}
	o, err := a.waitStatic(ctx, collection, id)
	if err != nil {
		return err
	}
	if o.State != want {
		return fmt.Errorf("%s %s rests in %s after %s, want %s", collection, id, o.State, action, want)
	}
	return nil
}

// settle waits until no object of collection is in one of the transitional states given.
func (a *simAPI) settle(ctx context.Context, collection string, states ...string) error {
	deadline := time.Now().Add(5 * time.Minute)
	for _, st := range states {
		for {
			status, b, err := send(ctx, a.hc, http.MethodGet, a.base+"/v1/"+collection+"?limit=1&state="+st, nil, nil, true)
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return statusError("list "+collection, status, b)
			}
			var l struct {
				Items []simObject `json:"items"`
			}
			if err := json.Unmarshal(b, &l); err != nil {
				return err
			}
			if len(l.Items) == 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s still has objects in %s after 5 minutes", collection, st)
			}
			sleepCtx(ctx, 20*time.Millisecond)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	return nil
}

// kindDurations reads a kind from /v1/kinds/NAME: the duration of its create and of each
// action (the sum of its phases at time scale 1; a phase without one takes the kind's
// default).
func (a *simAPI) kindDurations(ctx context.Context, kind string) (map[string]time.Duration, error) {
	status, b, err := send(ctx, a.hc, http.MethodGet, a.base+"/v1/kinds/"+kind, nil, nil, true)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, statusError("kind "+kind, status, b)
	}
	type phase struct {
		State    string `json:"state"`
		Duration string `json:"duration"`
	}
	type action struct {
		Name string  `json:"name"`
		Via  []phase `json:"via"`
	}
	var k struct {
		DefaultDuration string   `json:"default_duration"`
		Create          action   `json:"create"`
		Actions         []action `json:"actions"`
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, err
	}
	def, err := time.ParseDuration(k.DefaultDuration)
	if err != nil {
		return nil, fmt.Errorf("kind %s: default_duration %q: %w", kind, k.DefaultDuration, err)
	}
	sum := func(a action) (time.Duration, error) {
		var d time.Duration
		for _, p := range a.Via {
			if p.Duration == "" {
				d += def
				continue
			}
			pd, err := time.ParseDuration(p.Duration)
			if err != nil {
				return 0, fmt.Errorf("kind %s, %s: %w", kind, a.Name, err)
			}
			d += pd
		}
		return d, nil
	}
	out := map[string]time.Duration{}
	create := k.Create
	create.Name = "create"
	for _, a := range append([]action{create}, k.Actions...) {
		d, err := sum(a)
		if err != nil {
			return nil, err
		}
		out[a.Name] = d
	}
	return out, nil
}

// simSystem is one lifecyclesim under load in the comparison: each client owns a cloudspace
// (where its creates go) and a pool of RUNNING machines (for GETs and actions).
type simSystem struct {
	pooled
	label string
	api   *simAPI
	image string
	// per client
	cloudspaces []string
	halted      [][]bool // the client's idea of each pool machine's state: flipped on a 202
}

func (s *simSystem) Name() string { return s.label }

// pooled is what every compared system has: its server process, each client's pool of
// objects, and a count of the objects the creates made.
type pooled struct {
	srv     *server
	pools   [][]string
	created atomic.Int64
}

func (p *pooled) PID() int { return p.srv.pid() }
func (p *pooled) Stop()    { p.srv.stop() }

// Objects counts the pools' objects and the objects created since (accepted or not).
func (p *pooled) Objects() int {
	n := int(p.created.Load())
	for _, pool := range p.pools {
		n += len(pool)
	}
	return n
}

// Ops says what each operation sends.
func (s *simSystem) Ops() map[string]string {
	return map[string]string{
		"get":    "GET /v1/machines/{id}, round robin over the client's pool",
		"act":    "POST /v1/machines/{id}/actions/stop or /start, alternating per machine, round robin over the client's pool; 202 counts, 409 busy apart",
		"create": "POST /v1/machines (a machine in the client's DEPLOYED cloudspace, with an image_id); 202 counts",
	}
}

// Prepare makes an account, an image, and per client a cloudspace and pool RUNNING machines.
func (s *simSystem) Prepare(ctx context.Context, clients, pool int) error {
	acct, err := s.api.createStatic(ctx, "accounts", "bench", "", nil, "CONFIRMED")
	if err != nil {
		return err
	}
	if s.image, err = s.api.createStatic(ctx, "images", "bench", "", nil, "CREATED"); err != nil {
		return err
	}
	s.cloudspaces = make([]string, clients)
	err = parallel(ctx, clients, 8, func(ctx context.Context, c int) error {
		id, err := s.api.createStatic(ctx, "cloudspaces", "bench-"+strconv.Itoa(c), acct, nil, "DEPLOYED")
		s.cloudspaces[c] = id
		return err
	})
	if err != nil {
		return err
	}
	s.pools = make([][]string, clients)
	s.halted = make([][]bool, clients)
	for c := range clients {
		s.pools[c] = make([]string, pool)
		s.halted[c] = make([]bool, pool)
	}
	return parallel(ctx, clients*pool, 16, func(ctx context.Context, i int) error {
		c, j := i/pool, i%pool
		id, err := s.api.createStatic(ctx, "machines", fmt.Sprintf("pool-%d-%d", c, j), s.cloudspaces[c],
			map[string]any{"image_id": s.image}, "RUNNING")
		s.pools[c][j] = id
		return err
	})
}

// Request returns the request function of op.
func (s *simSystem) Request(op string) requestFunc {
	base, hc := s.api.base, s.api.hc
	switch op {
	case "get":
		return func(ctx context.Context, c, seq int) outcome {
			p := s.pools[c]
			status, _, err := send(ctx, hc, http.MethodGet, base+"/v1/machines/"+p[seq%len(p)], nil, nil, false)
			return classify(status, err, false)
		}
	case "act":
		body := []byte("{}")
		return func(ctx context.Context, c, seq int) outcome {
			p, h := s.pools[c], s.halted[c]
			i := seq % len(p)
			action := "stop"
			if h[i] {
				action = "start"
			}
			status, _, err := send(ctx, hc, http.MethodPost, base+"/v1/machines/"+p[i]+"/actions/"+action, jsonHeader, body, false)
			if status == http.StatusAccepted {
				h[i] = !h[i]
			}
			return classify(status, err, true)
		}
	case "create":
		return func(ctx context.Context, c, _ int) outcome {
			n := s.created.Add(1)
			body := fmt.Appendf(nil, `{"name":"bench-%d","parent_id":%q,"spec":{"image_id":%q}}`, n, s.cloudspaces[c], s.image)
			status, _, err := send(ctx, hc, http.MethodPost, base+"/v1/machines", jsonHeader, body, false)
			return classify(status, err, false)
		}
	}
	panic("unknown op " + op)
}

// startSim starts lifecyclesim with the given store arguments on a free port.
func startSim(ctx context.Context, cfg *config, label string, storeArgs []string, timeScale float64, logPath string) (*server, *simAPI, error) {
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	argv := []string{cfg.sim, "--addr", addr, "--time-scale", strconv.FormatFloat(timeScale, 'g', -1, 64),
		"--max-objects", "100000000", "--max-conns", "4096"}
	argv = append(argv, storeArgs...)
	argv = append(argv, strings.Fields(cfg.simArgs)...)
	srv, err := startServer(label, cfg.serverCPU, argv, "http://"+addr, logPath, cfg.pidFile)
	if err != nil {
		return nil, nil, err
	}
	api := &simAPI{base: srv.base, hc: newHTTPClient()}
	if err := srv.waitReady(ctx, 30*time.Second, httpCheck(api.hc, srv.base+"/readyz")); err != nil {
		srv.stop()
		return nil, nil, err
	}
	return srv, api, nil
}
