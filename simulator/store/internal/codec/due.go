package codec

import (
	"math"
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
