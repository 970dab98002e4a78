package simulator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// casRetries bounds how often an operation re-reads an object after losing a
// compare-and-set race before it gives up with a conflict.
const casRetries = 20

// Options tune an engine.
type Options struct {
	// TimeScale multiplies every phase duration (0.01 makes transitions 100× faster).
	TimeScale float64
	// HealAfter is how long a phase may be stuck (hanging) before self-healing repairs it.
	HealAfter time.Duration
	// Seed seeds the fault RNG.
	Seed uint64
	// Logf, if set, receives worker errors.
	Logf func(format string, args ...any)
	// OnTransition, if set, is told the outcome of every finished operation (for metrics).
	OnTransition func(kind, action, outcome string)
}

// Engine runs the state machines: it accepts actions with an atomic compare-and-set, moves
// phases along when they are due, applies failure rules, heals stuck transitions and wakes
// long-polls.
type Engine struct {
	store  Store
	reg    *lifecycle.Registry
	clock  Clock
	faults *Faults
	hub    hub
	kick   chan struct{}
	onDone func(kind, action, outcome string)
	logf   func(format string, args ...any)

	draining  chan struct{}
	drainOnce sync.Once

	mu        sync.Mutex
	timeScale float64
	healAfter time.Duration

	// objLocks serialise the read-modify-write of one object within this process, so a
	// request that would lose the store's compare-and-set never gets to draw faults (which
	// count firings and consume the seeded RNG). The compare-and-set still guards the rest.
	objLocks [64]sync.Mutex
}

// lockObject locks the object's stripe and returns the unlock.
func (e *Engine) lockObject(id string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	m := &e.objLocks[h.Sum32()%uint32(len(e.objLocks))]
	m.Lock()
	return m.Unlock
}

// NewEngine returns an engine over a store and the kinds of a registry.
func NewEngine(store Store, reg *lifecycle.Registry, clock Clock, opt Options) *Engine {
	if opt.TimeScale <= 0 {
		opt.TimeScale = 1
	}
	if opt.HealAfter <= 0 {
		opt.HealAfter = 10 * time.Minute
	}
	onDone := opt.OnTransition
	if onDone == nil {
		onDone = func(string, string, string) {}
	}
	return &Engine{
		store: store, reg: reg, clock: clock, faults: NewFaults(opt.Seed),
		hub: hub{m: map[string]*watchers{}}, kick: make(chan struct{}, 1), onDone: onDone, logf: opt.Logf, draining: make(chan struct{}),
		timeScale: opt.TimeScale, healAfter: opt.HealAfter,
	}
}

// Faults returns the engine's fault rules.
func (e *Engine) Faults() *Faults { return e.faults }

// Registry returns the kinds the engine serves.
func (e *Engine) Registry() *lifecycle.Registry { return e.reg }

// Clock returns the engine's clock.
func (e *Engine) Clock() Clock { return e.clock }

// Config returns the time scale and heal limit.
func (e *Engine) Config() (float64, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.timeScale, e.healAfter
}

// SetConfig changes the time scale and heal limit for phases started from now on.
func (e *Engine) SetConfig(scale float64, healAfter time.Duration) error {
	if scale <= 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		return errorf(client.CodeInvalid, "time_scale must be a positive number (e.g. 0.01), got %v", scale)
	}
	if healAfter <= 0 {
		return errorf(client.CodeInvalid, "heal_after must be a positive duration (e.g. 10m)")
	}
	e.mu.Lock()
	e.timeScale, e.healAfter = scale, healAfter
	e.mu.Unlock()
	e.Kick()
	return nil
}

func (e *Engine) scaled(d time.Duration) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Duration(float64(d) * e.timeScale)
}

// Kick makes the worker look at due objects now (after a clock advance, say).
func (e *Engine) Kick() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Run drives due phases until ctx ends. Operations accepted before a restart are in the store
// with their due times and resume here.
func (e *Engine) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		tickErr := e.Tick(ctx)
		if tickErr != nil && ctx.Err() == nil && e.logf != nil {
			e.logf("worker: %v (retrying)", tickErr)
		}
		wait := time.Second
		// After an error the failing object is still due: retry in a second, not in a loop.
		if next, ok, err := e.store.NextDue(ctx); err == nil && ok && tickErr == nil {
			wait = min(max(next.Sub(e.clock.Now()), time.Millisecond), time.Second)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-e.kick:
			// Go 1.23+ timers: Reset needs no drain, and draining after a Stop that lost
			// the race with expiry would block for ever.
			timer.Stop()
		case <-timer.C:
		}
	}
}

// Tick advances every object that is due now. Tests call it after moving a manual clock. An
// object that cannot be advanced (its kind is no longer loaded, say) does not hold up the
// others; the errors are returned together.
func (e *Engine) Tick(ctx context.Context) error {
	for range 1000 { // each round may schedule more due work (instant phases)
		due, err := e.store.Due(ctx, e.clock.Now())
		if err != nil {
			return err
		}
		if len(due) == 0 {
			return nil
		}
		var errs []error
		for _, o := range due {
			if err := e.advance(ctx, o); err != nil && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrNotFound) {
				errs = append(errs, fmt.Errorf("%s %s: %w", o.Kind, o.ID, err))
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	return nil
}

func newID(kind string) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return kind + "-" + hex.EncodeToString(b[:])
}

// Create makes an object and starts its create action. With an idempotency key, a retry
// returns the object the first call made.
func (e *Engine) Create(ctx context.Context, tenant string, k *lifecycle.Kind, req client.CreateRequest, key string) (*Object, error) {
	if key != "" {
		// Concurrent retries with one key (a client timing out on a slow first attempt) must
		// make one object: hold the key until it is remembered.
		defer e.lockObject("idempotency\x00" + tenant + "\x00" + key)()
		if id, ok, err := e.store.Idempotent(ctx, tenant, key); err != nil {
			return nil, err
		} else if ok {
			return e.getOrGone(ctx, tenant, id)
		}
	}
	if req.Name == "" {
		return nil, errorf(client.CodeInvalid, "name is required")
	}
	if err := e.checkParent(ctx, tenant, k, &k.Create, req.ParentID, true); err != nil {
		return nil, err
	}
	now := e.clock.Now()
	o := &Object{
		ID: newID(k.Name), Tenant: tenant, Kind: k.Name, Name: req.Name, ParentID: req.ParentID,
		Spec: req.Spec, Status: map[string]any{}, Version: 1, CreatedAt: now, UpdatedAt: now,
	}
	if o.Spec == nil {
		o.Spec = map[string]any{}
	}
	from := k.Initial
	o.State = from
	evs := e.start(o, k, &k.Create, false, now, ActorUser)
	for i := range evs {
		evs[i].ObjectID, evs[i].Tenant = o.ID, o.Tenant
	}
	if err := e.store.Create(ctx, o, evs, key); err != nil {
		return nil, err
	}
	e.changed(o.ID)
	return o, nil
}

// ActorUser is the actor recorded for API callers.
const ActorUser = string(lifecycle.ActorUser)

// start begins action a on o (in memory): the first phase, or the target at once when the
// action has no phases. It returns the events to append.
func (e *Engine) start(o *Object, k *lifecycle.Kind, a *lifecycle.Action, force bool, now time.Time, actor string) []Event {
	from := o.State
	delete(o.Status, "last_error")
	op := &Operation{ID: newID("op"), Action: a.Name, From: from, Force: force, StartedAt: now}
	if len(a.Via) == 0 {
		o.Op = op
		return e.land(o, k, a.Target(from), now, actor, "")
	}
	o.Op = op
	return []Event{e.enterPhase(o, k, a.Via, 0, now, actor)}
}

// enterPhase puts o into phase i of via and schedules its completion, applying slow and hang
// faults.
func (e *Engine) enterPhase(o *Object, k *lifecycle.Kind, via []lifecycle.Phase, i int, now time.Time, actor string) Event {
	p := via[i]
	from := o.State
	o.State = p.State
	o.Op.Phase = i
	o.Op.PhaseStarted = now
	o.Op.Hung = false
	o.StateSince = now
	d := e.scaled(k.PhaseDuration(p))
	if r := e.faults.Match(FaultSlow, o.Tenant, k.Name, o.Op.Action, p.State); r != nil {
		d = time.Duration(float64(d) * r.Factor)
	}
	o.Due = now.Add(d)
	_, heal := e.Config()
	// A phase that hangs, or would take longer than the self-healing limit, is stuck: it is
	// repaired by the kind's failure rule when the limit passes.
	if r := e.faults.Match(FaultHang, o.Tenant, k.Name, o.Op.Action, p.State); r != nil || d >= heal {
		o.Op.Hung = true
		o.Due = now.Add(heal)
	}
	return Event{Time: now, Actor: actor, From: from, To: p.State, Action: o.Op.Action, OperationID: o.Op.ID, Error: o.Op.Error}
}

// land finishes the running operation in a static state.
func (e *Engine) land(o *Object, k *lifecycle.Kind, state string, now time.Time, actor, msg string) []Event {
	ev := Event{Time: now, Actor: actor, From: o.State, To: state, Message: msg}
	if o.Op != nil {
		ev.Action, ev.OperationID, ev.Error = o.Op.Action, o.Op.ID, o.Op.Error
	}
	o.State = state
	o.Op = nil
	o.StateSince = now
	o.Due = e.staticDue(o, k)
	return []Event{ev}
}

// staticDue is when a system or timer action will next start on a static object.
func (e *Engine) staticDue(o *Object, k *lifecycle.Kind) time.Time {
	var due time.Time
	for _, a := range k.AllActions() {
		if ok, _ := a.AllowedFrom(o.State); !ok || a.FromAny {
			continue
		}
		var t time.Time
		switch {
		case a.After > 0:
			// From when it entered the state: a spec change must not postpone it.
			t = o.StateSince.Add(e.scaled(time.Duration(a.After)))
		case a.At != "":
			at, ok := timeField(o.Spec, a.At)
			if !ok {
				continue
			}
			t = at
		default:
			continue
		}
		if due.IsZero() || t.Before(due) {
			due = t
		}
	}
	return due
}

// timeField reads an RFC 3339 time from a spec field.
func timeField(spec map[string]any, field string) (time.Time, bool) {
	s, ok := spec[field].(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// getOrGone reads an object that an idempotent request already made.
func (e *Engine) getOrGone(ctx context.Context, tenant, id string) (*Object, error) {
	o, err := e.store.Get(ctx, tenant, id)
	if errors.Is(err, ErrNotFound) {
		return nil, errorf(client.CodeNotFound, "the object this request created (%s) no longer exists", id)
	}
	return o, err
}

// checkParent enforces the kind's parent rule for action a.
func (e *Engine) checkParent(ctx context.Context, tenant string, k *lifecycle.Kind, a *lifecycle.Action, parentID string, creating bool) error {
	if k.Parent == nil {
		if creating && parentID != "" {
			return errorf(client.CodeInvalid, "%s objects have no parent; remove parent_id", k.Name)
		}
		return nil
	}
	if parentID == "" {
		return errorf(client.CodeInvalid, "%s objects live in a %s: set parent_id to its ID", k.Name, k.Parent.Kind)
	}
	p, err := e.store.Get(ctx, tenant, parentID)
	if errors.Is(err, ErrNotFound) || (err == nil && p.Kind != k.Parent.Kind) {
		if creating {
			return errorf(client.CodeInvalid, "parent %s %q not found", k.Parent.Kind, parentID)
		}
		return nil // the parent is gone: nothing to require
	}
	if err != nil {
		return err
	}
	need := k.RequiredParentStates(a)
	if need == nil || slices.Contains(need, p.State) {
		return nil
	}
	return &Error{
		Code: client.CodeInvalidTransition,
		Message: fmt.Sprintf("%s action %q needs its parent %s %s in state %s, but it is %s; bring the parent there first",
			k.Name, a.Name, k.Parent.Kind, p.ID, orStates(need), p.State),
		Details: client.TransitionDetails{Kind: k.Name, State: p.State, Action: a.Name, Allowed: []string{}},
	}
}

func orStates(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return fmt.Sprintf("%v", xs)
}

// Act runs a user action on an object. It is one compare-and-set: static state and version v
// become the first phase and version v+1; a second action on a busy object gets busy.
func (e *Engine) Act(ctx context.Context, tenant string, k *lifecycle.Kind, id, action string, req client.ActionRequest, key string) (*Object, error) {
	return e.act(ctx, tenant, k, id, action, req, key, false)
}

// act runs an action. deletion marks the action a DELETE request runs: it may be one the
// system drives (a Blazar reservation's release), since the kind declares it as its deletion.
func (e *Engine) act(ctx context.Context, tenant string, k *lifecycle.Kind, id, action string, req client.ActionRequest, key string, deletion bool) (*Object, error) {
	// Locked before the idempotency check, so a retry sent while the first attempt runs
	// finds its key rather than a busy object.
	defer e.lockObject(id)()
	if key != "" {
		if oid, ok, err := e.store.Idempotent(ctx, tenant, "act:"+key); err != nil {
			return nil, err
		} else if ok && oid == id {
			return e.getOrGone(ctx, tenant, id)
		}
	}
	for range casRetries {
		o, err := e.get(ctx, tenant, k, id)
		if err != nil {
			return nil, err
		}
		a, ok := k.Action(action)
		if !ok || (!a.ByUser() && !deletion) {
			return nil, asAPIError(&lifecycle.UnknownActionError{Kind: k.Name, Action: action, Known: userActions(k)})
		}
		if o.Op != nil && a.FromAny && o.Op.Action == action {
			return o, nil // already running: a repeated delete does not start it over
		}
		if o.Op != nil && !a.FromAny {
			return nil, e.busy(o, k)
		}
		if o.Op == nil {
			if a.ByUser() {
				if _, err := k.Check(o.State, action, req.Force); err != nil {
					return nil, asAPIError(err)
				}
			} else if ok, needsForce := a.AllowedFrom(o.State); !ok || needsForce {
				return nil, asAPIError(&lifecycle.InvalidTransitionError{Kind: k.Name, From: o.State, Action: action, Allowed: k.Allowed(o.State, false)})
			}
		}
		if err := e.checkParent(ctx, tenant, k, a, o.ParentID, false); err != nil {
			return nil, err
		}
		now := e.clock.Now()
		prev := o.Version
		var evs []Event
		origin := ""
		if o.Op != nil { // a from-any action (delete) preempts the running one
			e.onDone(k.Name, o.Op.Action, "preempted")
			evs = append(evs, Event{Time: now, Actor: ActorUser, From: o.State, To: o.State, Action: o.Op.Action,
				OperationID: o.Op.ID, Message: "preempted by " + action})
			origin = o.Op.From // a rollback returns to a static state, not to a phase
			o.Op = nil
		}
		prevSpec := maps.Clone(o.Spec)
		for f, v := range req.Params {
			if v == nil {
				delete(o.Spec, f)
			} else {
				o.Spec[f] = v
			}
		}
		if err := e.checkLinks(ctx, tenant, k, a, o); err != nil {
			return nil, err
		}
		evs = append(evs, e.start(o, k, a, req.Force, now, ActorUser)...)
		if o.Op != nil {
			o.Op.PrevSpec = prevSpec // a rollback undoes the request's params too
			if origin != "" {
				o.Op.From = origin
			}
		}
		o.Version++
		o.UpdatedAt = now
		actKey := ""
		if key != "" {
			actKey = "act:" + key // recorded with the accepted action, in one write
		}
		if err := e.commit(ctx, o, k, prev, evs, actKey); errors.Is(err, ErrVersion) {
			continue
		} else if err != nil {
			return nil, err
		}
		return o, nil
	}
	return nil, errorf(client.CodeBusy, "the object is changing too fast; retry")
}

// checkLinks enforces the family's links for action a on o (whose spec already holds the
// request's params): the object a link names must exist and be in an allowed state; an action
// that undoes a link clears its field.
func (e *Engine) checkLinks(ctx context.Context, tenant string, k *lifecycle.Kind, a *lifecycle.Action, o *Object) error {
	sets, clears := lifecycle.LinksFor(k.Name, a.Name)
	for _, l := range clears {
		delete(o.Spec, l.Field)
	}
	for _, l := range sets {
		id, _ := o.Spec[l.Field].(string)
		if id == "" {
			return errorf(client.CodeInvalid, "%s %s needs params.%s: the ID of the %s", k.Name, a.Name, l.Field, l.Target)
		}
		t, err := e.store.Get(ctx, tenant, id)
		if errors.Is(err, ErrNotFound) || (err == nil && t.Kind != l.Target) {
			return errorf(client.CodeInvalid, "%s %s: %s %q not found", k.Name, a.Name, l.Target, id)
		}
		if err != nil {
			return err
		}
		if !slices.Contains(l.States, t.State) {
			return &Error{Code: client.CodeInvalidTransition,
				Message: fmt.Sprintf("%s %s: %s %s is %s; it must be %s", k.Name, a.Name, l.Target, id, t.State, strings.Join(l.States, ", ")),
				Details: client.TransitionDetails{Kind: l.Target, State: t.State, Action: a.Name, Allowed: []string{}}}
		}
	}
	return nil
}

func userActions(k *lifecycle.Kind) []string {
	var out []string
	for _, a := range k.AllActions() {
		if a.ByUser() {
			out = append(out, a.Name)
		}
	}
	return out
}

func (e *Engine) busy(o *Object, k *lifecycle.Kind) *Error {
	wait := time.Second
	if !o.Due.IsZero() {
		if d := o.Due.Sub(e.clock.Now()); d > wait {
			wait = d
		}
	}
	return &Error{
		Code: client.CodeBusy,
		Message: fmt.Sprintf("%s %s is busy: action %q is running (state %s); retry when it is static",
			k.Name, o.ID, o.Op.Action, o.State),
		RetryAfter: min(wait, 30*time.Second),
	}
}

// get reads an object of kind k.
func (e *Engine) get(ctx context.Context, tenant string, k *lifecycle.Kind, id string) (*Object, error) {
	o, err := e.store.Get(ctx, tenant, id)
	if errors.Is(err, ErrNotFound) || (err == nil && o.Kind != k.Name) {
		return nil, errorf(client.CodeNotFound, "%s %q not found", k.Name, id)
	}
	return o, err
}

// Get reads an object.
func (e *Engine) Get(ctx context.Context, tenant string, k *lifecycle.Kind, id string) (*Object, error) {
	return e.get(ctx, tenant, k, id)
}

// Wait long-polls: it returns as soon as the object is static (or gone), or at the timeout
// with the object as it is.
func (e *Engine) Wait(ctx context.Context, tenant string, k *lifecycle.Kind, id string, timeout time.Duration) (*Object, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		o, changed, err := e.waitOnce(ctx, tenant, k, id, timer.C)
		if !changed {
			return o, err
		}
	}
}

// waitOnce reads the object and, while it is busy, waits for its next change; changed says
// whether to read again.
func (e *Engine) waitOnce(ctx context.Context, tenant string, k *lifecycle.Kind, id string, timeout <-chan time.Time) (*Object, bool, error) {
	ch, release := e.hub.watch(id) // before the read, so no change slips between the two
	defer release()
	o, err := e.get(ctx, tenant, k, id)
	if err != nil || o.Op == nil {
		return o, false, err
	}
	select {
	case <-ch:
		return o, true, nil
	case <-timeout:
	case <-ctx.Done():
	case <-e.draining:
	}
	return o, false, nil
}

// Drain answers every long-poll at once (with the object as it is), for a quick graceful
// shutdown.
func (e *Engine) Drain() { e.drainOnce.Do(func() { close(e.draining) }) }

// Patch changes spec fields. With the kind's update action the change starts it (and is undone
// if it rolls back); otherwise it applies at once to a static object.
func (e *Engine) Patch(ctx context.Context, tenant string, k *lifecycle.Kind, id string, ifMatch int64, spec map[string]any) (*Object, error) {
	defer e.lockObject(id)()
	for range casRetries {
		o, err := e.get(ctx, tenant, k, id)
		if err != nil {
			return nil, err
		}
		if ifMatch != 0 && o.Version != ifMatch {
			return nil, &Error{Code: client.CodeConflict,
				Message: fmt.Sprintf("version is %d, not %d: read the object again and reapply your change", o.Version, ifMatch)}
		}
		if o.Op != nil {
			return nil, e.busy(o, k)
		}
		now := e.clock.Now()
		prev := o.Version
		old := maps.Clone(o.Spec)
		for f, v := range spec {
			if v == nil {
				delete(o.Spec, f)
			} else {
				o.Spec[f] = v
			}
		}
		var evs []Event
		if k.Update != "" {
			a, _ := k.Action(k.Update)
			if _, err := k.Check(o.State, a.Name, false); err != nil {
				return nil, asAPIError(err)
			}
			if err := e.checkParent(ctx, tenant, k, a, o.ParentID, false); err != nil {
				return nil, err
			}
			evs = e.start(o, k, a, false, now, ActorUser)
			if o.Op != nil {
				o.Op.PrevSpec = old
			}
		} else {
			o.Due = e.staticDue(o, k)
			evs = []Event{{Time: now, Actor: ActorUser, From: o.State, To: o.State, Message: "spec updated"}}
		}
		o.Version++
		o.UpdatedAt = now
		if err := e.commit(ctx, o, k, prev, evs, ""); errors.Is(err, ErrVersion) {
			continue
		} else if err != nil {
			return nil, err
		}
		return o, nil
	}
	return nil, errorf(client.CodeBusy, "the object is changing too fast; retry")
}

// Delete runs the action of a deletion mode.
func (e *Engine) Delete(ctx context.Context, tenant string, k *lifecycle.Kind, id, mode string) (*Object, error) {
	if mode == "" {
		mode = "destroy"
	}
	o, err := e.get(ctx, tenant, k, id)
	if err != nil {
		return nil, err
	}
	if _, ok := k.Deletion[mode]; !ok {
		return nil, errorf(client.CodeInvalid, "%s objects cannot be deleted with mode %q; modes: %v", k.Name, mode, slices.Sorted(maps.Keys(k.Deletion)))
	}
	if o.Op != nil {
		for _, n := range k.Deletion[mode] {
			if a, _ := k.Action(n); a.FromAny {
				return e.act(ctx, tenant, k, id, n, client.ActionRequest{}, "", true)
			}
		}
		return nil, e.busy(o, k)
	}
	if slices.Contains(k.DeletionTargets(mode), o.State) {
		return o, nil // already where this deletion ends (a machine in the recycle bin)
	}
	a, err := k.DeletionAction(mode, o.State)
	if err != nil {
		return nil, asAPIError(err)
	}
	return e.act(ctx, tenant, k, id, a.Name, client.ActionRequest{}, "", true)
}

// commit writes o (removing it when it reached a gone state) and wakes its watchers.
func (e *Engine) commit(ctx context.Context, o *Object, k *lifecycle.Kind, prev int64, evs []Event, key string) error {
	err := e.write(ctx, o, k, prev, evs, key)
	if err == nil {
		e.changed(o.ID)
	}
	return err
}

// write stores o (removing it when it reached a gone state) without waking its watchers.
func (e *Engine) write(ctx context.Context, o *Object, k *lifecycle.Kind, prev int64, evs []Event, key string) error {
	for i := range evs {
		evs[i].ObjectID, evs[i].Tenant = o.ID, o.Tenant
	}
	if o.Op == nil && k.IsGone(o.State) && o.CascadeFrom == "" {
		return e.store.Delete(ctx, o.Tenant, o.ID, prev, evs)
	}
	return e.store.Update(ctx, o, prev, evs, key)
}

func (e *Engine) changed(id string) {
	e.hub.notify(id)
	e.Kick()
}

// advance moves a due object on: completes its phase, heals it, or starts its system or timer
// action.
func (e *Engine) advance(ctx context.Context, due *Object) error {
	k, err := e.reg.Kind(due.Kind)
	if err != nil {
		return err
	}
	if due.CascadeFrom != "" {
		return e.finishCascade(ctx, due.Tenant, due.ID, k)
	}
	unlock := e.lockObject(due.ID)
	// Read it again under the lock: a request may have moved it on since Due listed it, and
	// a stale copy must not draw faults.
	o, err := e.store.Get(ctx, due.Tenant, due.ID)
	now := e.clock.Now()
	if err != nil || o.Due.IsZero() || o.Due.After(now) || o.CascadeFrom != "" {
		unlock()
		return err
	}
	prev := o.Version
	from := ""
	if o.Op != nil {
		from = o.Op.From
	}
	var evs []Event
	switch {
	case o.Op == nil:
		evs = e.startAutomatic(o, k, now)
	case o.Op.Hung:
		evs = e.fail(o, k, now, false, string(lifecycle.ActorSystem),
			fmt.Sprintf("self-healed: stuck in %s for %s", o.State, now.Sub(o.Op.PhaseStarted).Round(time.Millisecond)), "healed")
		if len(evs) > 0 {
			evs[len(evs)-1].Message = "self-healing repaired a stuck transition"
		}
	default:
		evs = e.completePhase(o, k, now)
	}
	// A landing that fires cascades records them in the same write, due at once: if the
	// simulator stops before they are done, the worker finishes them after the restart. (A
	// rolled-back action changed nothing and fires none.)
	if o.Op == nil && from != "" && from != o.State && len(lifecycle.CascadesFor(k.Name, from, o.State)) > 0 {
		o.CascadeFrom, o.Due = from, now
	}
	o.Version++
	o.UpdatedAt = now
	err = e.write(ctx, o, k, prev, evs, "")
	unlock()
	if err != nil {
		return err
	}
	if o.CascadeFrom != "" {
		// Watchers wake only once the cascade is done, so whoever sees the machine DELETED
		// also sees its disks TOBEDELETED.
		return e.finishCascade(ctx, o.Tenant, o.ID, k)
	}
	e.changed(o.ID)
	return nil
}

// finishCascade applies the cascades an object's landing recorded, then clears the record
// (removing the object if it landed in a gone state). Cascades are idempotent: a related
// object moves only from the state the cascade expects.
func (e *Engine) finishCascade(ctx context.Context, tenant, id string, k *lifecycle.Kind) error {
	o, err := e.store.Get(ctx, tenant, id)
	if err != nil || o.CascadeFrom == "" {
		return err
	}
	now := e.clock.Now()
	e.cascade(ctx, o, k, o.CascadeFrom, now) // related objects are locked one by one
	unlock := e.lockObject(id)
	defer unlock()
	if o, err = e.store.Get(ctx, tenant, id); err != nil || o.CascadeFrom == "" {
		return err
	}
	prev := o.Version
	o.CascadeFrom = ""
	o.Version++
	if o.Op == nil {
		o.Due = e.staticDue(o, k)
	}
	if err := e.write(ctx, o, k, prev, nil, ""); err != nil {
		return err
	}
	e.changed(id)
	return nil
}

// startAutomatic starts the system or timer action due on a static object.
func (e *Engine) startAutomatic(o *Object, k *lifecycle.Kind, now time.Time) []Event {
	for _, a := range k.AllActions() {
		if a.ByUser() || a.FromAny {
			continue
		}
		if ok, _ := a.AllowedFrom(o.State); !ok {
			continue
		}
		switch {
		case a.After > 0 && !now.Before(o.StateSince.Add(e.scaled(time.Duration(a.After)))):
		case a.At != "":
			if at, ok := timeField(o.Spec, a.At); !ok || now.Before(at) {
				continue
			}
		default:
			continue
		}
		return e.start(o, k, a, false, now, string(a.Actor))
	}
	o.Due = e.staticDue(o, k)
	return nil
}

// completePhase ends the current phase: a fail fault applies the failure rule; otherwise the
// next phase starts (a drop fault skips a skippable one) or the operation lands.
func (e *Engine) completePhase(o *Object, k *lifecycle.Kind, now time.Time) []Event {
	a, _ := k.Action(o.Op.Action)
	via := a.Via
	if o.Op.Failing {
		via = k.FailureRule(a).Via
	}
	p := via[o.Op.Phase]
	actor := string(p.Actor)
	if actor == "" {
		actor = string(lifecycle.ActorSystem)
	}
	if !o.Op.Failing {
		if r := e.faults.Match(FaultFail, o.Tenant, k.Name, a.Name, p.State); r != nil {
			msg := r.Message
			if msg == "" {
				msg = fmt.Sprintf("injected failure in %s (fault %s)", p.State, r.ID)
			}
			return e.fail(o, k, now, r.Fatal, actor, msg, "failed")
		}
	}
	next := o.Op.Phase + 1
	// The message for a skippable phase may be lost: the next one arrives straight away. One
	// message at a time: the seeds skip a single step (CreateRequested → Ready).
	if next < len(via) && via[next].Skippable && e.faults.Match(FaultDrop, o.Tenant, k.Name, a.Name, via[next].State) != nil {
		next++
	}
	if next < len(via) {
		return []Event{e.enterPhase(o, k, via, next, now, actor)}
	}
	if o.Op.Failing {
		f := k.FailureRule(a)
		e.onDone(k.Name, a.Name, "failed")
		return e.land(o, k, e.failureTarget(o, f), now, actor, "")
	}
	e.onDone(k.Name, a.Name, "succeeded")
	return e.land(o, k, a.Target(o.Op.From), now, actor, "")
}

// failureTarget is where a failure path ends.
func (e *Engine) failureTarget(o *Object, f lifecycle.Failure) string {
	if f.Rollback {
		if o.Op.PrevSpec != nil {
			o.Spec = o.Op.PrevSpec
		}
		return o.Op.From
	}
	return f.To
}

// fail applies the failure rule of the running action; outcome is what a landing counts as
// (failed, or healed when self-healing repairs a stuck phase).
func (e *Engine) fail(o *Object, k *lifecycle.Kind, now time.Time, fatal bool, actor, msg, outcome string) []Event {
	a, _ := k.Action(o.Op.Action)
	f := k.FailureRule(a)
	o.Op.Error = msg
	o.Status["last_error"] = map[string]any{
		"action": a.Name, "operation_id": o.Op.ID, "state": o.State, "message": msg, "time": now.Format(time.RFC3339Nano),
	}
	switch {
	case fatal && f.Fatal != "":
		e.onDone(k.Name, a.Name, outcome)
		return e.land(o, k, f.Fatal, now, actor, "")
	case f.Retry:
		// The phase starts over; the failure is recorded.
		ev := e.enterPhase(o, k, a.Via, o.Op.Phase, now, actor)
		ev.Message = "retrying after failure"
		return []Event{ev}
	case len(f.Via) > 0 && !o.Op.Failing:
		o.Op.Failing = true
		return []Event{e.enterPhase(o, k, f.Via, 0, now, actor)}
	default:
		e.onDone(k.Name, a.Name, outcome)
		return e.land(o, k, e.failureTarget(o, f), now, actor, "")
	}
}

// cascade applies the family's cascades after o landed, having started from `from`.
func (e *Engine) cascade(ctx context.Context, o *Object, k *lifecycle.Kind, from string, now time.Time) {
	for _, c := range lifecycle.CascadesFor(k.Name, from, o.State) {
		rk, err := e.reg.Kind(c.RelatedKind)
		if err != nil {
			continue
		}
		related, err := e.store.List(ctx, o.Tenant, Filter{Kind: c.RelatedKind, State: c.RelatedFrom, Link: [2]string{c.Link, o.ID}})
		if err != nil {
			continue
		}
		for _, r := range related {
			e.cascadeOne(ctx, r.Tenant, r.ID, rk, c, fmt.Sprintf("cascade: %s %s went %s → %s", k.Name, o.ID, from, o.State), now)
		}
	}
}

// cascadeOne moves one related object, under its lock so no request races the change. An
// object that moved on meanwhile (a user started an action on it) is left alone.
func (e *Engine) cascadeOne(ctx context.Context, tenant, id string, rk *lifecycle.Kind, c lifecycle.Cascade, msg string, now time.Time) {
	unlock := e.lockObject(id)
	defer unlock()
	r, err := e.store.Get(ctx, tenant, id)
	if err != nil || r.Op != nil || r.State != c.RelatedFrom {
		return
	}
	prev := r.Version
	r.State, r.StateSince, r.Version, r.UpdatedAt = c.RelatedTo, now, r.Version+1, now
	if c.Unlink {
		delete(r.Spec, c.Link)
	}
	r.Due = e.staticDue(r, rk)
	ev := Event{Time: now, Actor: string(lifecycle.ActorSystem), From: c.RelatedFrom, To: c.RelatedTo, Message: msg}
	if err := e.commit(ctx, r, rk, prev, []Event{ev}, ""); err != nil && e.logf != nil {
		e.logf("cascade to %s %s: %v", rk.Name, id, err)
	}
}

// Events returns an object's history (kept after the object is gone).
func (e *Engine) Events(ctx context.Context, tenant string, k *lifecycle.Kind, id string) ([]Event, error) {
	evs, err := e.store.Events(ctx, tenant, id)
	if errors.Is(err, ErrNotFound) || (err == nil && !e.isKind(ctx, tenant, k, id)) {
		return nil, errorf(client.CodeNotFound, "%s %q not found", k.Name, id)
	}
	return evs, err
}

// isKind reports whether id is (or was) an object of kind k: the live object's kind, or for a
// gone one the kind its ID was made with.
func (e *Engine) isKind(ctx context.Context, tenant string, k *lifecycle.Kind, id string) bool {
	if o, err := e.store.Get(ctx, tenant, id); err == nil {
		return o.Kind == k.Name
	}
	return strings.HasPrefix(id, k.Name+"-") && !strings.Contains(strings.TrimPrefix(id, k.Name+"-"), "-")
}

// List lists a tenant's objects of a kind.
func (e *Engine) List(ctx context.Context, tenant string, f Filter) ([]*Object, error) {
	return e.store.List(ctx, tenant, f)
}

// Reset removes a tenant's objects and fault rules, or everyone's (the open single-tenant
// mode). Events of removed objects are kept.
func (e *Engine) Reset(ctx context.Context, tenant string, everyone bool) error {
	if everyone {
		e.faults.ResetAll()
		return e.store.Reset(ctx)
	}
	e.faults.Reset(tenant)
	objs, err := e.store.List(ctx, tenant, Filter{})
	if err != nil {
		return err
	}
	for _, o := range objs {
		unlock := e.lockObject(o.ID)
		err := e.store.Delete(ctx, tenant, o.ID, o.Version, []Event{{Time: e.clock.Now(), Actor: string(lifecycle.ActorSystem),
			From: o.State, To: o.State, Message: "removed by /v1/sim/reset"}})
		unlock()
		if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrVersion) {
			return err
		}
		e.changed(o.ID)
	}
	return nil
}

// hub wakes long-polls when an object changes.
type hub struct {
	mu sync.Mutex
	m  map[string]*watchers
}

// watchers share one channel, closed at the object's next change.
type watchers struct {
	ch chan struct{}
	n  int
}

// watch returns a channel closed at the object's next change, and a release to call when the
// caller stops waiting (so entries for objects nobody waits on do not pile up).
func (h *hub) watch(id string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w, ok := h.m[id]
	if !ok {
		w = &watchers{ch: make(chan struct{})}
		h.m[id] = w
	}
	w.n++
	return w.ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.m[id] == w {
			if w.n--; w.n == 0 {
				delete(h.m, id)
			}
		}
	}
}

func (h *hub) notify(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w, ok := h.m[id]; ok {
		close(w.ch)
		delete(h.m, id)
	}
}

// size is the number of objects being watched (for tests).
func (h *hub) size() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}
