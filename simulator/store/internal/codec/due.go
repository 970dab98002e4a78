package codec

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// minDue is the earliest time Unix nanoseconds hold (1678); store.MaxDue the latest (2262).
var minDue = time.Unix(0, math.MinInt64)

// Due is a due time as the stores keep and order it: Unix nanoseconds (clamped to what they
// hold), not Valid when nothing is scheduled. A store answers NextDue from it; the exact time
// stays in the object's data.
type Due struct {
	Nanos int64
	Valid bool
}

// DueOf returns the due column of t.
func DueOf(t time.Time) Due {
	switch {
	case t.IsZero():
		return Due{}
	case t.Before(minDue):
		return Due{Nanos: math.MinInt64, Valid: true}
	case t.After(store.MaxDue):
		return Due{Nanos: math.MaxInt64, Valid: true}
	default:
		return Due{Nanos: t.UnixNano(), Valid: true}
	}
}

// InTurns picks the first n of the due objects of tenants (each tenant's earliest first) in
// turns over tenants, as a worker's round takes them: every tenant's earliest batch, then every
// tenant's next, earliest first within a turn (compare orders them). It returns them earliest
// first.
func InTurns[T any](tenants [][]T, n, batch int, compare func(a, b T) int) []T {
	type turn struct {
		o T
		n int
	}
	var turns []turn
	for _, due := range tenants {
		for i, o := range due {
			turns = append(turns, turn{o, i / batch})
		}
	}
	slices.SortFunc(turns, func(a, b turn) int { return cmp.Or(cmp.Compare(a.n, b.n), compare(a.o, b.o)) })
	out := make([]T, 0, min(n, len(turns)))
	for _, tn := range turns[:min(n, len(turns))] {
		out = append(out, tn.o)
	}
	slices.SortFunc(out, compare)
	return out
}
