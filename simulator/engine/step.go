package engine

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// A step is everything one engine move changes — an accepted request, a phase completing, a
// heal — with every object it touches: the object itself, children made with it, related
// objects a propagation moves, an originator whose wait ends, a parent whose derived status
// changes. It commits in one store transaction, compare-and-set on every object's version, so
// the move lands whole or not at all (and is retried from a fresh read).
type step struct {
	e      *Engine
	ctx    context.Context
	tenant string
	now    time.Time
	objs   map[string]*change
	order  []string
	// byParent lists the step's objects by the parent they had when the step took them, so
	// listing a parent's children does not scan every object of a step that removes 10,000.
	byParent map[string][]string
	// keyHash is the request body's hash, recorded with the step's idempotency key.
	keyHash string
	// background commits without waiting for durability (the worker's steps).
	background bool
	// reads are the objects the step's decision read without (necessarily) writing them, with
	// the state it read: re-checked in the commit's compare-and-set (see depend).
	reads map[string]string
	// sets are the lists the decision counted, re-checked likewise.
	sets []store.SetRead
	// quota, when positive, bounds the tenant's objects after the commit (a request's step).
	quota int
	// landings are the operations the step ended, reported once it commits (landings.go).
	landings []landing
	// mayCache lets the step decide from the store's decision cache (getGuarded); cached
	// records that it did, so that only a commit that writes the object stands (accept).
	mayCache, cached bool
	// overdue records that the step found its object busy with a phase that is over, for a
	// caller that waits for the landing (afterLanding): such a refusal decided from the cache
	// stands until the wait (accept).
	overdue bool
}

// change is one object's part of a step.
type change struct {
	o      *store.Object
	k      *lifecycle.Kind
	prev   int64 // the version read; 0 for an object the step makes
	evs    []store.Event
	dirty  bool
	remove bool
	// gone records that the removal's consequences (children's delete policy, a waiting
	// originator) have been handled.
	gone bool
	// counted is the state the parent's Members count the object in ("" for none: made by
	// the step, or removed and counted out).
	counted string
	// outcome is how the running operation ends when it lands ("" for its plain success or
	// failure; see step.ends).
	outcome string
}

func (e *Engine) newStep(ctx context.Context, tenant string) *step {
	return &step{e: e, ctx: ctx, tenant: tenant, now: e.clock.Now(), objs: map[string]*change{}}
}

// track adds an object the caller has read to the step.
func (s *step) track(o *store.Object, k *lifecycle.Kind) *change {
	if c, ok := s.objs[o.ID]; ok {
		return c
	}
	c := &change{o: o, k: k, prev: o.Version, counted: o.State}
	s.add(c)
	return c
}

// add puts a change in the step's indexes.
func (s *step) add(c *change) {
	s.objs[c.o.ID] = c
	s.order = append(s.order, c.o.ID)
	if s.byParent == nil {
		s.byParent = map[string][]string{}
	}
	s.byParent[c.o.ParentID] = append(s.byParent[c.o.ParentID], c.o.ID)
}

// insert adds an object the step makes.
func (s *step) insert(o *store.Object, k *lifecycle.Kind) *change {
	c := &change{o: o, k: k, dirty: true}
	s.add(c)
	return c
}

// load returns an object of the step, reading it from the store the first time. Objects of
// kinds no longer loaded are reported as not found.
func (s *step) load(id string) (*change, error) {
	if c, ok := s.objs[id]; ok {
		if c.remove {
			return nil, store.ErrNotFound
		}
		return c, nil
	}
	o, err := s.e.store.Get(s.ctx, s.tenant, id)
	if err != nil {
		return nil, err
	}
	k, err := s.e.reg.Kind(o.Kind)
	if err != nil {
		return nil, store.ErrNotFound
	}
	return s.track(o, k), nil
}

// loadDue returns a due object of the step: as load does, except that the copy the schedule
// handed over with it (store.Scheduled.Object, a claim's) saves the read when the step does
// not hold the object yet. The commit compares its version, so a copy a request outdated
// since makes the step lose the race, as a stale read would.
func (s *step) loadDue(due store.Scheduled) (*change, error) {
	if _, held := s.objs[due.ID]; held || due.Object == nil || due.Object.Tenant != s.tenant {
		return s.load(due.ID)
	}
	k, err := s.e.reg.Kind(due.Object.Kind)
	if err != nil {
		return nil, store.ErrNotFound
	}
	return s.track(due.Object, k), nil
}

// list returns the objects f selects, as the step sees them: objects it made included, objects
// it removed left out, and those it changed re-checked against the filter.
func (s *step) list(f store.Filter) ([]*change, error) {
	var objs []*store.Object
	var err error
	if l, ok := s.e.store.(store.SkipLister); ok && f.Limit <= 0 {
		// The objects the step holds are listed below as it has them (every one it holds is
		// in s.order and s.byParent): the store need not decode them.
		objs, err = l.ListSkipping(s.ctx, s.tenant, f, func(id string) bool {
			_, held := s.objs[id]
			return held
		})
	} else {
		objs, err = s.e.store.List(s.ctx, s.tenant, f)
	}
	if err != nil {
		return nil, err
	}
	var out []*change
	seen := map[string]bool{}
	for _, o := range objs {
		seen[o.ID] = true
		c, ok := s.objs[o.ID]
		if !ok {
			k, err := s.e.reg.Kind(o.Kind)
			if err != nil {
				continue
			}
			c = s.track(o, k)
		}
		if !c.remove && f.Matches(c.o) {
			out = append(out, c)
		}
	}
	mine := s.order
	if f.ParentID != "" {
		mine = s.byParent[f.ParentID] // a parent is never given to an object in a step
	}
	for _, id := range mine {
		if c := s.objs[id]; !seen[id] && !c.remove && c.o.Tenant == s.tenant && f.Matches(c.o) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *change) int { return strings.Compare(a.o.ID, b.o.ID) })
	return out, nil
}

// depend records that the step's decision depended on c's existence and state (a create's
// parent, a guard's or a link's target): the commit re-checks it, so a racing change that
// would have changed the decision makes the step start over. Only the state is re-checked,
// not the version: a parent's derived status moves with every child that lands, and a
// decision never depends on it.
func (s *step) depend(c *change) {
	if c.prev == 0 {
		return // made by this step
	}
	if s.reads == nil {
		s.reads = map[string]string{}
	}
	if _, ok := s.reads[c.o.ID]; !ok {
		s.reads[c.o.ID] = c.o.State
	}
}

// dependSet records that the decision counted the objects f selects (read as members).
func (s *step) dependSet(f store.Filter, members []*change) {
	ids := make([]string, 0, len(members))
	for _, m := range members {
		if m.prev != 0 {
			ids = append(ids, m.o.ID)
		}
	}
	slices.Sort(ids)
	s.sets = append(s.sets, store.SetRead{Tenant: s.tenant, Filter: f, IDs: ids})
}

// event records an event of c and marks it changed.
func (c *change) event(ev store.Event) {
	c.evs = append(c.evs, ev)
	c.dirty = true
}

// commit finishes the step (removals' consequences, derived status) and writes it in one
// transaction. key records an idempotency key for the first object of the step.
func (s *step) commit(key string) error {
	if err := s.settle(); err != nil {
		return err
	}
	var b store.Batch
	b.Key, b.KeyHash, b.KeyAt, b.Background = key, s.keyHash, s.now, s.background
	var ids []string
	var written []*change
	for _, id := range s.order {
		c := s.objs[id]
		if !c.dirty && !c.remove {
			continue
		}
		if c.remove && c.prev == 0 {
			continue // made and removed in one step
		}
		for i := range c.evs {
			c.evs[i].ObjectID, c.evs[i].Tenant = c.o.ID, c.o.Tenant
		}
		w := store.Write{Object: c.o, Expect: c.prev, Remove: c.remove, Events: c.evs}
		if !c.remove {
			c.o.Version = c.prev + 1
			c.o.UpdatedAt = s.now
		}
		b.Writes = append(b.Writes, w)
		ids = append(ids, id)
		written = append(written, c)
	}
	if len(b.Writes) == 0 {
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(s.reads)) {
		if c := s.objs[id]; c.dirty || c.remove {
			continue // written: its version is compared
		}
		b.Reads = append(b.Reads, store.Read{Tenant: s.tenant, ID: id, State: s.reads[id]})
	}
	b.Sets, b.MaxObjects = s.sets, s.quota
	if err := s.e.store.Commit(s.ctx, b); err != nil {
		return err
	}
	for _, id := range ids {
		s.e.hub.notify(id)
	}
	s.e.feed.publish(s.tenant, ids)
	s.e.Kick()
	s.e.reportLandings(s.ctx, s.landings)
	s.e.checkInvariants(s.ctx, s.tenant, written)
	return nil
}

// settle applies what the step's changes imply until nothing more changes: a static object in
// a gone state is removed (with its children, by their delete policy), and derived status is
// recomputed for every object whose related objects changed.
func (s *step) settle() error {
	for range 100 {
		more := false
		for _, id := range slices.Clone(s.order) {
			c := s.objs[id]
			if !c.gone && (c.remove || (c.o.Op == nil && c.k.IsGone(c.o.State))) {
				c.remove, c.gone, more = true, true, true
				if err := s.removed(c); err != nil {
					return err
				}
			}
		}
		changed, err := s.derive()
		if err != nil {
			return err
		}
		if !more && !changed {
			return nil
		}
	}
	return errors.New("step does not settle: relations loop")
}

// derive recomputes the derived status of every object with a derive rule that the step
// changed, or whose feeding children it changed, counting those children's moves into the
// parent's Members first. It reports whether anything changed.
func (s *step) derive() (bool, error) {
	targets := map[string]bool{}
	for _, id := range s.order {
		c := s.objs[id]
		if !c.dirty && !c.remove {
			continue
		}
		if c.k.Derive != nil && !c.remove {
			targets[id] = true
		}
		if c.o.ParentID == "" || s.e.relationsOf(c.k.Name).derivedBy == nil {
			continue
		}
		targets[c.o.ParentID] = true
		if err := s.count(c); err != nil {
			return false, err
		}
	}
	changed := false
	for _, id := range slices.Sorted(maps.Keys(targets)) {
		c, err := s.load(id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, err
		}
		if c.k.Derive == nil {
			continue
		}
		d, err := s.derived(c)
		if err != nil {
			return false, err
		}
		if s.applyDerived(c, d) {
			changed = true
		}
	}
	return changed, nil
}

// count moves c in its parent's Members from the state it was counted in to the one it is in
// now (none once removed). A parent whose Members are not kept yet is counted from scratch.
func (s *step) count(c *change) error {
	now := c.o.State
	if c.remove {
		now = ""
	}
	if now == c.counted {
		return nil
	}
	p, err := s.load(c.o.ParentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.e.relationsOf(p.k.Name).countDerive == nil {
		return nil // a derivation that reads the children themselves: nothing is kept
	}
	if p.o.Members == nil {
		return s.recount(p)
	}
	if c.counted != "" {
		if p.o.Members[c.counted]--; p.o.Members[c.counted] <= 0 {
			delete(p.o.Members, c.counted)
		}
	}
	if now != "" {
		p.o.Members[now]++
	}
	c.counted = now
	p.dirty = true
	return nil
}

// recount counts p's feeding children into its Members, as the step sees them.
func (s *step) recount(p *change) error {
	kids, err := s.list(store.Filter{Kind: p.k.Derive.From, ParentID: p.o.ID})
	if err != nil {
		return err
	}
	p.o.Members = map[string]int{}
	for _, kid := range kids {
		p.o.Members[kid.o.State]++
	}
	// What the list leaves out (removed by the step) is counted out; the rest is counted in.
	for _, c := range s.objs {
		if c.o.ParentID == p.o.ID && c.o.Kind == p.k.Derive.From {
			c.counted = c.o.State
			if c.remove {
				c.counted = ""
			}
		}
	}
	p.dirty = true
	return nil
}

// derived runs c's derive function: over its Members when the derivation needs only counts,
// else over its feeding children.
func (s *step) derived(c *change) (lifecycle.Derived, error) {
	if f := s.e.relationsOf(c.k.Name).countDerive; f != nil {
		if c.o.Members == nil {
			if err := s.recount(c); err != nil {
				return lifecycle.Derived{}, err
			}
		}
		return f(view(c.o, c.k), c.o.Members), nil
	}
	f, ok := s.e.reg.Derivation(c.k.Derive)
	if !ok {
		return lifecycle.Derived{}, nil
	}
	kids, err := s.list(store.Filter{Kind: c.k.Derive.From, ParentID: c.o.ID})
	if err != nil {
		return lifecycle.Derived{}, err
	}
	views := make([]lifecycle.View, len(kids))
	for i, k := range kids {
		views[i] = view(k.o, k.k)
	}
	return f(view(c.o, c.k), views), nil
}

// applyDerived sets derived status fields, and the derived state when the kind says so and no
// operation runs. It reports whether the object changed.
func (s *step) applyDerived(c *change, d lifecycle.Derived) bool {
	changed := false
	for k, v := range d.Status {
		if !reflect.DeepEqual(jsonValue(c.o.Status[k]), jsonValue(v)) {
			c.o.Status[k] = jsonValue(v)
			changed = true
		}
	}
	// A held create has no children yet: its state is the hold, not what none of them say.
	if c.k.Derive.State && c.o.Op == nil && !c.k.IsHeld(c.o.State) && d.State != "" && d.State != c.o.State && c.k.IsStatic(d.State) {
		from := c.o.State
		c.o.State, c.o.StateSince = d.State, s.now
		c.o.Due = s.e.staticDue(c.o, c.k)
		c.evs = append(c.evs, store.Event{Time: s.now, Actor: string(lifecycle.ActorSystem), From: from, To: d.State,
			Message: "derived from its " + c.k.Derive.From + " objects"})
		changed = true
	}
	if changed {
		c.dirty = true
	}
	return changed
}

// view is what family functions see of an object.
func view(o *store.Object, k *lifecycle.Kind) lifecycle.View {
	v := lifecycle.View{ID: o.ID, Kind: o.Kind, Name: o.Name, State: o.State, Spec: o.Spec, Status: o.Status, Decl: k}
	if o.Op != nil {
		v.Action = o.Op.Action
		if a, ok := k.Action(o.Op.Action); ok {
			v.Target = a.Target(o.Op.From)
		}
	}
	return v
}

// writes reports whether the step writes o (changes or removes it).
func (s *step) writes(o *store.Object) bool {
	if o == nil {
		return false
	}
	c, ok := s.objs[o.ID]
	return ok && c.prev != 0 && (c.dirty || c.remove)
}
