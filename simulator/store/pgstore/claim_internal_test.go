package pgstore

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// The due work a replica holds answers a round and the next due time as a plain list of what
// it was given would, whatever order the puts, moves, landings and removals come in: a later
// version is never replaced by an earlier one, a round takes what is due in tenant turns.
func TestPGOwnedMatchesAList(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 8))
	var w pgOwned
	type entry struct {
		tenant  string
		version int64
		due     int64 // 0: not held
	}
	model := map[string]*entry{}
	for step := range 20000 {
		id := fmt.Sprintf("o%03d", rng.IntN(300))
		e := model[id]
		if e == nil {
			e = &entry{tenant: fmt.Sprintf("t%d", rng.IntN(3))}
			model[id] = e
		}
		if rng.IntN(10) == 0 {
			w.remove(id)
			e.due = 0
		} else {
			version := e.version + int64(rng.IntN(3)) - 1 // now and then an earlier version, late
			due := codec.Due{Nanos: int64(rng.IntN(1000)), Valid: rng.IntN(4) > 0}
			tenant := e.tenant
			if rng.IntN(50) == 0 { // now and then the ID is another tenant's (an import after a removal)
				tenant = fmt.Sprintf("t%d", rng.IntN(3))
			}
			w.put(pgRow{cols: codec.Columns{ID: id, Tenant: tenant, Version: version}}, due)
			// An object held at a later version keeps it; one not held takes any.
			if e.due == 0 || version >= e.version {
				e.version, e.due, e.tenant = version, 0, tenant
				if due.Valid {
					e.due = due.Nanos + 1 // 1-based in the model: 0 is "not held"
				}
			}
		}
		if step%97 != 0 {
			continue
		}
		now, n, batch := int64(rng.IntN(1000)), 1+rng.IntN(40), 1+rng.IntN(5)
		var want []string
		type due struct {
			id, tenant string
			due        int64
		}
		var all []due
		for id, e := range model {
			if e.due != 0 && e.due-1 <= now {
				all = append(all, due{id, e.tenant, e.due - 1})
			}
		}
		slices.SortFunc(all, func(a, b due) int { return cmp.Or(cmp.Compare(a.due, b.due), cmp.Compare(a.id, b.id)) })
		rank, turn := map[string]int{}, map[string]int{}
		for _, d := range all {
			turn[d.id] = rank[d.tenant] / batch
			rank[d.tenant]++
		}
		picked := slices.Clone(all)
		slices.SortStableFunc(picked, func(a, b due) int { return cmp.Compare(turn[a.id], turn[b.id]) })
		picked = picked[:min(n, len(picked))]
		slices.SortFunc(picked, func(a, b due) int { return cmp.Or(cmp.Compare(a.due, b.due), cmp.Compare(a.id, b.id)) })
		for _, d := range picked {
			want = append(want, d.id)
		}
		var got []string
		for _, o := range w.due(now, n, batch) {
			got = append(got, o.row.cols.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: due(%d, %d, %d) = %v, want %v", step, now, n, batch, got, want)
		}
		var next int64
		ok := false
		for _, e := range model {
			if e.due != 0 && (!ok || e.due-1 < next) {
				next, ok = e.due-1, true
			}
		}
		if gotNext, gotOK := w.next(); gotNext != next || gotOK != ok {
			t.Fatalf("step %d: next() = %d, %v; want %d, %v", step, gotNext, gotOK, next, ok)
		}
	}
}
