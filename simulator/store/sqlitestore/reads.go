package sqlitestore

import (
	"context"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// The reads the table (package table) serves: objects and the schedule are in memory.

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	return s.t.Get(ctx, tenant, id)
}

// List implements store.Store.
func (s *Store) List(ctx context.Context, tenant string, f store.Filter) ([]*store.Object, error) {
	return s.t.List(ctx, tenant, f)
}

// ListSkipping implements store.SkipLister.
func (s *Store) ListSkipping(ctx context.Context, tenant string, f store.Filter, skip func(id string) bool) ([]*store.Object, error) {
	return s.t.ListSkipping(ctx, tenant, f, skip)
}

// Due implements store.Store.
func (s *Store) Due(ctx context.Context, now time.Time) ([]store.Scheduled, error) {
	return s.t.Due(ctx, now)
}

// DueRound implements store.DueRounder.
func (s *Store) DueRound(ctx context.Context, now time.Time, n, batch int) ([]store.Scheduled, error) {
	return s.t.DueRound(ctx, now, n, batch)
}

// NextDue implements store.Store.
func (s *Store) NextDue(ctx context.Context) (time.Time, bool, error) { return s.t.NextDue(ctx) }

// CountObjects implements store.Store.
func (s *Store) CountObjects(ctx context.Context, tenant string) (int, error) {
	return s.t.CountObjects(ctx, tenant)
}

// Counts implements store.Store.
func (s *Store) Counts(ctx context.Context) (map[[2]string]int, error) { return s.t.Counts(ctx) }
