package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

var faultModes = []string{wire.FaultFail, wire.FaultHang, wire.FaultSlow, wire.FaultHTTPError, wire.FaultDrop}

// Faults holds the fault rules. Each rule belongs to the tenant that added it and matches only
// that tenant's objects and requests, so rules are kept per tenant (at most MaxFaultRules
// each): a lookup reads only the caller's few rules, and with none at all it takes no lock.
// Probabilities are drawn from a seeded RNG so a run can be repeated.
//
// Over a store replicas share (a store.FaultKeeper) the rules are the store's, for every
// replica: the rules here are then a cache of them, loaded again after every change made here,
// when another replica says it changed them, and at the fallback poll (Engine.Follow). A rule
// that matches counts its firing in the store, in one statement, and fires only if that
// counted: a rule of count 1 fires once across the replicas. Changes and List go to the store.
type Faults struct {
	mu    sync.Mutex
	rules map[string][]*rule // by tenant
	total atomic.Int64
	rng   *rand.Rand
	seq   int

	// shared keeps the rules of replicas (nil: the rules are this process's alone).
	shared store.FaultKeeper
	// loadMu orders loads of the cache from shared, so the last to read is the last to write.
	loadMu sync.Mutex
	log    *slog.Logger
	// fired, if set, is told of every firing (for metrics).
	fired func(kind, action, mode string)
}

type rule struct {
	wire.FaultRule
	tenant string
}

// NewFaults returns an empty rule set drawing from a RNG seeded with seed.
func NewFaults(seed uint64) *Faults {
	return &Faults{rules: map[string][]*rule{}, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), log: slog.New(slog.DiscardHandler)}
}

// Add validates and stores a tenant's rule, giving it an ID.
func (f *Faults) Add(ctx context.Context, tenant string, r wire.FaultRule) (wire.FaultRule, error) {
	r, err := validFault(r)
	if err != nil {
		return r, err
	}
	r.ID, r.Fired = "", 0
	if f.shared != nil {
		return f.addShared(ctx, tenant, r)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rules[tenant]) >= MaxFaultRules {
		return r, errFaultLimit()
	}
	f.seq++
	r.ID = "fault-" + strconv.Itoa(f.seq)
	f.rules[tenant] = append(f.rules[tenant], &rule{FaultRule: r, tenant: tenant})
	f.total.Add(1)
	return r, nil
}

// validFault checks a rule's mode and bounds, filling in an http_error rule's code.
func validFault(r wire.FaultRule) (wire.FaultRule, error) {
	if !slices.Contains(faultModes, r.Mode) {
		return r, errorf(wire.CodeInvalid, "unknown fault mode %q; modes are %v", r.Mode, faultModes)
	}
	if r.Probability < 0 || r.Probability > 1 {
		return r, errorf(wire.CodeInvalid, "probability %v is not between 0 and 1", r.Probability)
	}
	if r.Count < 0 {
		return r, errorf(wire.CodeInvalid, "count %d is negative", r.Count)
	}
	switch r.Mode {
	case wire.FaultSlow:
		if !(r.Factor > 0 && r.Factor <= MaxSlowFactor) { // also refuses NaN
			return r, errorf(wire.CodeInvalid, "slow faults need a factor above 0 and at most %g (e.g. 10), got %v", float64(MaxSlowFactor), r.Factor)
		}
	case wire.FaultHTTPError:
		if r.Phase != "" {
			return r, errorf(wire.CodeInvalid, "an http_error fault answers requests, which have no phase: leave phase out (action picks a POST .../actions/{action})")
		}
		if r.HTTPStatus < 400 || r.HTTPStatus > 599 {
			return r, errorf(wire.CodeInvalid, "http_error faults need an http_status between 400 and 599")
		}
		if r.Code == "" {
			r.Code = string(wire.CodeOf(r.HTTPStatus))
		}
	}
	return r, nil
}

// reserve checks that a tenant's imported rules (valid, with their IDs and firings) can be
// kept here: the tenant holds no rules, and no tenant holds their IDs. The rules kept here
// (not a shared store's) are numbered past them from now on, so no rule added meanwhile takes
// one of their IDs before keep adds them.
func (f *Faults) reserve(tenant string, rules []wire.FaultRule) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.rules[tenant]); n > 0 {
		return errorf(wire.CodeConflict, "the tenant holds %d fault rules: an import goes into an empty tenant; reset it first (POST /v1/sim/reset, lifecyclesim reset)", n)
	}
	if len(rules) > MaxFaultRules {
		return errFaultLimit()
	}
	if f.shared != nil {
		return nil // the store checks the IDs in the import's transaction
	}
	for _, r := range rules {
		for _, held := range f.rules {
			if slices.ContainsFunc(held, func(h *rule) bool { return h.ID == r.ID }) {
				return errorf(wire.CodeConflict, "fault rule %s is held by this simulator already (another tenant's): import into a simulator that does not hold it", r.ID)
			}
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(r.ID, "fault-")); err == nil {
			f.seq = max(f.seq, n)
		}
	}
	return nil
}

// keep adds a tenant's imported rules as they are (after reserve), or, over a shared store
// that imported them, loads them.
func (f *Faults) keep(ctx context.Context, tenant string, rules []wire.FaultRule) {
	if f.shared != nil {
		f.reload(ctx)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range rules {
		f.rules[tenant] = append(f.rules[tenant], &rule{FaultRule: r, tenant: tenant})
		f.total.Add(1)
	}
}

func errFaultLimit() *Error {
	return errorf(wire.CodeForbidden, "a tenant may have at most %d fault rules; delete some (DELETE /v1/sim/faults/{id}) first", MaxFaultRules)
}

// addShared stores a rule in the shared store, then loads the cache again so that the rule
// is in force here at once.
func (f *Faults) addShared(ctx context.Context, tenant string, r wire.FaultRule) (wire.FaultRule, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	stored, ok, err := f.shared.AddFaultRule(ctx, store.FaultRule{Tenant: tenant, Rule: data, Count: int64(r.Count)}, MaxFaultRules)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, errFaultLimit()
	}
	r.ID = stored.ID
	f.reload(ctx)
	return r, nil
}

// List returns a tenant's rules (over a shared store, as the store holds them now, with the
// firings of every replica).
func (f *Faults) List(ctx context.Context, tenant string) ([]wire.FaultRule, error) {
	if f.shared != nil {
		if err := f.load(ctx); err != nil {
			return nil, err
		}
	}
	return f.InForce(tenant), nil
}

// InForce returns a tenant's rules as this process applies them now: over a shared store,
// its copy of the store's rules, which follows changes made on other replicas within their
// notification (or the fallback poll's second).
func (f *Faults) InForce(tenant string) []wire.FaultRule {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []wire.FaultRule{}
	for _, r := range f.rules[tenant] {
		out = append(out, r.FaultRule)
	}
	return out
}

// Delete removes a tenant's rule.
func (f *Faults) Delete(ctx context.Context, tenant, id string) error {
	if f.shared != nil {
		if len(id) > maxFaultIDBytes || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
			return errFaultNotFound(id) // no rule has it, and a database's text cannot hold it
		}
		err := f.shared.DeleteFaultRule(ctx, tenant, id)
		if errors.Is(err, store.ErrNotFound) {
			return errFaultNotFound(id)
		}
		f.reload(ctx)
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rules[tenant] {
		if r.ID == id {
			f.rules[tenant] = slices.Delete(f.rules[tenant], i, i+1)
			f.total.Add(-1)
			return nil
		}
	}
	return errFaultNotFound(id)
}

// maxFaultIDBytes is longer than any rule ID ("fault-" and a number).
const maxFaultIDBytes = 64

func errFaultNotFound(id string) *Error {
	return errorf(wire.CodeNotFound, "fault rule %q not found", id)
}

// Reset removes a tenant's rules.
func (f *Faults) Reset(ctx context.Context, tenant string) error {
	if f.shared != nil {
		err := f.shared.DeleteFaultRules(ctx, tenant, false)
		f.reload(ctx)
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total.Add(-int64(len(f.rules[tenant])))
	delete(f.rules, tenant)
	return nil
}

// ResetAll removes every tenant's rules.
func (f *Faults) ResetAll(ctx context.Context) error {
	if f.shared != nil {
		err := f.shared.DeleteFaultRules(ctx, "", true)
		f.reload(ctx)
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = map[string][]*rule{}
	f.total.Store(0)
	return nil
}

// Match returns the first live rule of a tenant of mode matching kind, action and phase (""
// matches anything on the rule's side only), and counts it as fired.
func (f *Faults) Match(ctx context.Context, mode, tenant, kind, action, phase string) *wire.FaultRule {
	r := f.match(ctx, mode, tenant, kind, action, phase)
	if r != nil && f.fired != nil {
		f.fired(kind, action, mode)
	}
	return r
}

func (f *Faults) match(ctx context.Context, mode, tenant, kind, action, phase string) *wire.FaultRule {
	if f.total.Load() == 0 {
		return nil // the common case: no rules at all
	}
	if f.shared != nil {
		return f.matchShared(ctx, mode, tenant, kind, action, phase)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rules[tenant] {
		if f.matches(r, mode, kind, action, phase) {
			r.Fired++
			c := r.FaultRule
			return &c
		}
	}
	return nil
}

// matches reports whether r is live and matches, drawing its probability (under f.mu).
func (f *Faults) matches(r *rule, mode, kind, action, phase string) bool {
	if r.Mode != mode || (r.Count > 0 && r.Fired >= r.Count) {
		return false
	}
	if (r.Kind != "" && r.Kind != kind) || (r.Action != "" && r.Action != action) || (r.Phase != "" && r.Phase != phase) {
		return false
	}
	return r.Probability <= 0 || r.Probability >= 1 || f.rng.Float64() < r.Probability
}

// matchShared is Match over a shared store: a rule that matches here fires only once the store
// counted its firing (not past its count, whichever replica fired it before). The store is
// asked without f.mu held.
func (f *Faults) matchShared(ctx context.Context, mode, tenant, kind, action, phase string) *wire.FaultRule {
	f.mu.Lock()
	rules := slices.Clone(f.rules[tenant])
	f.mu.Unlock()
	for _, r := range rules {
		f.mu.Lock()
		ok := f.matches(r, mode, kind, action, phase)
		f.mu.Unlock()
		if !ok {
			continue
		}
		fired, ok, err := f.shared.FireFaultRule(ctx, tenant, r.ID)
		if err != nil {
			f.log.Warn("could not count a firing of a fault rule; it did not fire", slog.String("rule", r.ID), slog.Any("err", err))
			continue
		}
		f.mu.Lock()
		if ok {
			r.Fired = int(fired)
		} else if r.Count > 0 {
			r.Fired = r.Count // spent by other replicas (or gone): skipped until the next load
		}
		c := r.FaultRule
		f.mu.Unlock()
		if ok {
			return &c
		}
	}
	return nil
}

// reload loads the cache from the shared store after a change made here; a failure leaves the
// change to the next load (at most the fallback poll's second later).
func (f *Faults) reload(ctx context.Context) {
	if err := f.load(ctx); err != nil {
		f.log.Warn("could not load the shared fault rules", slog.Any("err", err))
	}
}

// load replaces the cache with the rules the shared store holds.
func (f *Faults) load(ctx context.Context) error {
	f.loadMu.Lock()
	defer f.loadMu.Unlock()
	stored, err := f.shared.FaultRules(ctx)
	if err != nil {
		return err
	}
	rules, n := map[string][]*rule{}, 0
	for _, s := range stored {
		var r wire.FaultRule
		if err := json.Unmarshal(s.Rule, &r); err != nil {
			f.log.Warn("fault rule skipped", slog.String("rule", s.ID), slog.Any("err", err))
			continue
		}
		r.ID, r.Count, r.Fired = s.ID, int(s.Count), int(s.Fired)
		rules[s.Tenant] = append(rules[s.Tenant], &rule{FaultRule: r, tenant: s.Tenant})
		n++
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = rules
	f.total.Store(int64(n))
	return nil
}
