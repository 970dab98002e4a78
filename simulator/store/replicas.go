package store

import (
	"context"
	"time"
)

// Optional capabilities of a store that several processes (lifecyclesim replicas) share. The
// memory and SQLite stores have one process and implement none; the PostgreSQL store
// implements all. The engine (and the HTTP layer, for dashboard sessions) uses them when its
// store has them.

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
	// Faults says another process changed the fault rules (FaultKeeper).
	Faults bool
	// Config says another process saved a new Config (ConfigKeeper).
	Config bool
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

// Claimer is a store whose processes (replicas) split the due work: each due object is
// landed by the process whose commit started its phase (or set its timer), which holds it in
// memory, and the objects of a process that stopped claiming for ttl (killed, or frozen) are
// taken over by the others. Landing is still the compare-and-set Commit, so an object two
// processes both hold (one slow past its ttl) never lands twice.
type Claimer interface {
	// ClaimDue returns up to n of the objects this process lands whose Due time is set and not
	// after now, in turns over tenants: every tenant's batch earliest first, batch objects at a
	// time, then every tenant's next. It returns them earliest first, each with its Object as
	// the store last committed or read it. Each call renews the process's hold on its objects
	// for ttl (at most every quarter of it).
	ClaimDue(ctx context.Context, now time.Time, n, batch int, ttl time.Duration) ([]Scheduled, error)
}

// DueRounder is a store that lists one round of the worker's due objects without reading
// every due object: the stores whose objects are in memory (memstore, sqlitestore). Without
// it the worker lists all that is due every round, which with 10,000 timers firing at once
// was O(due) per round of a few dozen landings.
type DueRounder interface {
	// DueRound lists up to n objects whose Due time is set and not after now, chosen as
	// ClaimDue chooses (without claiming them): in turns over tenants, batch objects of every
	// tenant's earliest first, then every tenant's next. It returns them earliest first.
	DueRound(ctx context.Context, now time.Time, n, batch int) ([]Scheduled, error)
}

// SkipLister is a store that lists objects without decoding those its caller already holds:
// an engine step lists a parent's children it holds (a lease's events, to derive its
// status, after it listed them to propagate to them) and would decode them again for nothing
// (a JSON decode is most of a list's cost).
type SkipLister interface {
	// ListSkipping returns what List returns but for the objects whose IDs skip reports (it
	// is called under the store's lock: it must not call the store); Limit counts the
	// objects returned.
	ListSkipping(ctx context.Context, tenant string, f Filter, skip func(id string) bool) ([]*Object, error)
}

// LineageGetter is a store whose every read is a round trip to a server (PostgreSQL) that
// reads an object with its ancestors in one: an action guarded by its parent's state reads
// both before it decides.
type LineageGetter interface {
	// GetLineage returns a tenant's object, then its parent, the parent's parent and so on,
	// at most depth ancestors (fewer where the chain ends or an ancestor is gone). It returns
	// ErrNotFound when the object itself is not there.
	GetLineage(ctx context.Context, tenant, id string, depth int) ([]*Object, error)
}

// CachedLineageGetter is a LineageGetter that keeps, per object, what this process last
// committed or read of it, so that a decision need not wait for a round trip.
type CachedLineageGetter interface {
	LineageGetter
	// GetLineageCached returns what GetLineage returns, from what this process last committed
	// or read when it holds the object and each ancestor asked for (cached true), else from a
	// read as GetLineage's. A cached answer may be stale (another process changed an object
	// and its notification has not come yet): use it only for a decision whose commit compares
	// the object's version and the ancestors' states (Batch.Reads), take its outcome only when
	// that commit writes the object, and decide anything else (a refusal, an answer with no
	// write) again from GetLineage. Never answer a read with it.
	GetLineageCached(ctx context.Context, tenant, id string, depth int) (objs []*Object, cached bool, err error)
}

// ClockAdvancer is a store that moves the saved clock offset forward atomically, so two
// processes advancing the shared clock at once both count.
type ClockAdvancer interface {
	// AdvanceClockOffset adds d to the saved offset, unless the sum passes limit, and returns
	// the new offset (or, with ok false, the offset left as it was).
	AdvanceClockOffset(ctx context.Context, d, limit time.Duration) (offset time.Duration, ok bool, err error)
}

// FaultKeeper is a store that keeps the fault rules, so that every process sharing it injects
// the same faults and counts their firings together.
type FaultKeeper interface {
	// FaultRules returns every tenant's rules, each tenant's in the order they were added.
	FaultRules(ctx context.Context) ([]FaultRule, error)
	// AddFaultRule stores r (its ID and Fired are the store's to set) and returns it as
	// stored, unless its tenant holds limit rules already (ok false).
	AddFaultRule(ctx context.Context, r FaultRule, limit int) (stored FaultRule, ok bool, err error)
	// DeleteFaultRule removes a tenant's rule, or returns ErrNotFound.
	DeleteFaultRule(ctx context.Context, tenant, id string) error
	// DeleteFaultRules removes a tenant's rules, or everyone's.
	DeleteFaultRules(ctx context.Context, tenant string, everyone bool) error
	// FireFaultRule counts one firing of a tenant's rule, unless it has fired Count times
	// already (Count > 0) or is gone (ok false). fired is its count after.
	FireFaultRule(ctx context.Context, tenant, id string) (fired int64, ok bool, err error)
}

// FaultRule is a fault rule as a FaultKeeper keeps it.
type FaultRule struct {
	// ID is unique in the store; Tenant is the rule's owner.
	ID, Tenant string
	// Rule is the rule as its user encoded it: the store does not read it.
	Rule []byte
	// Count is how many times the rule may fire (0: without end); Fired how many it has.
	Count, Fired int64
}

// ConfigKeeper is a store that keeps the simulator's runtime settings, so that a change on one
// process is in force on every process sharing it.
type ConfigKeeper interface {
	// Config returns the settings last saved (ok false when none were).
	Config(ctx context.Context) (c Config, ok bool, err error)
	// SetConfig saves c.
	SetConfig(ctx context.Context, c Config) error
}

// Config is the simulator's runtime settings.
type Config struct {
	TimeScale float64       `json:"time_scale"`
	HealAfter time.Duration `json:"heal_after_ns"`
}

// SessionKeeper keeps the dashboard's sessions: the one session interface, which the
// dashboard keeps in memory itself (dashboard.SessionStore is this type) and a store may
// implement so that a browser signed in through one process is signed in on every process
// sharing it. It holds no secret a browser could use: keys are the SHA-256 of the browsers'
// cookies, never the cookies, and a session holds the SHA-256 of the token it signed in with.
type SessionKeeper interface {
	// CreateSession stores s, first removing its tenant's sessions that expired by now and,
	// when it then holds limit or more, those that expire first, so that it holds at most limit.
	CreateSession(ctx context.Context, s Session, now time.Time, limit int) error
	// Session returns the session of key unless it expired by now (ok false), and extends it
	// to expire ttl after now (skipping extensions of a minute or less, which would write
	// for every request).
	Session(ctx context.Context, key []byte, now time.Time, ttl time.Duration) (s Session, ok bool, err error)
	// EndSession removes a session (there is no error for one that is gone).
	EndSession(ctx context.Context, key []byte) error
}

// Session is a signed-in browser as a SessionKeeper keeps it.
type Session struct {
	// Key is the digest of the session's cookie.
	Key []byte
	// Tenant is the session's tenant (any bytes).
	Tenant string
	// TokenHash is the digest of the token it signed in with; CSRF is the CSRF token its
	// state-changing requests must carry.
	TokenHash []byte
	CSRF      string
	// Expires is when it ends unless used.
	Expires time.Time
}
