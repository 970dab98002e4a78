package table

import (
	"fmt"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// Check verifies every compare-and-set of a batch, against the store as it is before the
// batch: all or nothing. An object is named once a batch (a second write could not be checked
// against the first).
func (t *Table) Check(b store.Batch) error {
	if b.Key != "" && b.KeyAt.IsZero() {
		return fmt.Errorf("%w: an idempotency key without the time it was recorded", store.ErrInvalidBatch)
	}
	named := make(map[string]bool, len(b.Writes))
	for _, w := range b.Writes {
		if named[w.Object.ID] {
			return fmt.Errorf("%w: the batch writes %s twice", store.ErrInvalidBatch, w.Object.ID)
		}
		named[w.Object.ID] = true
		cur, ok := t.Lookup(w.Object.ID)
		switch {
		case w.Expect == 0 && !w.Remove:
			if ok {
				return store.ErrExists
			}
		case !ok || cur.Tenant != w.Object.Tenant:
			return store.ErrNotFound
		case cur.Version != w.Expect:
			return store.ErrVersion
		}
	}
	for _, r := range b.Reads {
		if cur, ok := t.Lookup(r.ID); !ok || cur.Tenant != r.Tenant || cur.State != r.State {
			return store.ErrVersion
		}
	}
	for _, r := range b.Sets {
		if err := t.checkSet(r); err != nil {
			return err
		}
	}
	if b.MaxObjects > 0 {
		if err := t.checkQuota(b); err != nil {
			return err
		}
	}
	return nil
}

// checkSet re-checks a list a decision read (under the write lock).
func (t *Table) checkSet(r store.SetRead) error {
	f := store.Filter{Kind: r.Filter.Kind, ParentID: r.Filter.ParentID, Link: r.Filter.Link}
	if t.needsIndex(f) {
		if err := t.buildIndex(f.Link[0]); err != nil {
			return err
		}
	}
	i := 0
	same := true
	t.visit(r.Tenant, f, func(e *Entry) bool {
		if i >= len(r.IDs) || r.IDs[i] != e.ID() {
			same = false
			return false
		}
		i++
		return true
	})
	if !same || i != len(r.IDs) {
		return store.ErrVersion
	}
	return nil
}

// checkQuota refuses a batch that takes a tenant past b.MaxObjects.
func (t *Table) checkQuota(b store.Batch) error {
	added := map[string]int{}
	for _, w := range b.Writes {
		switch {
		case w.Remove:
			added[w.Object.Tenant]--
		case w.Expect == 0:
			added[w.Object.Tenant]++
		}
	}
	for tenant, n := range added {
		if n <= 0 {
			continue
		}
		held := 0
		if tn := t.tenants[tenant]; tn != nil {
			held = tn.n
		}
		if held+n > b.MaxObjects {
			return &store.QuotaError{Tenant: tenant, Max: b.MaxObjects, Held: held, Asked: n}
		}
	}
	return nil
}
