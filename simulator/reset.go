package simulator

import (
	"context"
	"errors"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// Reset removes a tenant's objects and fault rules, or everyone's (the open single-tenant
// mode). Events of removed objects are kept.
func (e *Engine) Reset(ctx context.Context, tenant string, everyone bool) error {
	if everyone {
		e.faults.ResetAll()
		defer e.feed.publishReset(tenant, true)
		return e.store.Reset(ctx)
	}
	defer e.feed.publishReset(tenant, false)
	e.faults.Reset(tenant)
	objs, err := e.store.List(ctx, tenant, Filter{})
	if err != nil {
		return err
	}
	for _, o := range objs {
		unlock := e.lockObject(o.ID)
		err := deleteObject(ctx, e.store, tenant, o.ID, o.Version, []Event{{ObjectID: o.ID, Tenant: tenant, Time: e.clock.Now(),
			Actor: string(lifecycle.ActorSystem), From: o.State, To: o.State, Message: "removed by /v1/sim/reset"}})
		unlock()
		if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrVersion) {
			return err
		}
		e.hub.notify(o.ID)
	}
	e.Kick()
	return nil
}
