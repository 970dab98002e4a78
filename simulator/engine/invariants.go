package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// invariantChecker checks the kinds' cross-object invariants (Blazar's lease ↔ reservation ↔
// event table, an MCI's aggregate) after commits, when enabled: in every test, and at runtime
// with --check-invariants. Violations are logged, counted for /metrics and kept for tests.
type invariantChecker struct {
	enabled     bool
	onViolation func(invariant string)

	mu         sync.Mutex
	violations []error
}

// Violations returns the invariant violations seen so far.
func (e *Engine) Violations() []error {
	e.invariants.mu.Lock()
	defer e.invariants.mu.Unlock()
	return append([]error(nil), e.invariants.violations...)
}

// checkInvariants checks the invariants of the objects a commit wrote (removals aside) and of
// their parents. Only objects of kinds that have invariants are read: the step knows the kinds
// of what it wrote, and a parent's kind from its child's.
func (e *Engine) checkInvariants(ctx context.Context, tenant string, written []*change) {
	if !e.invariants.enabled {
		return
	}
	seen := map[string]bool{}
	check := func(id string, k *lifecycle.Kind) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		if k == nil || len(k.Invariants) > 0 || e.relationsOf(k.Name).countDerive != nil { // an unknown kind is read to learn it
			e.checkObject(ctx, tenant, id)
		}
	}
	for _, c := range written {
		e.checkLinked(ctx, tenant, c)
		if c.remove {
			continue
		}
		check(c.o.ID, c.k)
		if c.o.ParentID != "" {
			check(c.o.ParentID, e.parentKind(c.k))
		}
	}
}

// parentKind returns the kind of k's parents, or nil if the registry does not say.
func (e *Engine) parentKind(k *lifecycle.Kind) *lifecycle.Kind {
	if k.Parent == nil {
		return nil
	}
	pk, err := e.reg.Kind(k.Parent.Kind)
	if err != nil {
		return nil
	}
	return pk
}

// checkObject checks one object's invariants against its children, on a stable read: the
// object's version must not move while its children are read (every change to a child of a
// kind with invariants commits with a change to the object), else the read is retried.
func (e *Engine) checkObject(ctx context.Context, tenant, id string) {
	for range 5 {
		o, err := e.store.Get(ctx, tenant, id)
		if err != nil {
			return
		}
		k, err := e.reg.Kind(o.Kind)
		if err != nil || (len(k.Invariants) == 0 && e.relationsOf(k.Name).countDerive == nil) {
			return
		}
		kids, err := e.store.List(ctx, tenant, store.Filter{ParentID: id})
		if err != nil {
			return
		}
		again, err := e.store.Get(ctx, tenant, id)
		if err != nil || again.Version != o.Version {
			continue
		}
		e.checkMembers(o, k, kids)
		views := make([]lifecycle.View, 0, len(kids))
		for _, kid := range kids {
			if kk, err := e.reg.Kind(kid.Kind); err == nil {
				views = append(views, view(kid, kk))
			}
		}
		for _, name := range k.Invariants {
			f, ok := e.reg.Invariant(name)
			if !ok {
				continue
			}
			if err := f(view(o, k), views); err != nil {
				e.violation(name, err)
			}
		}
		return
	}
}

// checkMembers checks the Members the engine keeps as children move against a full recount.
func (e *Engine) checkMembers(o *store.Object, k *lifecycle.Kind, kids []*store.Object) {
	if o.Members == nil || e.relationsOf(k.Name).countDerive == nil {
		return
	}
	want := map[string]int{}
	for _, kid := range kids {
		if kid.Kind == k.Derive.From {
			want[kid.State]++
		}
	}
	if !maps.Equal(o.Members, want) {
		e.violation("members", fmt.Errorf("%s %s: members %v, but its %s objects are %v", k.Name, o.ID, o.Members, k.Derive.From, want))
	}
}

func (e *Engine) violation(name string, err error) {
	e.invariants.mu.Lock()
	e.invariants.violations = append(e.invariants.violations, errors.Join(errors.New("invariant "+name), err))
	e.invariants.mu.Unlock()
	if e.invariants.onViolation != nil {
		e.invariants.onViolation(name)
	}
	e.log.Warn("invariant violated", slog.String("invariant", name), slog.Any("err", err))
}

// checkLinked checks the links invariant for an object a commit wrote: none of its links names
// an object that is gone, and when it was removed no link names it. A link is dangling only
// when a fresh read of the linking object still names a target that is gone (a removal clears
// its linkers in its own commit).
func (e *Engine) checkLinked(ctx context.Context, tenant string, c *change) {
	if c.remove {
		for _, lr := range e.relationsOf(c.k.Name).linkedBy {
			linkers, err := e.store.List(ctx, tenant, store.Filter{Kind: lr.kind.Name, Link: [2]string{lr.link.Field, c.o.ID}})
			if err == nil && len(linkers) > 0 {
				e.violation("links", fmt.Errorf("%s %s: %s names %s %s, which is gone", lr.kind.Name, linkers[0].ID, lr.link.Field, c.k.Name, c.o.ID))
			}
		}
		return
	}
	for _, l := range c.k.Links {
		id, _ := c.o.Spec[l.Field].(string)
		if id == "" {
			continue
		}
		if _, err := e.store.Get(ctx, tenant, id); !errors.Is(err, store.ErrNotFound) {
			continue
		}
		again, err := e.store.Get(ctx, tenant, c.o.ID)
		if err != nil {
			continue
		}
		if v, _ := again.Spec[l.Field].(string); v == id {
			e.violation("links", fmt.Errorf("%s %s: %s names %s %s, which is gone", c.k.Name, c.o.ID, l.Field, l.Kind, id))
		}
	}
}
