package engine

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

var faultModes = []string{wire.FaultFail, wire.FaultHang, wire.FaultSlow, wire.FaultHTTPError, wire.FaultDrop}

// Faults holds the fault rules. Each rule belongs to the tenant that added it and matches only
// that tenant's objects and requests, so rules are kept per tenant (at most MaxFaultRules
// each): a lookup reads only the caller's few rules, and with none at all it takes no lock.
// Probabilities are drawn from a seeded RNG so a run can be repeated.
type Faults struct {
	mu    sync.Mutex
	rules map[string][]*rule // by tenant
	total atomic.Int64
	rng   *rand.Rand
	seq   int
}

type rule struct {
	wire.FaultRule
	tenant string
}

// NewFaults returns an empty rule set drawing from a RNG seeded with seed.
func NewFaults(seed uint64) *Faults {
	return &Faults{rules: map[string][]*rule{}, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Add validates and stores a tenant's rule, giving it an ID.
func (f *Faults) Add(tenant string, r wire.FaultRule) (wire.FaultRule, error) {
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
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rules[tenant]) >= MaxFaultRules {
		return r, errorf(wire.CodeForbidden, "a tenant may have at most %d fault rules; delete some (DELETE /v1/sim/faults/{id}) first", MaxFaultRules)
	}
	f.seq++
	r.ID = "fault-" + strconv.Itoa(f.seq)
	r.Fired = 0
	f.rules[tenant] = append(f.rules[tenant], &rule{FaultRule: r, tenant: tenant})
	f.total.Add(1)
	return r, nil
}

// List returns a tenant's rules.
func (f *Faults) List(tenant string) []wire.FaultRule {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []wire.FaultRule{}
	for _, r := range f.rules[tenant] {
		out = append(out, r.FaultRule)
	}
	return out
}

// Delete removes a tenant's rule.
func (f *Faults) Delete(tenant, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rules[tenant] {
		if r.ID == id {
			f.rules[tenant] = slices.Delete(f.rules[tenant], i, i+1)
			f.total.Add(-1)
			return nil
		}
	}
	return errorf(wire.CodeNotFound, "fault rule %q not found", id)
}

// Reset removes a tenant's rules.
func (f *Faults) Reset(tenant string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total.Add(-int64(len(f.rules[tenant])))
	delete(f.rules, tenant)
}

// ResetAll removes every tenant's rules.
func (f *Faults) ResetAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = map[string][]*rule{}
	f.total.Store(0)
}

// Match returns the first live rule of a tenant of mode matching kind, action and phase (""
// matches anything on the rule's side only), and counts it as fired.
func (f *Faults) Match(mode, tenant, kind, action, phase string) *wire.FaultRule {
	if f.total.Load() == 0 {
		return nil // the common case: no rules at all
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rules[tenant] {
		if r.Mode != mode || (r.Count > 0 && r.Fired >= r.Count) {
			continue
		}
		if (r.Kind != "" && r.Kind != kind) || (r.Action != "" && r.Action != action) || (r.Phase != "" && r.Phase != phase) {
			continue
		}
		if r.Probability > 0 && r.Probability < 1 && f.rng.Float64() >= r.Probability {
			continue
		}
		r.Fired++
		c := r.FaultRule
		return &c
	}
	return nil
}
