package store

import (
	"context"
	"time"
)

// Optional capabilities of a store that several processes (lifecyclesim replicas) share. The
// memory and SQLite stores have one process and implement neither; the PostgreSQL store
// implements both. The engine uses them when its store has them.

// Notifier is a store that reports the changes other processes commit, so that long-polls and
// change feeds on this process are woken by them.
type Notifier interface {
	// Changes delivers, until ctx ends (then it closes the channel), what other processes
	// commit from now on. Deliveries may come late or be lost (a notification connection that
	// died): the store then says so with Lost, and sends Poll regularly, so that a reader that
	// re-reads what it waits for on those is late by a bounded delay at most.
	Changes(ctx context.Context) (<-chan Changes, error)
}

// Changes is what a Notifier delivers at once.
type Changes struct {
	// Objects are objects another process committed a change to (written or removed).
	Objects []ChangedObject
	// Clock says another process saved a new clock offset.
	Clock bool
	// Lost says changes may have been missed (the notification connection was restored, or
	// another process reset the store): everything may have changed.
	Lost bool
	// Poll is the regular fallback: a change may have been missed without the store knowing
	// (a process that died between its commit and its notification), so waiters re-read.
	Poll bool
}

// ChangedObject names one changed object.
type ChangedObject struct {
	Tenant, ID string
}

// Claimer is a store whose schedule several processes share: each due object is handed to
// one process at a time, for ttl, so the processes split the due work. A claim ends when the
// object is next written or when ttl passes (a process killed holding claims loses them then);
// landing is still the compare-and-set Commit, so a claim that expired while its holder was
// still at work never makes an object land twice.
type Claimer interface {
	// ClaimDue claims up to n objects whose Due time is set and not after now and that no other
	// owner holds a live claim on (owner's own claims are taken again), in turns over tenants:
	// every tenant's batch earliest first, batch objects at a time, then every tenant's next.
	// It returns them earliest first.
	ClaimDue(ctx context.Context, now time.Time, owner string, n, batch int, ttl time.Duration) ([]Scheduled, error)
}

// ClockAdvancer is a store that moves the saved clock offset forward atomically, so two
// processes advancing the shared clock at once both count.
type ClockAdvancer interface {
	// AdvanceClockOffset adds d to the saved offset, unless the sum passes limit, and returns
	// the new offset (or, with ok false, the offset left as it was).
	AdvanceClockOffset(ctx context.Context, d, limit time.Duration) (offset time.Duration, ok bool, err error)
}
