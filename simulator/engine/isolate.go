package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// An object the worker cannot advance — its step fails to commit whatever the reason (a value
// the store refuses, a kind no longer loaded, a store that refuses that one object) — is set
// aside on its own: it is retried after a backoff of its own, doubling from isolateBackoff up
// to isolateMaxBackoff, while the worker goes on with everything else at its usual pace. The
// failure is recorded on the object (its operation's error, status.worker_error, an event)
// when the store takes that record, logged, and counted (Options.OnIsolate).

const (
	// isolateBackoff is the first wait before an object the worker failed on is tried again.
	isolateBackoff = time.Second
	// isolateMaxBackoff bounds the wait between tries.
	isolateMaxBackoff = 5 * time.Minute
	// isolatePoll is how often the worker looks at the schedule while an object it set aside
	// is still listed as due (the store refused even the record of its failure, so its due
	// time could not move): often enough that another object's landing is late by this much
	// at most, not by a second.
	isolatePoll = 10 * time.Millisecond
	// workerErrorKey is the status field that holds the failure of an object set aside.
	workerErrorKey = "worker_error"
)

// isolation is what the engine remembers of an object the worker set aside.
type isolation struct {
	fails int
	until time.Time
	// recorded is set when the store took the record of the failure (the object's due time
	// moved to until); else the schedule still lists it as due.
	recorded bool
}

// isolated holds the objects the worker set aside, by ID.
type isolated struct {
	mu   sync.Mutex
	byID map[string]*isolation
}

// skip reports whether the worker leaves the object alone for now.
func (is *isolated) skip(id string, now time.Time) bool {
	is.mu.Lock()
	defer is.mu.Unlock()
	i, ok := is.byID[id]
	return ok && now.Before(i.until)
}

// clear forgets the object: it was advanced.
func (is *isolated) clear(id string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	delete(is.byID, id)
}

// unrecorded reports whether an object set aside is still listed as due at now.
func (is *isolated) unrecorded(now time.Time) bool {
	is.mu.Lock()
	defer is.mu.Unlock()
	for _, i := range is.byID {
		if !i.recorded && now.Before(i.until) {
			return true
		}
	}
	return false
}

// fail counts a failure of the object and returns its isolation (a copy) with the next try.
func (is *isolated) fail(id string, now time.Time) isolation {
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.byID == nil {
		is.byID = map[string]*isolation{}
	}
	// Forget objects not tried for long (removed meanwhile): the map stays small.
	for k, i := range is.byID {
		if now.Sub(i.until) > 2*isolateMaxBackoff {
			delete(is.byID, k)
		}
	}
	i := is.byID[id]
	if i == nil {
		i = &isolation{}
		is.byID[id] = i
	}
	i.fails++
	backoff := isolateMaxBackoff
	if i.fails <= 16 {
		backoff = min(isolateBackoff<<(i.fails-1), isolateMaxBackoff)
	}
	i.until, i.recorded = now.Add(backoff), false
	return *i
}

// setRecorded notes that the record of the object's failure is in the store.
func (is *isolated) setRecorded(id string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if i, ok := is.byID[id]; ok {
		i.recorded = true
	}
}

// IsolatedObjects is how many objects the worker has set aside (each retried after its own
// backoff).
func (e *Engine) IsolatedObjects() int {
	e.isolated.mu.Lock()
	defer e.isolated.mu.Unlock()
	return len(e.isolated.byID)
}

// isolatedError is the failure of an object the worker set aside: Tick returns these, and the
// worker's loop goes on at its usual pace after them.
type isolatedError struct {
	kind, id string
	err      error
}

func (e *isolatedError) Error() string {
	return fmt.Sprintf("%s %s: %v (set aside)", e.kind, e.id, e.err)
}

func (e *isolatedError) Unwrap() error { return e.err }

// onlyIsolated reports whether every error err joins is an isolatedError.
func onlyIsolated(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !onlyIsolated(e) {
				return false
			}
		}
		return true
	}
	var ie *isolatedError
	return errors.As(err, &ie)
}

// isolate sets the object aside after its step failed with cause: it is tried again after
// its backoff; the failure is logged, counted and recorded on the object (with its due time
// moved to the next try, so the schedule does not list it meanwhile). The record is written
// by a step of its own, which the store may refuse too: the in-memory backoff holds then.
func (e *Engine) isolate(ctx context.Context, due store.Scheduled, cause error) error {
	now := e.clock.Now()
	i := e.isolated.fail(due.ID, now)
	e.log.Warn("object set aside: it could not be advanced",
		slog.String("tenant", due.Tenant), slog.String("kind", due.Kind), slog.String("id", due.ID),
		slog.Any("err", cause), slog.Time("retry_at", i.until), slog.Int("attempt", i.fails))
	if e.onIsolate != nil {
		e.onIsolate(due.Kind)
	}
	// What the tenant sees says what happened and when it is tried again, not the cause: it
	// may be a store's or a driver's text, which is for the operator's log.
	msg := fmt.Sprintf("the simulator could not advance this object (the cause is in its log); it is tried again at %s (attempt %d)",
		i.until.Format(time.RFC3339), i.fails)
	rec := e.newStep(ctx, due.Tenant)
	rec.background = true
	c, err := rec.load(due.ID)
	if err != nil {
		return &isolatedError{kind: due.Kind, id: due.ID, err: cause}
	}
	o := c.o
	o.Due = i.until
	if o.Op != nil {
		o.Op.Error = msg
	}
	if o.Status == nil {
		o.Status = map[string]any{}
	}
	o.Status[workerErrorKey] = map[string]any{"message": msg, "attempts": i.fails, "retry_at": i.until.Format(time.RFC3339Nano), "time": now.Format(time.RFC3339Nano)}
	c.event(store.Event{Time: now, Actor: string(lifecycle.ActorSystem), From: o.State, To: o.State, Message: msg})
	if err := rec.commit(""); err == nil {
		e.isolated.setRecorded(due.ID)
	}
	return &isolatedError{kind: due.Kind, id: due.ID, err: cause}
}

// clearWorkerError takes the record of an earlier failure off an object the worker advances.
func clearWorkerError(c *change) {
	we, ok := c.o.Status[workerErrorKey].(map[string]any)
	if !ok {
		return
	}
	delete(c.o.Status, workerErrorKey)
	if msg, _ := we["message"].(string); c.o.Op != nil && msg != "" && strings.HasPrefix(c.o.Op.Error, msg) {
		c.o.Op.Error = ""
	}
	c.dirty = true
}
