package table

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/google/btree"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// dueBy names every object due at or before now, earliest first.
func (t *Table) dueBy(now time.Time) []store.Scheduled {
	var due []*Entry
	for _, tree := range t.due {
		due = t.dueIn(tree, now, -1, due)
	}
	slices.SortFunc(due, compareDue)
	return scheduled(due)
}

// dueIn appends to out the entries of a due tree due by now, earliest first, at most n of
// them (n < 0: all).
func (t *Table) dueIn(tree *btree.BTreeG[ref], now time.Time, n int, out []*Entry) []*Entry {
	limit := codec.DueOf(now).Nanos
	tree.Ascend(func(r ref) bool {
		e := t.entry(r)
		if e.Due.Nanos > limit || n == 0 {
			return false
		}
		out = append(out, e)
		n--
		return true
	})
	return out
}

// dueRound lists what ClaimDue would pick, without claims: the first n objects due by now
// in turns over tenants (codec.InTurns). It reads at most n objects of each tenant's tree: one
// tenant's 10,000 due objects cost a round what 128 do.
func (t *Table) dueRound(now time.Time, n, batch int) []store.Scheduled {
	var tenants [][]*Entry
	for _, tree := range t.due {
		tenants = append(tenants, t.dueIn(tree, now, n, nil))
	}
	return scheduled(codec.InTurns(tenants, n, batch, compareDue))
}

func compareDue(a, b *Entry) int {
	return cmp.Or(cmp.Compare(a.Due.Nanos, b.Due.Nanos), strings.Compare(a.ID(), b.ID()))
}

// scheduled lists entries as the schedule's callers see them.
func scheduled(due []*Entry) []store.Scheduled {
	out := make([]store.Scheduled, len(due))
	for i, e := range due {
		out[i] = store.Scheduled{ID: e.ID(), Tenant: e.Tenant, Kind: e.Kind}
	}
	return out
}

// nextDue returns the earliest due time: the earliest of the tenants' (there are few).
func (t *Table) nextDue() (time.Time, bool) {
	var first *Entry
	for _, tree := range t.due {
		if r, ok := tree.Min(); ok && (first == nil || compareDue(t.entry(r), first) < 0) {
			first = t.entry(r)
		}
	}
	if first == nil {
		return time.Time{}, false
	}
	return time.Unix(0, first.Due.Nanos).UTC(), true
}

// kindStateCounts copies the per-(kind, state) counts.
func (t *Table) kindStateCounts() map[[2]string]int {
	out := make(map[[2]string]int, len(t.counts))
	for k, v := range t.counts {
		out[k] = v.n
	}
	return out
}
