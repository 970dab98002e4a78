// Package names keeps, per tenant, the names of a kind's objects for the dialects whose
// systems address objects by a name unique per project or namespace (a Blazar lease's name,
// a CB-Tumblebug MCI's ID): a lookup costs a map read and a read of the object it finds, not
// a list of every object.
package names

import (
	"context"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Refresh is how old a tenant's names may be before a lookup reads them again (on the
// engine's clock): what another replica or /v1 made since is seen after it.
const Refresh = time.Second

// Index keeps each tenant's names of one kind's objects.
type Index struct {
	mu      sync.Mutex
	tenants map[string]*Tenant
}

// Tenant is a tenant's names, name → object ID, as read at loaded and added since. Lock it
// around a lookup (and, to make a name's check and its create one step on this process,
// around both: replicas sharing a store may still race, as two API workers of the real
// system can).
type Tenant struct {
	sync.Mutex
	loaded time.Time
	ids    map[string]string
}

// Of returns the tenant's names.
func (n *Index) Of(tenant string) *Tenant {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tenants == nil {
		n.tenants = map[string]*Tenant{}
	}
	tn := n.tenants[tenant]
	if tn == nil {
		tn = &Tenant{}
		n.tenants[tenant] = tn
	}
	return tn
}

// Add records that the object id has name (after a create). The caller holds the lock.
func (tn *Tenant) Add(name, id string) {
	if tn.ids != nil {
		tn.ids[name] = id
	}
}

// Lookup returns the tenant's object of kind k named name, or nil when it has none. The
// names are read again when older than Refresh, or, with fresh, when name is not among them
// (a read by name must find what was made through /v1 a moment ago; a check that a name is
// free for a create need not). The caller holds the lock.
func (tn *Tenant) Lookup(ctx context.Context, eng *engine.Engine, tenant string, k *lifecycle.Kind, name string, fresh bool) (*engine.Object, error) {
	now := eng.Clock().Now()
	loaded := false
	if tn.ids == nil || now.Sub(tn.loaded) > Refresh || now.Before(tn.loaded) {
		if err := tn.load(ctx, eng, tenant, k, now); err != nil {
			return nil, err
		}
		loaded = true
	}
	for {
		id, ok := tn.ids[name]
		if ok {
			o, err := eng.Get(ctx, tenant, k, id)
			switch {
			case err == nil && o.Name == name:
				return o, nil
			case err != nil && engine.AsError(err).Code != wire.CodeNotFound:
				return nil, err
			}
			delete(tn.ids, name)
		}
		if !fresh || loaded {
			return nil, nil
		}
		if err := tn.load(ctx, eng, tenant, k, now); err != nil {
			return nil, err
		}
		loaded = true
	}
}

func (tn *Tenant) load(ctx context.Context, eng *engine.Engine, tenant string, k *lifecycle.Kind, now time.Time) error {
	objs, err := eng.List(ctx, tenant, engine.ListOptions{Kind: k.Name})
	if err != nil {
		return err
	}
	tn.ids, tn.loaded = make(map[string]string, len(objs)), now
	for _, o := range objs {
		tn.ids[o.Name] = o.ID
	}
	return nil
}
