package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrVersion is returned by Store.Commit when an object's version is not the expected one, or
// a read or list the batch re-checks is no longer as read: someone else changed it first.
var ErrVersion = errors.New("version mismatch")

// ErrNotFound is returned by a store for an object it does not hold (for that tenant).
var ErrNotFound = errors.New("not found")

// ErrExists is returned by Store.Commit when an insert's ID is taken.
var ErrExists = errors.New("already exists")

// QuotaError is returned by Store.Commit for a batch that would take a tenant past
// Batch.MaxObjects: nothing is applied.
type QuotaError struct {
	Tenant string
	// Max is the quota, Held what the tenant holds before the batch, Asked how many objects the
	// batch adds (inserts less removals).
	Max, Held, Asked int
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("object quota %d: the tenant holds %d and the batch adds %d", e.Max, e.Held, e.Asked)
}

// ErrUnavailable marks a store error that is not the caller's fault and may pass by itself:
// the database cannot be reached, the disk is full, the store is not ready. The API answers it
// 503 with a Retry-After. A store marks such errors with Unavailable.
var ErrUnavailable = errors.New("the store is unavailable")

// Unavailable marks err (when not nil) as ErrUnavailable, its text unchanged.
func Unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return unavailableError{err}
}

type unavailableError struct{ err error }

func (e unavailableError) Error() string   { return e.err.Error() }
func (e unavailableError) Unwrap() []error { return []error{e.err, ErrUnavailable} }

// KeyTakenError is returned by Store.Commit for a batch whose idempotency key (Batch.Key) its
// tenant has recorded already, less than KeyRetention before the batch's KeyAt: nothing is
// applied. A key is claimed in the transaction of what it makes or starts, so of two requests
// with one key (a retry racing its first attempt, on this process or on another replica
// sharing the store) exactly one commits; the other gets this error, naming what the first
// recorded — the object to answer with, and the body hash it was bound to.
type KeyTakenError struct {
	Tenant, Key string
	// ID is the object the key was recorded for; BodyHash the hash it was recorded with.
	ID, BodyHash string
}

func (e *KeyTakenError) Error() string {
	return fmt.Sprintf("idempotency key taken: recorded for object %s", e.ID)
}

// KeyFree reports whether a key recorded at recorded may be claimed again by a batch whose
// KeyAt is at: once it is KeyRetention old, a store may have forgotten it, so it is free.
func KeyFree(recorded, at time.Time) bool {
	return recorded.Before(at.Add(-KeyRetention))
}

// ErrInvalidBatch is returned by Store.Commit for a batch that names an object twice.
var ErrInvalidBatch = errors.New("invalid batch")

// Store keeps objects, their events and idempotency records. Every method is safe for
// concurrent use. All writes go through Commit: one transaction of compare-and-sets on the
// versions of every object it touches, so a step that changes a parent, its children and the
// objects related to them lands whole or not at all.
type Store interface {
	// Commit applies a batch in one transaction: every write's object must be at its expected
	// version (or absent, for an insert), else nothing is applied and ErrVersion, ErrNotFound
	// or ErrExists is returned. Events are appended per object with gapless sequence numbers.
	Commit(ctx context.Context, b Batch) error
	// Get returns a copy of an object of a tenant ("" is the open single tenant).
	Get(ctx context.Context, tenant, id string) (*Object, error)
	// List returns a tenant's objects matching f, ordered by ID, at most f.Limit (0: all),
	// starting after f.After.
	List(ctx context.Context, tenant string, f Filter) ([]*Object, error)
	// Events returns an object's events in order (they outlive the object).
	Events(ctx context.Context, tenant, id string) ([]Event, error)
	// Due names every object (of every tenant) whose Due time is set and not after now,
	// earliest first.
	Due(ctx context.Context, now time.Time) ([]Scheduled, error)
	// NextDue returns the earliest Due time set, if any.
	NextDue(ctx context.Context) (time.Time, bool, error)
	// Idempotent returns the object ID recorded for a tenant's idempotency key, and the hash of
	// the request body it was recorded with ("" for records made before bodies were hashed).
	Idempotent(ctx context.Context, tenant, key string) (id, bodyHash string, ok bool, err error)
	// CountObjects returns how many objects a tenant holds (for its quota).
	CountObjects(ctx context.Context, tenant string) (int, error)
	// ClockOffset returns the simulated clock's offset from the wall clock, as last saved.
	ClockOffset(ctx context.Context) (time.Duration, error)
	// SetClockOffset saves the simulated clock's offset, so a restart keeps the time.
	SetClockOffset(ctx context.Context, d time.Duration) error
	// Counts returns the number of objects per kind and state (for metrics).
	Counts(ctx context.Context) (map[[2]string]int, error)
	// Removed returns the IDs of a tenant's removed objects whose events the store keeps
	// (Events reads them), in ID order.
	Removed(ctx context.Context, tenant string) ([]string, error)
	// Import inserts what an export of a tenant read (Import), as it is, in one transaction:
	// every ID it names must be new to the store (neither an object's nor a kept history's,
	// of any tenant), else nothing is applied and an *IDTakenError is returned.
	Import(ctx context.Context, im Import) error
	// Reset removes everything.
	Reset(ctx context.Context) error
	// Ping checks the store can serve reads and writes now (for /readyz).
	Ping(ctx context.Context) error
	// Close releases the store.
	Close() error
}

// Import is what Store.Import inserts into one tenant: objects and histories as an export
// read them (versions, due times, operations and event times as they were).
type Import struct {
	Tenant string
	// Objects are inserted as they are (their Tenant is the import's).
	Objects []*Object
	// Events are the histories of Objects and of removed objects (IDs Objects does not name),
	// each object's together and numbered from 1 without gaps, as Events returned them.
	Events []Event
	// MaxObjects, when positive, is the tenant's quota: an import that would take it past is
	// refused with a *QuotaError.
	MaxObjects int
	// FaultRules are the tenant's fault rules with their IDs and firings: a FaultKeeper
	// inserts them in the same transaction (an ID it holds is an *IDTakenError); other stores
	// ignore them (the engine keeps their rules).
	FaultRules []FaultRule
}

// IDTakenError is returned by Store.Import for an ID the store holds already: an object's,
// a removed object's history, or (What "fault rule") a fault rule's. It matches ErrExists.
type IDTakenError struct {
	What, ID string
}

func (e *IDTakenError) Error() string {
	return fmt.Sprintf("%s ID %s is taken", e.What, e.ID)
}

// Is makes an IDTakenError match ErrExists.
func (e *IDTakenError) Is(target error) bool { return target == ErrExists }

// CheckImport checks an import's shape before a store applies it: objects of its tenant, named
// once; histories of its tenant, each object's together and numbered 1, 2, ... It returns the
// IDs of the histories in their order.
func CheckImport(im Import) ([]string, error) {
	seen := map[string]bool{}
	for _, o := range im.Objects {
		if o == nil || o.ID == "" || o.Tenant != im.Tenant {
			return nil, fmt.Errorf("%w: an import's objects are of its tenant and have IDs", ErrInvalidBatch)
		}
		if seen[o.ID] {
			return nil, fmt.Errorf("%w: the import names %s twice", ErrInvalidBatch, o.ID)
		}
		seen[o.ID] = true
	}
	var ids []string
	done := map[string]bool{}
	for i, e := range im.Events {
		if e.Tenant != im.Tenant || e.ObjectID == "" {
			return nil, fmt.Errorf("%w: an import's events are of its tenant and name their object", ErrInvalidBatch)
		}
		first := i == 0 || im.Events[i-1].ObjectID != e.ObjectID
		switch {
		case first && (done[e.ObjectID] || e.Seq != 1):
			return nil, fmt.Errorf("%w: the events of %s are not together, numbered from 1", ErrInvalidBatch, e.ObjectID)
		case !first && e.Seq != im.Events[i-1].Seq+1:
			return nil, fmt.Errorf("%w: the events of %s skip from %d to %d", ErrInvalidBatch, e.ObjectID, im.Events[i-1].Seq, e.Seq)
		}
		if first {
			done[e.ObjectID] = true
			ids = append(ids, e.ObjectID)
		}
	}
	return ids, nil
}

// MaxDue is the latest Due time every store keeps exactly: the engine saturates due times at
// it (stores order due times as Unix nanoseconds, which end in 2262).
var MaxDue = time.Unix(0, math.MaxInt64)

// KeyRetention is how long a store keeps an idempotency key: a retry within it gets the
// first answer (every POST of the Go client carries a key, and retries come within minutes).
const KeyRetention = 24 * time.Hour

// Batch is what one engine step writes.
type Batch struct {
	Writes []Write
	// Key, when set, records the tenant's idempotency key for the first write's object, in the
	// same transaction (an accepted create or action and its key land together). A key the
	// tenant recorded already (and not KeyRetention before KeyAt) is never overwritten: the
	// batch is refused with a *KeyTakenError.
	Key string
	// KeyHash is the hash of the request body the key is bound to.
	KeyHash string
	// KeyAt is when the key was recorded (the engine's clock), required with Key. A store
	// keeps a key for at least KeyRetention after it and forgets it once a key recorded later
	// is KeyRetention newer, so keys do not pile up for ever.
	KeyAt time.Time
	// Background commits return once the batch is applied, without waiting for it to be
	// durable: nobody is answered on the strength of it (the worker's moves, which it redoes
	// from the due times a store holds if a crash loses them). A later commit that is waited
	// for makes it durable too.
	Background bool
	// Reads are what the step's decision read without writing it (a create's parent, guard and
	// link targets), re-checked in the same compare-and-set: when one is no longer as read,
	// nothing is applied and ErrVersion is returned (the step re-reads and decides again).
	Reads []Read
	// Sets are the lists a decision counted (the children a refuse delete policy counted, the
	// objects a link names), re-checked likewise: a member added or gone is ErrVersion.
	Sets []SetRead
	// MaxObjects, when positive, is the quota of the tenant the batch adds objects to: a batch
	// whose inserts (less its removals) would take the tenant past it is refused with a
	// *QuotaError, counted in the same transaction, so racing batches cannot pass it together.
	MaxObjects int
}

// Read is one object as a decision read it: it must still exist (for its tenant) in State.
// Only the state is compared, not the version: a parent's derived status (an MCI's counts)
// moves with every child that lands, and those moves do not change a decision that depended
// on the parent's existence and state.
//
// The memory and SQLite stores check reads under the table's write lock. A store over a SQL
// database with concurrent transactions (PostgreSQL) reads the row FOR SHARE and compares its
// state in the transaction: a child's create Reads its parent and the parent's delete writes
// it, so the row lock orders the two, and a SetRead re-listed in the same transaction then
// sees every child committed before it. Its quota is a per-tenant count updated in the
// transaction (UPDATE ... SET n = n + added WHERE n + added <= max).
type Read struct {
	Tenant, ID, State string
}

// SetRead is a list a decision read: the IDs of the tenant's objects Filter selects (its
// Kind, ParentID and Link; not State, After or Limit) must be exactly IDs, in ID order.
type SetRead struct {
	Tenant string
	Filter Filter
	IDs    []string
}

// Write is one object's part of a Batch.
type Write struct {
	// Object is the object as it is to be stored; for a removal only ID and Tenant are used.
	Object *Object
	// Expect is the version the store must hold; 0 inserts a new object.
	Expect int64
	// Remove deletes the object.
	Remove bool
	// Events are appended to the object's history.
	Events []Event
}

// Scheduled names an object the worker must look at (it reads the object for the rest).
type Scheduled struct {
	ID, Tenant, Kind string
	// Object, when not nil, is the object as the store read it while listing it (a
	// Claimer's claim): the worker lands it from this copy instead of reading it again,
	// and the landing's commit compares its version as it would a fresh read's.
	Object *Object
}

// Filter selects objects in List.
type Filter struct {
	Kind     string
	ParentID string
	State    string
	// Link selects objects whose spec field Link[0] equals Link[1] (disks of a machine).
	Link  [2]string
	After string
	Limit int
}

// Object is a stored object: the wire object plus what the engine needs.
type Object struct {
	ID       string         `json:"id"`
	Tenant   string         `json:"tenant"`
	Kind     string         `json:"kind"`
	Name     string         `json:"name"`
	ParentID string         `json:"parent_id,omitempty"`
	State    string         `json:"state"`
	Spec     map[string]any `json:"spec"`
	// Defaulted lists the paths of Spec the simulator filled in (declared defaults) rather
	// than a client wrote (lifecycle.Defaulted); nil when not known (objects stored before it
	// was kept, and children made from their parent's spec).
	Defaulted []string       `json:"defaulted"`
	Status    map[string]any `json:"status"`
	Op        *Operation     `json:"operation,omitempty"`
	Version   int64          `json:"version"`
	// Due is when the engine must next look at the object (a phase completes, a system or
	// timer action starts, a hung phase is healed); zero when nothing is scheduled.
	Due time.Time `json:"due,omitzero"`
	// CascadeFrom is set only in stores written by versions before relations: a landing (from
	// this state) whose propagations were not applied yet. The engine finishes them.
	CascadeFrom string `json:"cascade_from,omitempty"`
	// Members counts, per state, the children that feed the object's derived status (its
	// kind's derive.children), kept by the engine in every step that moves one of them, so a
	// derivation never re-reads them all. Nil when not kept yet (it is counted from the
	// children then).
	Members map[string]int `json:"members,omitempty"`
	// Queue is set while the object waits in an originator's limit lane for a propagated
	// operation (or holds a create it may not start yet): see Lane.
	Queue      *QueueEntry `json:"queue,omitempty"`
	StateSince time.Time   `json:"state_since"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
}

// Operation is the action running on an object.
type Operation struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	// From is the static state the action started from (where a rollback returns).
	From string `json:"from"`
	// Phase indexes the action's phases, or the failure path's when Failing.
	Phase     int       `json:"phase"`
	Failing   bool      `json:"failing,omitempty"`
	Error     string    `json:"error,omitempty"`
	Force     bool      `json:"force,omitempty"`
	Hung      bool      `json:"hung,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// PhaseStarted is when the current phase began (self-healing measures from it).
	PhaseStarted time.Time `json:"phase_started"`
	// PrevSpec is the spec before an update action, restored when it rolls back.
	PrevSpec map[string]any `json:"prev_spec"`

	// Relations of the operation (see engine/relations.go). Waits counts the propagated
	// operations it waits for (each names it in WaitedBy and WaitedOp) and Lanes holds those a
	// limit runs and queues; Parked is set when its last phase is over and it waits only for
	// them. WaitedBy names the object whose operation waits for this one, WaitedOp that
	// operation. Followers end with this operation; Follows names the object whose operation
	// this one ends with. Remove removes the object when the operation lands (a scale-in).
	// Held is a create queued in its originator's lane: its first phase starts when the lane
	// has room. Nothing here grows with the number of related objects but Followers (read
	// once, when the operation lands), so a landing of one of 10,000 children writes a small
	// originator.
	Waits     int                         `json:"waits,omitempty"`
	Lanes     map[string]map[string]*Lane `json:"lanes,omitempty"`
	Parked    bool                        `json:"parked,omitempty"`
	WaitedBy  string                      `json:"waited_by,omitempty"`
	WaitedOp  string                      `json:"waited_op,omitempty"`
	Lane      []string                    `json:"lane,omitempty"`
	Held      bool                        `json:"held,omitempty"`
	Followers []string                    `json:"followers,omitempty"`
	Follows   string                      `json:"follows,omitempty"`
	Remove    bool                        `json:"remove,omitempty"`
	// Waiting and Queued are the lists of waited-for and queued objects stores written by
	// earlier versions hold; the engine turns them into Waits and Lanes when it meets them.
	Waiting []string `json:"waiting,omitempty"`
	Queued  []string `json:"queued,omitempty"`
	// Deletion is the deletion mode a DELETE runs this operation for: when it lands where
	// another of the mode's actions runs, that one starts (terminate, then delete).
	Deletion string `json:"deletion,omitempty"`
}

// Lane is one lane of a propagation limit (per outer and inner value, say a CSP's region):
// how many of the originator's propagated operations run in it, and the queue of objects
// waiting for room, chained through their QueueEntry.Next from Head to Tail.
type Lane struct {
	Running int    `json:"running,omitempty"`
	Queued  int    `json:"queued,omitempty"`
	Head    string `json:"head,omitempty"`
	Tail    string `json:"tail,omitempty"`
	// HeadName is the name of the object at Head: lanes start in the name order of their
	// queues.
	HeadName string `json:"head_name,omitempty"`
}

// QueueEntry is an object's place in an originator's lane.
type QueueEntry struct {
	// By and Op name the originator and its operation; Action is what runs when the object's
	// turn comes (a held create has its operation already).
	By     string `json:"by"`
	Op     string `json:"op"`
	Action string `json:"action,omitempty"`
	// Lane is the outer and inner value of the lane; Next the object after this one, and
	// NextName its name.
	Lane     []string `json:"lane"`
	Next     string   `json:"next,omitempty"`
	NextName string   `json:"next_name,omitempty"`
}

// Event is one entry of an object's history.
type Event struct {
	ObjectID    string    `json:"object_id"`
	Tenant      string    `json:"tenant"`
	Seq         int64     `json:"seq"`
	Time        time.Time `json:"time"`
	Actor       string    `json:"actor"`
	From        string    `json:"from,omitempty"`
	To          string    `json:"to"`
	Action      string    `json:"action,omitempty"`
	OperationID string    `json:"operation_id,omitempty"`
	Error       string    `json:"error,omitempty"`
	Message     string    `json:"message,omitempty"`
}

// Pending counts what an operation still waits for: the propagated and child operations it
// waits for and the objects queued in its lanes (held creates are in both: the count is for
// telling none from some).
func (op *Operation) Pending() int {
	n := op.Waits + len(op.Waiting) + len(op.Queued)
	for _, lanes := range op.Lanes {
		for _, l := range lanes {
			n += l.Queued
		}
	}
	return n
}

// Matches reports whether an object passes the filter (tenant aside).
func (f Filter) Matches(o *Object) bool {
	if f.Kind != "" && o.Kind != f.Kind {
		return false
	}
	if f.ParentID != "" && o.ParentID != f.ParentID {
		return false
	}
	if f.State != "" && o.State != f.State {
		return false
	}
	if f.Link[0] != "" {
		if v, _ := o.Spec[f.Link[0]].(string); v != f.Link[1] {
			return false
		}
	}
	return f.After == "" || o.ID > f.After
}
