package engine

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// The engine runs the state machines. Its concerns live one file each:
//   - accept.go: requests (create, action, patch, delete) accepted with a compare-and-set;
//   - worker.go: the worker that completes due phases, starts timer and system actions, heals;
//   - phases.go: an operation's phases, failures and landings;
//   - relations.go: children, propagation, waits and followers, guards, links, delete policy;
//   - step.go: one move's changes, derived status, and the single transaction that commits them;
//   - invariants.go: cross-object invariants checked after commits;
//   - reset.go, hub.go, feed.go: reset, waking long-polls, and the change feed (the dashboard).

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
	// Logger, if set, receives worker errors, invariant violations and the failures of
	// following a shared store (nil: they are not logged).
	Logger *slog.Logger
	// OnTransition, if set, is told the outcome of every finished operation (for metrics).
	OnTransition func(kind, action, outcome string)
	// CheckInvariants checks the kinds' cross-object invariants after every commit.
	CheckInvariants bool
	// OnViolation, if set, is told of every invariant violation (for metrics).
	OnViolation func(invariant string)
	// MaxObjects is the per-tenant object quota (DefaultMaxObjects when 0).
	MaxObjects int
	// OnIsolate, if set, is told of every object the worker sets aside after failing to
	// advance it (for metrics).
	OnIsolate func(kind string)
	// OnFault, if set, is told of every firing of a fault rule: the kind and action it fired
	// on (the action "" when the request named none the kind has) and the rule's mode.
	OnFault func(kind, action, mode string)
	// LandingWait bounds how long an action on an object whose phase is due but not landed
	// yet waits for the worker to land it before it answers busy (0: 2 s; negative: it
	// answers busy at once).
	LandingWait time.Duration
}

// Engine runs the state machines: it accepts actions with an atomic compare-and-set, moves
// phases along when they are due, applies failure rules, carries out relations, heals stuck
// transitions and wakes long-polls.
type Engine struct {
	store  store.Store
	reg    *lifecycle.Registry
	clock  Clock
	faults *Faults
	hub    hub
	feed   feed
	kick   chan struct{}
	onDone func(kind, action, outcome string)
	log    *slog.Logger

	draining  chan struct{}
	drainOnce sync.Once

	mu        sync.Mutex
	timeScale float64
	healAfter time.Duration

	invariants invariantChecker
	maxObjects int
	// isolated are the objects the worker set aside (isolate.go); onIsolate counts them.
	isolated  isolated
	onIsolate func(kind string)
	// landingWait bounds an action's wait for its object's due phase to land (Act).
	landingWait time.Duration
	// rel are the relations pointing at each kind (relationsOf).
	relOnce sync.Once
	rel     map[string]kindRelations
	// clockMu orders clock advances with the saving of the offset.
	clockMu sync.Mutex

	// objLocks serialise the read-modify-write of one object within this process, so a
	// request that would lose the store's compare-and-set never gets to draw faults (which
	// count firings and consume the seeded RNG). The compare-and-set still guards the rest.
	objLocks [64]sync.Mutex
}

// lockObject locks the object's stripe and returns the unlock.
func (e *Engine) lockObject(id string) func() {
	m := e.stripe(id)
	m.Lock()
	return m.Unlock
}

// stripe is the lock of an object's stripe.
func (e *Engine) stripe(id string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return &e.objLocks[h.Sum32()%uint32(len(e.objLocks))]
}

// New returns an engine over a store and the kinds of a registry.
func New(st store.Store, reg *lifecycle.Registry, clock Clock, opt Options) *Engine {
	if opt.TimeScale <= 0 {
		opt.TimeScale = 1
	}
	if opt.HealAfter <= 0 {
		opt.HealAfter = 10 * time.Minute
	}
	if opt.MaxObjects <= 0 {
		opt.MaxObjects = DefaultMaxObjects
	}
	onDone := opt.OnTransition
	if onDone == nil {
		onDone = func(string, string, string) {}
	}
	faults := NewFaults(opt.Seed)
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	faults.log = log
	if on := opt.OnFault; on != nil {
		faults.fired = func(kind, action, mode string) {
			// An HTTP error fires on any action a request names: only the kind's own are
			// labelled, so made-up paths add no series.
			if k, err := reg.Kind(kind); err != nil {
				kind, action = "", ""
			} else if _, ok := k.Action(action); !ok {
				action = ""
			}
			on(kind, action, mode)
		}
	}
	if fk, ok := st.(store.FaultKeeper); ok {
		faults.shared = fk
	}
	return &Engine{
		store: st, reg: reg, clock: clock, faults: faults,
		hub: hub{m: map[string]*watchers{}}, feed: feed{name: newFeedName()}, kick: make(chan struct{}, 1), onDone: onDone, log: log, draining: make(chan struct{}),
		timeScale: opt.TimeScale, healAfter: opt.HealAfter,
		invariants: invariantChecker{enabled: opt.CheckInvariants, onViolation: opt.OnViolation},
		maxObjects: opt.MaxObjects, onIsolate: opt.OnIsolate,
		landingWait: cmp.Or(opt.LandingWait, landingWait),
	}
}

// Faults returns the engine's fault rules.
func (e *Engine) Faults() *Faults { return e.faults }

// The engine's names for what it hands its callers, so the HTTP layer imports no store
// package: an object as stored, the options of List, and the dashboard's sessions.
type (
	// Object is an object as the engine reads and answers it.
	Object = store.Object
	// ListOptions select the objects List returns.
	ListOptions = store.Filter
	// SessionKeeper keeps the dashboard's sessions where replicas share them.
	SessionKeeper = store.SessionKeeper
	// Session is a dashboard session as a SessionKeeper keeps it.
	Session = store.Session
)

// ErrNotFound is Lookup's error for an object that does not exist (for that tenant).
var ErrNotFound = store.ErrNotFound

// Sessions returns the keeper of the dashboard's sessions when the engine's store keeps them
// (replicas sharing a PostgreSQL store do), ok false when the dashboard keeps its own.
func (e *Engine) Sessions() (k SessionKeeper, ok bool) {
	k, ok = e.store.(store.SessionKeeper)
	return k, ok
}

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

// SetConfig changes the time scale for phases started from now on, and the heal limit (which
// Reschedule applies to operations already running). Over a store replicas share (a
// store.ConfigKeeper) it saves them there, and the other replicas follow (Engine.Follow).
func (e *Engine) SetConfig(ctx context.Context, scale float64, healAfter time.Duration) error {
	if err := checkConfig(scale, healAfter); err != nil {
		return err
	}
	if ck, ok := e.store.(store.ConfigKeeper); ok {
		if err := ck.SetConfig(ctx, store.Config{TimeScale: scale, HealAfter: healAfter}); err != nil {
			return err
		}
	}
	e.setConfig(scale, healAfter)
	return nil
}

func checkConfig(scale float64, healAfter time.Duration) error {
	if !(scale >= MinTimeScale && scale <= MaxTimeScale) { // also refuses NaN
		return errorf(wire.CodeInvalid, "time_scale must be a number from %g to %g (e.g. 0.01), got %v", MinTimeScale, MaxTimeScale, scale)
	}
	if healAfter <= 0 || healAfter > MaxHealAfter {
		return errorf(wire.CodeInvalid, "heal_after must be a positive duration of at most %s (e.g. 10m), got %s", MaxHealAfter, healAfter)
	}
	return nil
}

func (e *Engine) setConfig(scale float64, healAfter time.Duration) {
	e.mu.Lock()
	changed := e.timeScale != scale || e.healAfter != healAfter
	e.timeScale, e.healAfter = scale, healAfter
	e.mu.Unlock()
	if changed {
		e.Kick()
	}
}

func (e *Engine) scaled(d time.Duration) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return mulDuration(d, e.timeScale)
}

// Kick makes the worker look at due objects now (after a clock advance, say).
func (e *Engine) Kick() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// newID names a new object or operation: its kind, a dash and 16 hex digits (see idSource).
func newID(kind string) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], ids.next(time.Now()))
	return kind + "-" + hex.EncodeToString(b[:])
}

// ids makes every ID of the process.
var ids idSource

// idSource makes the numbers of IDs: the wall clock's Unix milliseconds in the high 42 bits
// (until the year 2109), 22 random bits below, and one more than the last number when that
// is larger. Each number is larger than the one before, so IDs sort in the order they were
// made: a new object goes in at the right edge of the stores' ordered indexes, whose nodes
// there are in the CPU's caches, instead of at a random place among 100k others (where a
// create's tree inserts cost 3× what they cost at 1k objects). The clock keeps the IDs of a
// restarted simulator apart from those it made before; the random bits keep apart those of
// simulators started in the same millisecond.
type idSource struct {
	mu   sync.Mutex
	last uint64
}

func (s *idSource) next(now time.Time) uint64 {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	v := uint64(max(now.UnixMilli(), 0))<<22 | uint64(binary.BigEndian.Uint32(r[:])>>10)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = max(s.last+1, v)
	return s.last
}

// ActorUser is the actor recorded for API callers.
const ActorUser = string(lifecycle.ActorUser)

// getOrGone reads an object that an idempotent request already made.
func (e *Engine) getOrGone(ctx context.Context, tenant, id string) (*store.Object, error) {
	o, err := e.store.Get(ctx, tenant, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(wire.CodeNotFound, "the object this request created (%s) no longer exists", id)
	}
	return o, err
}

func orStates(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return fmt.Sprintf("%v", xs)
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

func (e *Engine) busy(o *store.Object, k *lifecycle.Kind) *Error {
	wait := time.Second
	if !o.Due.IsZero() {
		if d := o.Due.Sub(e.clock.Now()); d > wait {
			wait = d
		}
	}
	return &Error{
		Code: wire.CodeBusy,
		Message: fmt.Sprintf("%s %s is busy: action %q is running (state %s); retry when it is static",
			k.Name, o.ID, o.Op.Action, o.State),
		RetryAfter: min(wait, 30*time.Second),
	}
}

// get reads an object of kind k.
func (e *Engine) get(ctx context.Context, tenant string, k *lifecycle.Kind, id string) (*store.Object, error) {
	o, err := e.store.Get(ctx, tenant, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && o.Kind != k.Name) {
		return nil, errorf(wire.CodeNotFound, "%s %q not found", k.Name, id)
	}
	return o, err
}

// Get reads an object.
func (e *Engine) Get(ctx context.Context, tenant string, k *lifecycle.Kind, id string) (*store.Object, error) {
	return e.get(ctx, tenant, k, id)
}

// Static reports whether o, of kind k, is static: no operation runs on it and its state is one
// of k's static states. It is the one definition: a long-poll (Wait) ends on it and the API's
// "static" field says it.
func Static(k *lifecycle.Kind, o *Object) bool { return o.Op == nil && k.IsStatic(o.State) }

// Wait long-polls: it returns as soon as the object is static (or gone), or at the timeout
// with the object as it is.
func (e *Engine) Wait(ctx context.Context, tenant string, k *lifecycle.Kind, id string, timeout time.Duration) (*store.Object, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		o, changed, err := e.waitOnce(ctx, tenant, k, id, timer.C)
		if !changed {
			return o, err
		}
	}
}

// waitOnce reads the object and, until it is static, waits for its next change; changed says
// whether to read again.
func (e *Engine) waitOnce(ctx context.Context, tenant string, k *lifecycle.Kind, id string, timeout <-chan time.Time) (*store.Object, bool, error) {
	ch, release := e.hub.watch(id) // before the read, so no change slips between the two
	defer release()
	o, err := e.get(ctx, tenant, k, id)
	if err != nil || Static(k, o) {
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

// Events returns an object's history (kept after the object is gone).
func (e *Engine) Events(ctx context.Context, tenant string, k *lifecycle.Kind, id string) ([]store.Event, error) {
	evs, err := e.store.Events(ctx, tenant, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !e.isKind(ctx, tenant, k, id)) {
		return nil, errorf(wire.CodeNotFound, "%s %q not found", k.Name, id)
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

// List lists a tenant's objects that f selects.
func (e *Engine) List(ctx context.Context, tenant string, f ListOptions) ([]*Object, error) {
	return e.store.List(ctx, tenant, f)
}

// Lookup reads a tenant's object of any kind (the dashboard follows the change feed with it).
func (e *Engine) Lookup(ctx context.Context, tenant, id string) (*Object, error) {
	return e.store.Get(ctx, tenant, id)
}

// Ping checks the store can serve reads and writes now (for /readyz).
func (e *Engine) Ping(ctx context.Context) error { return e.store.Ping(ctx) }

// LongPolls is the number of long-polls (Wait) waiting now for their object to change: each
// counts from just before its read until it returns or its object changes (/metrics exports it).
// Actions waiting for their object's due phase to land (Act) count too.
func (e *Engine) LongPolls() int { return e.hub.waiting() }
