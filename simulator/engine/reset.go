package engine

import (
	"context"
	"errors"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// resetRounds bounds how often a tenant reset lists what is left: objects the worker (or a
// request) changes while the reset runs are read again and removed in a later round.
const resetRounds = 50

// Reset removes a tenant's objects and fault rules, or everyone's (the open single-tenant
// mode). Events of removed objects are kept. It returns only once the tenant holds nothing:
// each object is removed at the version read under its lock, and a round that loses a race
// to another change lists again, until a list comes back empty.
func (e *Engine) Reset(ctx context.Context, tenant string, everyone bool) error {
	if everyone {
		defer e.feed.publishReset(tenant, true)
		err := errors.Join(e.faults.ResetAll(ctx), e.store.Reset(ctx))
		e.Kick()
		return err
	}
	defer e.feed.publishReset(tenant, false)
	if err := e.faults.Reset(ctx, tenant); err != nil {
		return err
	}
	defer e.Kick()
	for range resetRounds {
		objs, err := e.store.List(ctx, tenant, store.Filter{})
		if err != nil {
			return err
		}
		if len(objs) == 0 {
			return nil
		}
		for _, o := range objs {
			if err := e.removeForReset(ctx, tenant, o.ID); err != nil {
				return err
			}
		}
	}
	return errorf(wire.CodeBusy, "objects kept changing while the reset removed them; retry the reset")
}

// removeForReset removes one object at its current version, read under its lock.
func (e *Engine) removeForReset(ctx context.Context, tenant, id string) error {
	defer e.hub.notify(id)
	defer e.lockObject(id)()
	o, err := e.store.Get(ctx, tenant, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	err = e.store.Commit(ctx, store.Batch{Writes: []store.Write{{Object: &store.Object{ID: o.ID, Tenant: tenant}, Expect: o.Version, Remove: true,
		Events: []store.Event{{ObjectID: o.ID, Tenant: tenant, Time: e.clock.Now(),
			Actor: string(lifecycle.ActorSystem), From: o.State, To: o.State, Message: "removed by /v1/sim/reset"}}}}})
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrVersion) {
		return nil // changed or gone meanwhile: the next round sees it
	}
	return err
}
