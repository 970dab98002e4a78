package table

import (
	"context"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// The Store's reads, shared by the memory and SQLite stores. A read whose caller has gone
// answers with its context's error, as a database would.

// Reader is the part of a Store (and of its optional capabilities store.SkipLister and
// store.DueRounder) a backend serves from its Table. A backend embeds a Reader holding its
// table to have exactly these methods, and none of the table's others.
type Reader interface {
	Get(ctx context.Context, tenant, id string) (*store.Object, error)
	List(ctx context.Context, tenant string, f store.Filter) ([]*store.Object, error)
	ListSkipping(ctx context.Context, tenant string, f store.Filter, skip func(id string) bool) ([]*store.Object, error)
	Due(ctx context.Context, now time.Time) ([]store.Scheduled, error)
	DueRound(ctx context.Context, now time.Time, n, batch int) ([]store.Scheduled, error)
	NextDue(ctx context.Context) (time.Time, bool, error)
	CountObjects(ctx context.Context, tenant string) (int, error)
	Counts(ctx context.Context) (map[[2]string]int, error)
}

var _ Reader = (*Table)(nil)

// Get implements store.Store.
func (t *Table) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	p, ok := t.get(tenant, id)
	t.mu.RUnlock()
	if !ok {
		return nil, store.ErrNotFound
	}
	return p.decode()
}

// List implements store.Store.
func (t *Table) List(ctx context.Context, tenant string, f store.Filter) ([]*store.Object, error) {
	return t.ListSkipping(ctx, tenant, f, nil)
}

// ListSkipping implements store.SkipLister.
func (t *Table) ListSkipping(ctx context.Context, tenant string, f store.Filter, skip func(id string) bool) ([]*store.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	for t.needsIndex(f) { // a Reset between the two locks drops the index again
		t.mu.RUnlock()
		t.mu.Lock()
		err := t.buildIndex(f.Link[0])
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
		t.mu.RLock()
	}
	ps := t.list(tenant, f, skip)
	t.mu.RUnlock()
	out := make([]*store.Object, len(ps))
	for i, p := range ps {
		o, err := p.decode()
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// Due implements store.Store.
func (t *Table) Due(ctx context.Context, now time.Time) ([]store.Scheduled, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.dueBy(now), nil
}

// DueRound implements store.DueRounder.
func (t *Table) DueRound(ctx context.Context, now time.Time, n, batch int) ([]store.Scheduled, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.dueRound(now, n, max(batch, 1)), nil
}

// NextDue implements store.Store.
func (t *Table) NextDue(context.Context) (time.Time, bool, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	next, ok := t.nextDue()
	return next, ok, nil
}

// CountObjects implements store.Store.
func (t *Table) CountObjects(_ context.Context, tenant string) (int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if tn := t.tenants[tenant]; tn != nil {
		return tn.n, nil
	}
	return 0, nil
}

// Counts implements store.Store.
func (t *Table) Counts(context.Context) (map[[2]string]int, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.kindStateCounts(), nil
}
