// Package storetest is the contract every store.Store must pass, exported so that every store
// (memory, SQLite, PostgreSQL, and any new one) runs the same suite:
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openMyStore(t) })
//	}
//
// It also has the helpers other packages' tests (the backends' own among them) use to fill and
// check a store directly. It imports package store and the standard library only.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// T0 is the time of NewObject and NewEvent. It has nanoseconds, so a store that rounds times fails the round trip.
var T0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// NewObject is an object as the suite stores it: version 1, in state CREATED, made at T0.
func NewObject(id, tenant, kind string) *store.Object {
	return &store.Object{
		ID: id, Tenant: tenant, Kind: kind, Name: "name-" + id, State: "CREATED",
		Spec: map[string]any{}, Status: map[string]any{}, Version: 1,
		StateSince: T0, CreatedAt: T0, UpdatedAt: T0,
	}
}

// NewEvent is a user event of o that lands in state to.
func NewEvent(o *store.Object, to string) store.Event {
	return store.Event{ObjectID: o.ID, Tenant: o.Tenant, Time: T0, Actor: "user", To: to}
}

// MustCreate inserts o with events, failing the test on an error.
func MustCreate(t *testing.T, s store.Store, o *store.Object, events ...store.Event) {
	t.Helper()
	if err := CreateObject(t.Context(), s, o, events, ""); err != nil {
		t.Fatalf("Create(%s) = %v", o.ID, err)
	}
}

// MustGet reads a tenant's object, failing the test on an error.
func MustGet(t *testing.T, s store.Store, tenant, id string) *store.Object {
	t.Helper()
	o, err := s.Get(t.Context(), tenant, id)
	if err != nil {
		t.Fatalf("Get(%q, %s) = %v", tenant, id, err)
	}
	return o
}

// Update stores o as its next version with events (a compare-and-set on its version).
func Update(ctx context.Context, s store.Store, o *store.Object, events ...store.Event) error {
	expect := o.Version
	o.Version++
	return UpdateObject(ctx, s, o, expect, events, "")
}

// MustUpdate is Update, failing the test on an error.
func MustUpdate(t *testing.T, s store.Store, o *store.Object, events ...store.Event) {
	t.Helper()
	if err := Update(t.Context(), s, o, events...); err != nil {
		t.Fatalf("Update(%s) = %v", o.ID, err)
	}
}

// EventSeqs lists an object's event seqs and target states.
func EventSeqs(t *testing.T, s store.Store, tenant, id string) ([]int64, []string) {
	t.Helper()
	evs, err := s.Events(t.Context(), tenant, id)
	if err != nil {
		t.Fatalf("Events(%q, %s) = %v", tenant, id, err)
	}
	var seqs []int64
	var tos []string
	for _, e := range evs {
		seqs = append(seqs, e.Seq)
		tos = append(tos, e.To)
	}
	return seqs, tos
}

// CheckObject checks an object's state, version and number of events; when says when (and
// why), for the messages.
func CheckObject(t *testing.T, s store.Store, tenant, id, when, state string, version int64, events int) {
	t.Helper()
	if got := MustGet(t, s, tenant, id); got.State != state || got.Version != version {
		t.Errorf("%s %s = %s v%d, want %s v%d", id, when, got.State, got.Version, state, version)
	}
	if seqs, _ := EventSeqs(t, s, tenant, id); len(seqs) != events {
		t.Errorf("events of %s %s = %v, want %d", id, when, seqs, events)
	}
}

// ScheduledIDs lists the IDs of a schedule.
func ScheduledIDs(due []store.Scheduled) []string {
	out := []string{}
	for _, d := range due {
		out = append(out, d.ID)
	}
	return out
}

// capability returns s as the optional interface T, and skips the test when s has not got it.
func capability[T any](t *testing.T, s store.Store) T {
	t.Helper()
	c, ok := s.(T)
	if !ok {
		t.Skipf("the store is no %T", (*T)(nil))
	}
	return c
}

func objectIDs(objs []*store.Object) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.ID)
	}
	return out
}

// Checkpointer is a store whose commits reach their tables in the background (the SQLite
// store's journal, checkpointed in batches): what only a checkpoint does (idempotency keys
// expiring, a file another reader opens) shows once WaitCheckpointed returns.
type Checkpointer interface {
	// WaitCheckpointed returns once every commit made before the call is checkpointed, or
	// with ctx's error.
	WaitCheckpointed(ctx context.Context) error
}

// Checkpointed waits (up to 30s) until a store's commits are in its tables; a store that is
// no Checkpointer has nothing to wait for.
func Checkpointed(t testing.TB, s store.Store) {
	t.Helper()
	c, ok := s.(Checkpointer)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 30*time.Second)
	defer cancel()
	if err := c.WaitCheckpointed(ctx); err != nil {
		t.Fatalf("the journal was not checkpointed: %v", err)
	}
}

// Single-object writes, through Commit.

// CreateObject inserts o with events, recording key (when set) for it.
func CreateObject(ctx context.Context, s store.Store, o *store.Object, events []store.Event, key string) error {
	return s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o, Events: events}}, Key: key, KeyAt: time.Now()})
}

// UpdateObject stores o over version expect with events, recording key (when set) for it.
func UpdateObject(ctx context.Context, s store.Store, o *store.Object, expect int64, events []store.Event, key string) error {
	return s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: o, Expect: expect, Events: events}}, Key: key, KeyAt: time.Now()})
}

// DeleteObject removes a tenant's object at version expect, appending events.
func DeleteObject(ctx context.Context, s store.Store, tenant, id string, expect int64, events []store.Event) error {
	return s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: &store.Object{ID: id, Tenant: tenant}, Expect: expect, Remove: true, Events: events}}})
}

// WorkerRound lists a round of s's due objects as the engine's worker takes it: claimed
// (store.Claimer, with a claim of a minute), listed in turns (store.DueRounder), or every
// object due by now.
func WorkerRound(ctx context.Context, s store.Store, now time.Time, n, batch int) ([]store.Scheduled, error) {
	switch r := s.(type) {
	case store.Claimer:
		return r.ClaimDue(ctx, now, n, batch, time.Minute)
	case store.DueRounder:
		return r.DueRound(ctx, now, n, batch)
	}
	return s.Due(ctx, now)
}

// Clone deep-copies an object, as a store's JSON round trip does.
func Clone(o *store.Object) *store.Object {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err) // objects hold only JSON values
	}
	var c store.Object
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return &c
}

// BenchmarkUpdate measures a store's Commit of one object's next version with an event (the
// stores' benchmarks run it on their own store).
func BenchmarkUpdate(b *testing.B, s store.Store) {
	ctx := b.Context()
	o := NewObject("m1", "acme", "machine")
	o.Spec = map[string]any{"memory": 2048.0, "image": "ubuntu-24.04", "disks": []any{"d1", "d2"}}
	if err := CreateObject(ctx, s, o, []store.Event{NewEvent(o, "DEPLOYING")}, ""); err != nil {
		b.Fatal(err)
	}
	ev := NewEvent(o, "RUNNING")
	b.ReportAllocs()
	for b.Loop() {
		o.Due = o.Due.Add(time.Second)
		if err := Update(ctx, s, o, ev); err != nil {
			b.Fatal(err)
		}
	}
}

// Run is the contract every Store passes; open returns a new empty store (closed by the
// test's cleanup, if it needs closing). Its subtests run in parallel, each on a store of its
// own: open must be safe to call from several goroutines at once.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetRoundTrip", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		// Built twice, so the comparison does not rest on any copying code.
		build := func() *store.Object {
			o := NewObject("m1", "acme", "machine")
			o.ParentID = "cs1"
			o.Spec = map[string]any{
				"memory": 2048.0, "image": "ubuntu", "ha": true, "none": nil,
				"disks": []any{"d1", map[string]any{"size": 10.5, "tags": []any{"a", 1.0}}},
				"nic":   map[string]any{"vlan": 12.0, "opts": map[string]any{"mtu": 9000.0}},
			}
			o.Status = map[string]any{"ip": "10.0.0.2", "history": []any{map[string]any{"at": "x"}}}
			o.Op = &store.Operation{
				ID: "op1", Action: "start", From: "HALTED", Phase: 1, Failing: true, Error: "boom",
				Force: true, Hung: true, StartedAt: T0.Add(time.Nanosecond),
				PhaseStarted: T0.Add(2 * time.Nanosecond), PrevSpec: map[string]any{"memory": 1024.0},
			}
			o.Due = T0.Add(time.Second + 7*time.Nanosecond)
			o.StateSince = T0.Add(3 * time.Nanosecond)
			return o
		}
		o, want := build(), build()
		MustCreate(t, s, o, NewEvent(o, "DEPLOYING"))

		o.Spec["memory"] = 1.0 // the store must not share the caller's maps
		got := MustGet(t, s, "acme", "m1")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Get = %+v, want %+v", got, want)
		}
		for name, tm := range map[string]time.Time{"due": got.Due, "created_at": got.CreatedAt, "op.started_at": got.Op.StartedAt} {
			if tm.Location() != time.UTC {
				t.Errorf("%s location = %v, want UTC", name, tm.Location())
			}
		}
		if !got.Op.PhaseStarted.Equal(T0.Add(2 * time.Nanosecond)) {
			t.Errorf("Op.PhaseStarted = %v, want %v", got.Op.PhaseStarted, T0.Add(2*time.Nanosecond))
		}

		nic, ok := got.Spec["nic"].(map[string]any)
		if !ok {
			t.Fatalf("Spec[nic] = %#v, want an object", got.Spec["nic"])
		}
		nic["vlan"] = 99.0
		if again := MustGet(t, s, "acme", "m1"); !reflect.DeepEqual(again, want) {
			t.Errorf("Get after mutating a returned object = %+v, want %+v", again, want)
		}

		evs, err := s.Events(t.Context(), "acme", "m1")
		if err != nil {
			t.Fatalf("Events = %v", err)
		}
		wantEv := NewEvent(o, "DEPLOYING")
		wantEv.Seq = 1
		if len(evs) != 1 || !reflect.DeepEqual(evs[0], wantEv) {
			t.Errorf("Events = %+v, want [%+v]", evs, wantEv)
		}
	})

	t.Run("DefaultedRoundTrip", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		// Not known (nil, as objects stored before it was kept read), none, and some: each
		// reads back as written.
		for id, d := range map[string][]string{"o-nil": nil, "o-none": {}, "o-some": {"parts[0].count", "size"}} {
			o := NewObject(id, "acme", "gizmo")
			o.Defaulted = d
			MustCreate(t, s, o, NewEvent(o, "A"))
			got := MustGet(t, s, "acme", id).Defaulted
			if (got == nil) != (d == nil) || !slices.Equal(got, d) {
				t.Errorf("%s: Defaulted = %#v after a round trip, want %#v", id, got, d)
			}
		}
	})

	t.Run("CommitRechecksReads", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		parent := NewObject("p1", "acme", "cloudlet")
		parent.State = "Ready"
		MustCreate(t, s, parent)
		kid := NewObject("k1", "acme", "cluster_inst")
		kid.ParentID = "p1"
		// A create that read its parent Ready commits while the parent is still Ready, even
		// after the parent's version moved (its derived status is not what the create read).
		parent.Status = map[string]any{"count": 1.0}
		MustUpdate(t, s, parent)
		read := []store.Read{{Tenant: "acme", ID: "p1", State: "Ready"}}
		if err := s.Commit(ctx, store.Batch{Reads: read, Writes: []store.Write{{Object: kid}}}); err != nil {
			t.Fatalf("Commit with the parent as read = %v", err)
		}
		// Once the parent has moved on (its delete started), the same read fails, whole.
		parent = MustGet(t, s, "acme", "p1")
		parent.State = "DeleteRequested"
		MustUpdate(t, s, parent)
		kid2 := NewObject("k2", "acme", "cluster_inst")
		kid2.ParentID = "p1"
		if err := s.Commit(ctx, store.Batch{Reads: read, Writes: []store.Write{{Object: kid2}}}); !errors.Is(err, store.ErrVersion) {
			t.Errorf("Commit with a stale read = %v, want ErrVersion", err)
		}
		if _, err := s.Get(ctx, "acme", "k2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refused batch applied its write: Get = %v", err)
		}
		for _, r := range []store.Read{{Tenant: "acme", ID: "gone", State: "Ready"}, {Tenant: "other", ID: "p1", State: "DeleteRequested"}} {
			if err := s.Commit(ctx, store.Batch{Reads: []store.Read{r}, Writes: []store.Write{{Object: NewObject("k3", "acme", "x")}}}); !errors.Is(err, store.ErrVersion) {
				t.Errorf("Commit reading %+v = %v, want ErrVersion", r, err)
			}
		}
		// An update (an action on the child, its guard having read an ancestor or a linked
		// object) re-checks its reads too: refused, whole, when one is not in the state read
		// (objects before and after it in ID order: a store may lock them in that order).
		a1 := NewObject("a1", "acme", "cloudlet")
		a1.State = "Ready"
		MustCreate(t, s, a1)
		k1 := MustGet(t, s, "acme", "k1")
		prev := k1.Version
		k1.State, k1.Version = "UpdateRequested", prev+1
		for _, r := range []store.Read{{Tenant: "acme", ID: "p1", State: "Ready"}, {Tenant: "acme", ID: "a1", State: "DeleteRequested"},
			{Tenant: "other", ID: "a1", State: "Ready"}, {Tenant: "acme", ID: "gone", State: "Ready"}} {
			w := store.Write{Object: k1, Expect: prev}
			if err := s.Commit(ctx, store.Batch{Reads: []store.Read{r}, Writes: []store.Write{w}}); !errors.Is(err, store.ErrVersion) {
				t.Errorf("an update reading %+v = %v, want ErrVersion", r, err)
			}
			if got := MustGet(t, s, "acme", "k1"); got.State == "UpdateRequested" {
				t.Errorf("a refused update reading %+v was applied", r)
			}
		}
		w := store.Write{Object: k1, Expect: prev}
		read = []store.Read{{Tenant: "acme", ID: "a1", State: "Ready"}, {Tenant: "acme", ID: "p1", State: "DeleteRequested"}}
		if err := s.Commit(ctx, store.Batch{Reads: read, Writes: []store.Write{w}}); err != nil {
			t.Errorf("an update reading its objects as they are = %v", err)
		}
		// A set read: the children a decision counted must be exactly those.
		set := store.SetRead{Tenant: "acme", Filter: store.Filter{Kind: "cluster_inst", ParentID: "p1"}, IDs: []string{"k1"}}
		if err := s.Commit(ctx, store.Batch{Sets: []store.SetRead{set}, Writes: []store.Write{{Object: NewObject("o1", "acme", "x")}}}); err != nil {
			t.Errorf("Commit with the counted children = %v", err)
		}
		set.IDs = nil
		if err := s.Commit(ctx, store.Batch{Sets: []store.SetRead{set}, Writes: []store.Write{{Object: NewObject("o2", "acme", "x")}}}); !errors.Is(err, store.ErrVersion) {
			t.Errorf("Commit having counted no children = %v, want ErrVersion", err)
		}
	})

	t.Run("CommitCountsQuota", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		MustCreate(t, s, NewObject("a1", "acme", "x"))
		MustCreate(t, s, NewObject("b1", "other", "x"))
		batch := func(ids ...string) store.Batch {
			b := store.Batch{MaxObjects: 3}
			for _, id := range ids {
				b.Writes = append(b.Writes, store.Write{Object: NewObject(id, "acme", "x")})
			}
			return b
		}
		var qe *store.QuotaError
		if err := s.Commit(ctx, batch("a2", "a3", "a4")); !errors.As(err, &qe) || qe.Max != 3 || qe.Held != 1 || qe.Asked != 3 {
			t.Errorf("Commit past the quota = %v, want a QuotaError{Max 3, Held 1, Asked 3}", err)
		}
		if n, _ := s.CountObjects(ctx, "acme"); n != 1 {
			t.Errorf("a refused batch left %d objects, want 1", n)
		}
		if err := s.Commit(ctx, batch("a2", "a3")); err != nil {
			t.Errorf("Commit up to the quota = %v", err)
		}
		// A batch that removes as many as it adds is not refused at the quota.
		b := batch("a4")
		b.Writes = append(b.Writes, store.Write{Object: MustGet(t, s, "acme", "a1"), Expect: 1, Remove: true})
		if err := s.Commit(ctx, b); err != nil {
			t.Errorf("Commit swapping one object at the quota = %v", err)
		}
	})

	t.Run("CommitAllOrNothing", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		parent, kid := NewObject("p1", "acme", "mci"), NewObject("v1", "acme", "vm")
		kid.ParentID = "p1"
		// A parent and its child made in one batch, with events for both and a key.
		if err := s.Commit(ctx, store.Batch{Key: "k", KeyAt: T0, Writes: []store.Write{
			{Object: parent, Events: []store.Event{NewEvent(parent, "Creating")}},
			{Object: kid, Events: []store.Event{NewEvent(kid, "Creating")}},
		}}); err != nil {
			t.Fatalf("Commit = %v", err)
		}
		if id, _, ok, _ := s.Idempotent(ctx, "acme", "k"); !ok || id != "p1" {
			t.Errorf("batch key names %q, want the first write's object p1", id)
		}
		// A batch whose second write is stale changes nothing, not even its first write.
		p2, k2 := MustGet(t, s, "acme", "p1"), MustGet(t, s, "acme", "v1")
		p2.State, p2.Version = "Suspending", 2
		k2.State, k2.Version = "Suspending", 2
		for _, tt := range []struct {
			name  string
			write store.Write
			want  error
		}{
			{"stale", store.Write{Object: k2, Expect: 7, Events: []store.Event{NewEvent(k2, "Suspending")}}, store.ErrVersion},
			{"gone", store.Write{Object: NewObject("v9", "acme", "vm"), Expect: 1, Remove: true}, store.ErrNotFound},
			{"taken", store.Write{Object: NewObject("v1", "acme", "vm")}, store.ErrExists},
			{"another tenant's", store.Write{Object: NewObject("v1", "evil", "vm"), Expect: 1}, store.ErrNotFound},
			{"the first write's object again", store.Write{Object: p2, Expect: 1, Remove: true}, store.ErrInvalidBatch},
		} {
			err := s.Commit(ctx, store.Batch{Writes: []store.Write{{Object: p2, Expect: 1, Events: []store.Event{NewEvent(p2, "Suspending")}}, tt.write}})
			if !errors.Is(err, tt.want) {
				t.Errorf("%s: Commit = %v, want %v", tt.name, err, tt.want)
			}
			if got := MustGet(t, s, "acme", "p1"); got.State != "CREATED" || got.Version != 1 {
				t.Errorf("%s: the parent moved to %s v%d with a failed batch", tt.name, got.State, got.Version)
			}
			if seqs, _ := EventSeqs(t, s, "acme", "p1"); len(seqs) != 1 {
				t.Errorf("%s: the parent has %d events after a failed batch, want 1", tt.name, len(seqs))
			}
		}
		// A batch that changes one and removes the other applies both.
		if err := s.Commit(ctx, store.Batch{Writes: []store.Write{
			{Object: p2, Expect: 1, Events: []store.Event{NewEvent(p2, "Suspending")}},
			{Object: k2, Expect: 1, Remove: true, Events: []store.Event{NewEvent(k2, "gone")}},
		}}); err != nil {
			t.Fatalf("Commit = %v", err)
		}
		if _, err := s.Get(ctx, "acme", "v1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("removed child: Get = %v", err)
		}
		if seqs, tos := EventSeqs(t, s, "acme", "v1"); len(seqs) != 2 || tos[1] != "gone" {
			t.Errorf("removed child's events = %v %v, want them kept", seqs, tos)
		}
	})

	t.Run("ErrExists", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		o := NewObject("m1", "acme", "machine")
		MustCreate(t, s, o, NewEvent(o, "DEPLOYING"))
		dup := NewObject("m1", "other", "disk")
		if err := CreateObject(t.Context(), s, dup, []store.Event{NewEvent(dup, "X")}, ""); !errors.Is(err, store.ErrExists) {
			t.Errorf("Create(duplicate) = %v, want ErrExists", err)
		}
		if got := MustGet(t, s, "acme", "m1"); got.Kind != "machine" {
			t.Errorf("Kind after failed Create = %q, want machine", got.Kind)
		}
		if seqs, _ := EventSeqs(t, s, "acme", "m1"); len(seqs) != 1 {
			t.Errorf("event seqs after failed Create = %v, want [1]", seqs)
		}
	})

	t.Run("TenantIsolation", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		o := NewObject("m1", "acme", "machine")
		MustCreate(t, s, o, NewEvent(o, "DEPLOYING"))

		if _, err := s.Get(ctx, "evil", "m1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(other tenant) = %v, want ErrNotFound", err)
		}
		if got, err := s.List(ctx, "evil", store.Filter{}); err != nil || len(got) != 0 {
			t.Errorf("List(other tenant) = %v, %v, want none", objectIDs(got), err)
		}
		if _, err := s.Events(ctx, "evil", "m1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Events(other tenant) = %v, want ErrNotFound", err)
		}
		steal := Clone(o)
		steal.Tenant = "evil"
		if err := Update(ctx, s, steal); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Update(other tenant) = %v, want ErrNotFound", err)
		}
		if err := DeleteObject(ctx, s, "evil", "m1", o.Version, nil); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Delete(other tenant) = %v, want ErrNotFound", err)
		}
		if got := MustGet(t, s, "acme", "m1"); got.Version != 1 || got.Tenant != "acme" {
			t.Errorf("object after foreign writes: version %d tenant %q, want 1 acme", got.Version, got.Tenant)
		}
		if seqs, _ := EventSeqs(t, s, "acme", "m1"); len(seqs) != 1 {
			t.Errorf("event seqs after foreign writes = %v, want [1]", seqs)
		}
		if got, err := s.List(ctx, "", store.Filter{}); err != nil || len(got) != 0 {
			t.Errorf("List(open tenant) = %v, %v, want none", objectIDs(got), err)
		}

		ghost := NewObject("nope", "acme", "machine")
		if err := Update(ctx, s, ghost); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Update(missing) = %v, want ErrNotFound", err)
		}
		if err := DeleteObject(ctx, s, "acme", "nope", 1, nil); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Delete(missing) = %v, want ErrNotFound", err)
		}
		if _, err := s.Events(ctx, "acme", "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Events(missing) = %v, want ErrNotFound", err)
		}
	})

	t.Run("StaleVersion", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		o := NewObject("m1", "acme", "machine")
		MustCreate(t, s, o, NewEvent(o, "DEPLOYING"))
		MustUpdate(t, s, o, NewEvent(o, "RUNNING")) // version 2

		stale := Clone(o)
		stale.State = "HALTED"
		stale.Version = 3
		if err := UpdateObject(ctx, s, stale, 1, []store.Event{NewEvent(o, "HALTED")}, ""); !errors.Is(err, store.ErrVersion) {
			t.Errorf("Update(expect 1) = %v, want ErrVersion", err)
		}
		if err := DeleteObject(ctx, s, "acme", "m1", 1, []store.Event{NewEvent(o, "DELETED")}); !errors.Is(err, store.ErrVersion) {
			t.Errorf("Delete(expect 1) = %v, want ErrVersion", err)
		}
		if got := MustGet(t, s, "acme", "m1"); got.Version != 2 || got.State != "CREATED" {
			t.Errorf("after stale writes: version %d state %q, want 2 CREATED", got.Version, got.State)
		}
		if seqs, _ := EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2}) {
			t.Errorf("event seqs after stale writes = %v, want [1 2]", seqs)
		}
	})

	t.Run("ConcurrentCAS", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		o := NewObject("m1", "acme", "machine")
		MustCreate(t, s, o, NewEvent(o, "DEPLOYING"))

		const n = 50
		var (
			read, start sync.WaitGroup
			done        sync.WaitGroup
			mu          sync.Mutex
			wins        []int
		)
		read.Add(n)
		start.Add(1)
		for i := range n {
			done.Add(1)
			go func() {
				defer done.Done()
				cur, err := s.Get(ctx, "acme", "m1")
				read.Done()
				if err != nil {
					t.Errorf("goroutine %d: Get = %v", i, err)
					return
				}
				start.Wait() // everyone holds version 1 before anyone writes
				cur.State = fmt.Sprintf("S%d", i)
				switch err := Update(ctx, s, cur, NewEvent(cur, cur.State)); {
				case err == nil:
					mu.Lock()
					wins = append(wins, i)
					mu.Unlock()
				case !errors.Is(err, store.ErrVersion):
					t.Errorf("goroutine %d: Update = %v, want nil or ErrVersion", i, err)
				}
			}()
		}
		read.Wait()
		start.Done()
		done.Wait()

		if len(wins) != 1 {
			t.Fatalf("%d updates won with the same expected version, want exactly 1 (%v)", len(wins), wins)
		}
		got := MustGet(t, s, "acme", "m1")
		if want := fmt.Sprintf("S%d", wins[0]); got.Version != 2 || got.State != want {
			t.Errorf("after the race: version %d state %q, want 2 %q", got.Version, got.State, want)
		}
		if seqs, tos := EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1, 2}) || tos[1] != got.State {
			t.Errorf("events after the race = %v %v, want [1 2] ending in %s", seqs, tos, got.State)
		}
	})

	t.Run("EventSeqGapless", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		o := NewObject("m1", "acme", "machine")
		MustCreate(t, s, o, NewEvent(o, "a"), NewEvent(o, "b"))
		MustUpdate(t, s, o, NewEvent(o, "c"), NewEvent(o, "d"), NewEvent(o, "e"))
		MustUpdate(t, s, o)
		MustUpdate(t, s, o, NewEvent(o, "f"))
		other := NewObject("m2", "acme", "machine")
		MustCreate(t, s, other, NewEvent(other, "x"))
		if err := DeleteObject(ctx, s, "acme", "m1", o.Version, []store.Event{NewEvent(o, "g")}); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		if _, err := s.Get(ctx, "acme", "m1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get after Delete = %v, want ErrNotFound", err)
		}

		seqs, tos := EventSeqs(t, s, "acme", "m1") // events outlive the object
		if want := []int64{1, 2, 3, 4, 5, 6, 7}; !reflect.DeepEqual(seqs, want) {
			t.Errorf("seqs = %v, want %v", seqs, want)
		}
		if want := []string{"a", "b", "c", "d", "e", "f", "g"}; !reflect.DeepEqual(tos, want) {
			t.Errorf("event order = %v, want %v", tos, want)
		}
		if seqs, _ := EventSeqs(t, s, "acme", "m2"); !reflect.DeepEqual(seqs, []int64{1}) {
			t.Errorf("other object's seqs = %v, want [1]", seqs)
		}
		if _, err := s.Events(ctx, "evil", "m1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Events(other tenant, deleted) = %v, want ErrNotFound", err)
		}

		// An ID used again continues its history.
		again := NewObject("m1", "acme", "machine")
		MustCreate(t, s, again, NewEvent(again, "h"))
		if seqs, _ := EventSeqs(t, s, "acme", "m1"); len(seqs) != 8 || seqs[7] != 8 {
			t.Errorf("seqs after re-create = %v, want 1..8", seqs)
		}
	})

	t.Run("List", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		for _, o := range []*store.Object{
			{ID: "m1", Kind: "machine", ParentID: "cs1", State: "RUNNING"},
			{ID: "m2", Kind: "machine", ParentID: "cs1", State: "HALTED"},
			{ID: "m3", Kind: "machine", ParentID: "cs2", State: "RUNNING"},
			{ID: "d1", Kind: "disk", State: "ASSIGNED", Spec: map[string]any{"machine_id": "m1"}},
			{ID: "d3", Kind: "disk", State: "ASSIGNED", Spec: map[string]any{"machine_id": "m1"}},
			{ID: "d2", Kind: "disk", State: "ASSIGNED", Spec: map[string]any{"machine_id": "m2"}},
			{ID: "d4", Kind: "disk", State: "CREATED", Spec: map[string]any{"size": 10.0}},
		} {
			o.Tenant, o.Version = "acme", 1
			MustCreate(t, s, o)
		}
		MustCreate(t, s, &store.Object{ID: "m0", Tenant: "evil", Kind: "machine", ParentID: "cs1", State: "RUNNING", Version: 1,
			Spec: map[string]any{"machine_id": "m1"}})

		tests := []struct {
			name string
			give store.Filter
			want []string
		}{
			{"all", store.Filter{}, []string{"d1", "d2", "d3", "d4", "m1", "m2", "m3"}},
			{"kind", store.Filter{Kind: "machine"}, []string{"m1", "m2", "m3"}},
			{"parent", store.Filter{ParentID: "cs1"}, []string{"m1", "m2"}},
			{"state", store.Filter{State: "RUNNING"}, []string{"m1", "m3"}},
			{"kind+parent+state", store.Filter{Kind: "machine", ParentID: "cs2", State: "RUNNING"}, []string{"m3"}},
			{"kind+state", store.Filter{Kind: "machine", State: "RUNNING"}, []string{"m1", "m3"}},
			{"kind+state after", store.Filter{Kind: "machine", State: "RUNNING", After: "m1"}, []string{"m3"}},
			{"kind+state limit", store.Filter{Kind: "machine", State: "RUNNING", Limit: 1}, []string{"m1"}},
			{"kind+state none", store.Filter{Kind: "disk", State: "RUNNING"}, []string{}},
			{"link", store.Filter{Link: [2]string{"machine_id", "m1"}}, []string{"d1", "d3"}},
			{"link+kind", store.Filter{Kind: "machine", Link: [2]string{"machine_id", "m1"}}, []string{}},
			{"link limit", store.Filter{Link: [2]string{"machine_id", "m1"}, Limit: 1}, []string{"d1"}},
			{"link after", store.Filter{Link: [2]string{"machine_id", "m1"}, After: "d1", Limit: 1}, []string{"d3"}},
			{"after+limit", store.Filter{After: "d2", Limit: 3}, []string{"d3", "d4", "m1"}},
			{"after last", store.Filter{After: "m3"}, []string{}},
			{"no match", store.Filter{Kind: "cloudspace"}, []string{}},
		}
		for _, tt := range tests {
			got, err := s.List(t.Context(), "acme", tt.give)
			if err != nil {
				t.Errorf("%s: List(%+v) = %v", tt.name, tt.give, err)
				continue
			}
			if !reflect.DeepEqual(objectIDs(got), tt.want) {
				t.Errorf("%s: List(%+v) = %v, want %v", tt.name, tt.give, objectIDs(got), tt.want)
			}
		}

		var pages [][]string
		after := ""
		for {
			got, err := s.List(t.Context(), "acme", store.Filter{After: after, Limit: 2})
			if err != nil {
				t.Fatalf("List(after %q) = %v", after, err)
			}
			if len(got) == 0 {
				break
			}
			pages = append(pages, objectIDs(got))
			after = got[len(got)-1].ID
		}
		want := [][]string{{"d1", "d2"}, {"d3", "d4"}, {"m1", "m2"}, {"m3"}}
		if !reflect.DeepEqual(pages, want) {
			t.Errorf("pages = %v, want %v", pages, want)
		}
	})

	t.Run("ListByStateAfterChanges", func(t *testing.T) {
		t.Parallel()
		// Objects move between states and removal; every (kind, state) list, paged,
		// must say what the objects say. Half the IDs share their first 30 bytes (past what
		// an index keeps inline), and one is a prefix of others.
		s := open(t)
		ctx := t.Context()
		rng := rand.New(rand.NewPCG(3, 4))
		states := []string{"RUNNING", "HALTED", "STOPPING"}
		live := map[string]*store.Object{}
		var ids []string
		for i := range 60 {
			id := fmt.Sprintf("m%02d", i)
			if i%2 == 0 {
				id = fmt.Sprintf("machine-0000000000000000000000-%d", i)
			}
			o := NewObject(id, []string{"acme", "evil"}[i%5/4], "machine")
			o.State = states[i%3]
			MustCreate(t, s, o)
			live[id], ids = o, append(ids, id)
		}
		for range 300 {
			o := live[ids[rng.IntN(len(ids))]]
			if o == nil {
				continue
			}
			if rng.IntN(10) == 0 {
				if err := DeleteObject(ctx, s, o.Tenant, o.ID, o.Version, nil); err != nil {
					t.Fatalf("remove %s: %v", o.ID, err)
				}
				delete(live, o.ID)
				continue
			}
			o.State = states[rng.IntN(len(states))]
			MustUpdate(t, s, o)
		}
		for _, tenant := range []string{"acme", "evil"} {
			for _, state := range states {
				var want []string
				for id, o := range live {
					if o.Tenant == tenant && o.State == state {
						want = append(want, id)
					}
				}
				slices.Sort(want)
				var got []string
				for after := ""; ; {
					page, err := s.List(ctx, tenant, store.Filter{Kind: "machine", State: state, After: after, Limit: 4})
					if err != nil {
						t.Fatal(err)
					}
					if len(page) == 0 {
						break
					}
					got = append(got, objectIDs(page)...)
					after = page[len(page)-1].ID
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %s pages = %v, want %v", tenant, state, got, want)
				}
			}
		}
	})

	t.Run("ParentsGoneAndIDsUsedAgain", func(t *testing.T) {
		t.Parallel()
		// IDs of many lengths (a store may keep short ones inline); parents removed while
		// their children stay, new objects made in their place, then the parents made again:
		// every read and list must say what the objects say.
		s := open(t)
		ctx := t.Context()
		parents := []string{"p", "pp", strings.Repeat("p", 31), strings.Repeat("p", 32), strings.Repeat("p", 33), strings.Repeat("q", 80)}
		for i, id := range parents {
			p := NewObject(id, "acme", "cloudspace")
			MustCreate(t, s, p)
			c := NewObject(fmt.Sprintf("c%d", i), "acme", "machine")
			c.ParentID = id
			MustCreate(t, s, c)
		}
		for _, id := range parents {
			if err := DeleteObject(ctx, s, "acme", id, 1, nil); err != nil {
				t.Fatalf("remove %s: %v", id, err)
			}
		}
		for i := range parents {
			MustCreate(t, s, NewObject(fmt.Sprintf("n%d", i), "acme", "cloudspace"))
		}
		check := func(when string, wantParents []string) {
			t.Helper()
			for i, id := range parents {
				if c := MustGet(t, s, "acme", fmt.Sprintf("c%d", i)); c.ParentID != id {
					t.Errorf("%s: c%d's parent = %q, want %q", when, i, c.ParentID, id)
				}
				got, err := s.List(ctx, "acme", store.Filter{ParentID: id})
				if err != nil || !slices.Equal(objectIDs(got), []string{fmt.Sprintf("c%d", i)}) {
					t.Errorf("%s: List(parent %q) = %v, %v, want [c%d]", when, id, objectIDs(got), err, i)
				}
			}
			got, err := s.List(ctx, "acme", store.Filter{Kind: "cloudspace"})
			if err != nil || !slices.Equal(objectIDs(got), wantParents) {
				t.Errorf("%s: List(cloudspace) = %v, %v, want %v", when, objectIDs(got), err, wantParents)
			}
		}
		news := []string{"n0", "n1", "n2", "n3", "n4", "n5"}
		check("parents gone", news)
		for _, id := range parents {
			if _, err := s.Get(ctx, "acme", id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get(removed %q) = %v, want ErrNotFound", id, err)
			}
			MustCreate(t, s, NewObject(id, "acme", "cloudspace"))
		}
		check("parents made again", slices.Sorted(slices.Values(append(news, parents...))))
	})

	t.Run("Due", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		if _, ok, err := s.NextDue(ctx); err != nil || ok {
			t.Fatalf("NextDue(empty) = %v, %v, want false", ok, err)
		}
		at := func(d time.Duration) time.Time { return T0.Add(d) }
		objs := map[string]*store.Object{}
		for _, o := range []*store.Object{
			NewObject("a", "acme", "machine"),
			NewObject("c", "acme", "machine"),
			NewObject("b", "acme", "machine"),
			NewObject("d", "acme", "machine"),
			NewObject("e", "evil", "machine"),
		} {
			objs[o.ID] = o
		}
		objs["a"].Due = at(3 * time.Second)
		objs["b"].Due = at(time.Second)
		objs["c"].Due = at(time.Second)
		objs["e"].Due = at(2*time.Second + time.Nanosecond)
		for _, o := range objs {
			MustCreate(t, s, o)
		}

		tests := []struct {
			give time.Time
			want []string
		}{
			{T0, []string{}},
			{at(time.Second - time.Nanosecond), []string{}},
			{at(time.Second), []string{"b", "c"}},
			{at(2*time.Second + time.Nanosecond), []string{"b", "c", "e"}},
			{at(time.Hour), []string{"b", "c", "e", "a"}},
		}
		for _, tt := range tests {
			got, err := s.Due(ctx, tt.give)
			if err != nil {
				t.Fatalf("Due(%v) = %v", tt.give, err)
			}
			if !reflect.DeepEqual(ScheduledIDs(got), tt.want) {
				t.Errorf("Due(%v) = %v, want %v", tt.give, ScheduledIDs(got), tt.want)
			}
		}

		wantNext := func(want time.Time) {
			t.Helper()
			next, ok, err := s.NextDue(ctx)
			if err != nil || !ok || !next.Equal(want) {
				t.Errorf("NextDue = %v, %v, %v, want %v, true", next, ok, err, want)
			}
		}
		wantNext(at(time.Second))
		objs["b"].Due = time.Time{}
		MustUpdate(t, s, objs["b"])
		wantNext(at(time.Second))
		objs["c"].Due = time.Time{}
		MustUpdate(t, s, objs["c"])
		wantNext(at(2*time.Second + time.Nanosecond))
		if err := DeleteObject(ctx, s, "evil", "e", 1, nil); err != nil {
			t.Fatalf("Delete(e) = %v", err)
		}
		wantNext(at(3 * time.Second))
		objs["a"].Due = at(500 * time.Millisecond)
		MustUpdate(t, s, objs["a"])
		wantNext(at(500 * time.Millisecond))
		if got, err := s.Due(ctx, at(time.Hour)); err != nil || !reflect.DeepEqual(ScheduledIDs(got), []string{"a"}) {
			t.Errorf("Due(later) = %v, %v, want [a]", ScheduledIDs(got), err)
		}
	})

	// A round of the worker's due objects, as a DueRounder lists it and a Claimer claims it
	// (of the objects its own commits left due): the same choice.
	t.Run("DueRound", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		_, rounder := s.(store.DueRounder)
		_, claimer := s.(store.Claimer)
		if !rounder && !claimer {
			t.Skip("the store is neither a store.DueRounder nor a store.Claimer")
		}
		round := func(now time.Time, n, batch int) ([]store.Scheduled, error) {
			return WorkerRound(ctx, s, now, n, batch)
		}
		at := func(d time.Duration) time.Time { return T0.Add(d) }
		var all []string
		for i := range 8 {
			o := NewObject(fmt.Sprintf("a%d", i+1), "ta", "machine")
			o.Due = at(time.Duration(i) * time.Second)
			MustCreate(t, s, o)
			all = append(all, o.ID)
		}
		for i, id := range []string{"b1", "b2", "later"} {
			o := NewObject(id, "tb", "machine")
			o.Due = at(time.Duration(10+i) * time.Second)
			if id == "later" {
				o.Due = at(time.Hour)
			}
			MustCreate(t, s, o)
		}
		all = append(all, "b1", "b2")
		tests := []struct {
			n    int
			want []string
		}{
			{0, []string{}},
			// Batches of 2 in tenant turns: tb's first 2 come before ta's next.
			{4, []string{"a1", "a2", "b1", "b2"}},
			{5, []string{"a1", "a2", "a3", "b1", "b2"}},
			{100, all},
		}
		for _, tt := range tests {
			got, err := round(at(time.Minute), tt.n, 2)
			if err != nil {
				t.Fatalf("round(%d) = %v", tt.n, err)
			}
			if !reflect.DeepEqual(ScheduledIDs(got), tt.want) {
				t.Errorf("round(%d, batch 2) = %v, want %v", tt.n, ScheduledIDs(got), tt.want)
			}
		}
	})

	t.Run("ListSkipping", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		l := capability[store.SkipLister](t, s)
		ctx := t.Context()
		for _, id := range []string{"k1", "k2", "k3", "k4"} {
			o := NewObject(id, "acme", "disk")
			o.ParentID = "p"
			MustCreate(t, s, o)
		}
		held := map[string]bool{"k1": true, "k3": true}
		skip := func(id string) bool { return held[id] }
		tests := []struct {
			f    store.Filter
			want []string
		}{
			{store.Filter{ParentID: "p"}, []string{"k2", "k4"}},
			{store.Filter{Kind: "disk"}, []string{"k2", "k4"}},
			{store.Filter{ParentID: "p", Limit: 1}, []string{"k2"}},
		}
		for _, tt := range tests {
			got, err := l.ListSkipping(ctx, "acme", tt.f, skip)
			if err != nil || !reflect.DeepEqual(objectIDs(got), tt.want) {
				t.Errorf("ListSkipping(%+v, skip k1 k3) = %v, %v, want %v", tt.f, objectIDs(got), err, tt.want)
			}
		}
		if got, err := l.ListSkipping(ctx, "acme", store.Filter{ParentID: "p"}, nil); err != nil || len(got) != 4 {
			t.Errorf("ListSkipping(nil skip) = %v, %v, want all 4", objectIDs(got), err)
		}
	})

	t.Run("Idempotency", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		check := func(tenant, key, wantID string, wantOK bool) {
			t.Helper()
			id, _, ok, err := s.Idempotent(ctx, tenant, key)
			if err != nil || ok != wantOK || id != wantID {
				t.Errorf("Idempotent(%q, %q) = %q, %v, %v, want %q, %v", tenant, key, id, ok, err, wantID, wantOK)
			}
		}
		check("acme", "k1", "", false)
		m1 := NewObject("m1", "acme", "machine")
		if err := CreateObject(ctx, s, m1, nil, "k1"); err != nil {
			t.Fatalf("Create with a key = %v", err)
		}
		check("acme", "k1", "m1", true)
		check("evil", "k1", "", false)
		check("acme", "k2", "", false)
		m9 := NewObject("m9", "evil", "machine")
		if err := CreateObject(ctx, s, m9, nil, "k1"); err != nil {
			t.Fatalf("Create with a key = %v", err)
		}
		check("evil", "k1", "m9", true)
		check("acme", "k1", "m1", true)
		// An update records its key only when it lands: a stale one records nothing.
		stale := Clone(m1)
		stale.Version = 5
		if err := UpdateObject(ctx, s, stale, 4, nil, "k2"); !errors.Is(err, store.ErrVersion) {
			t.Fatalf("stale Update = %v, want ErrVersion", err)
		}
		check("acme", "k2", "", false)
		m1.Version = 2
		if err := UpdateObject(ctx, s, m1, 1, nil, "k2"); err != nil {
			t.Fatalf("Update with a key = %v", err)
		}
		check("acme", "k2", "m1", true)
		// A failed create records nothing either.
		if err := CreateObject(ctx, s, NewObject("m1", "acme", "machine"), nil, "k3"); !errors.Is(err, store.ErrExists) {
			t.Fatalf("duplicate Create = %v, want ErrExists", err)
		}
		check("acme", "k3", "", false)
	})

	t.Run("IdempotencyKeysExpire", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		record := func(id, key string, at time.Time) {
			t.Helper()
			if err := s.Commit(ctx, store.Batch{Key: key, KeyAt: at, Writes: []store.Write{{Object: NewObject(id, "acme", "machine")}}}); err != nil {
				t.Fatalf("Commit with key %s = %v", key, err)
			}
			Checkpointed(t, s)
		}
		found := func(key string) bool {
			t.Helper()
			_, _, ok, err := s.Idempotent(ctx, "acme", key)
			if err != nil {
				t.Fatalf("Idempotent(%s) = %v", key, err)
			}
			return ok
		}
		record("m1", "old", T0)
		record("m2", "younger", T0.Add(store.KeyRetention-time.Hour))
		if !found("old") {
			t.Errorf("a key was forgotten when the newest was %v younger, under KeyRetention (%v)", store.KeyRetention-time.Hour, store.KeyRetention)
		}
		record("m3", "new", T0.Add(store.KeyRetention+time.Hour))
		if found("old") {
			t.Errorf("a key was kept when the newest was %v younger, over KeyRetention (%v)", store.KeyRetention+time.Hour, store.KeyRetention)
		}
		if !found("younger") || !found("new") {
			t.Errorf("keys within KeyRetention of the newest were forgotten: younger %v, new %v", found("younger"), found("new"))
		}
		// A key needs its time: without one it could never expire.
		err := s.Commit(ctx, store.Batch{Key: "untimed", Writes: []store.Write{{Object: NewObject("m4", "acme", "machine")}}})
		if !errors.Is(err, store.ErrInvalidBatch) {
			t.Errorf("Commit of a key without KeyAt = %v, want ErrInvalidBatch", err)
		}
		if found("untimed") {
			t.Error("a refused batch recorded its key")
		}
	})

	t.Run("IdempotencyKeyClaimedOnce", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		create := func(id, tenant, key, hash string, at time.Time) error {
			o := NewObject(id, tenant, "machine")
			return s.Commit(ctx, store.Batch{Key: key, KeyHash: hash, KeyAt: at,
				Writes: []store.Write{{Object: o, Events: []store.Event{NewEvent(o, "CREATED")}}}})
		}
		// refused checks a commit is refused with the key's first record: its object and hash.
		refused := func(when string, err error, wantID, wantHash string) {
			t.Helper()
			var taken *store.KeyTakenError
			if !errors.As(err, &taken) || taken.Tenant != "acme" || taken.ID != wantID || taken.BodyHash != wantHash {
				t.Errorf("%s: Commit = %v, want a *store.KeyTakenError naming %s (hash %s)", when, err, wantID, wantHash)
			}
		}
		gone := func(id string) {
			t.Helper()
			if o, err := s.Get(ctx, "acme", id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a refused commit made %s: %+v, %v", id, o, err)
			}
			if _, err := s.Events(ctx, "acme", id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a refused commit recorded events of %s: %v", id, err)
			}
		}
		if err := create("m1", "acme", "k", "h1", T0); err != nil {
			t.Fatalf("Commit with a key = %v", err)
		}
		// A second create with the key, in the journal's time and after a checkpoint (the key
		// then in the file), is refused whole; so is an update (an action) with it.
		refused("second create", create("m2", "acme", "k", "h2", T0.Add(time.Minute)), "m1", "h1")
		gone("m2")
		Checkpointed(t, s)
		refused("create after a checkpoint", create("m3", "acme", "k", "h1", T0.Add(time.Hour)), "m1", "h1")
		gone("m3")
		upd := MustGet(t, s, "acme", "m1")
		upd.State, upd.Version = "DELETING", 2
		refused("update", s.Commit(ctx, store.Batch{Key: "k", KeyHash: "h1", KeyAt: T0.Add(time.Hour),
			Writes: []store.Write{{Object: upd, Expect: 1, Events: []store.Event{NewEvent(upd, "DELETING")}}}}), "m1", "h1")
		CheckObject(t, s, "acme", "m1", "after the refused commits", "CREATED", 1, 1)
		if id, h, ok, err := s.Idempotent(ctx, "acme", "k"); err != nil || !ok || id != "m1" || h != "h1" {
			t.Errorf("Idempotent(k) = %q, %q, %v, %v after refused commits, want m1, h1", id, h, ok, err)
		}
		// Another tenant's key of the same name is its own.
		if err := create("m9", "evil", "k", "h9", T0.Add(time.Minute)); err != nil {
			t.Errorf("another tenant's Commit with the key = %v", err)
		}
		// A key KeyRetention old may be forgotten: it is free to claim again.
		later := T0.Add(store.KeyRetention + time.Hour)
		if err := create("m4", "acme", "k", "h4", later); err != nil {
			t.Errorf("Commit with a key recorded KeyRetention + 1h before = %v, want it claimed again", err)
		}
		if id, _, ok, _ := s.Idempotent(ctx, "acme", "k"); !ok || id != "m4" {
			t.Errorf("Idempotent(k) after the key was claimed again = %q, %v, want m4", id, ok)
		}
		// Commits racing with one key: exactly one applies, the others name its object.
		const racers = 8
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() { errs[i] = create(fmt.Sprintf("r%d", i), "acme", "race", "hr", later) })
		}
		wg.Wait()
		winner := ""
		for i, err := range errs {
			if err == nil {
				if winner != "" {
					t.Errorf("two commits with one key applied: %s and r%d", winner, i)
				}
				winner = fmt.Sprintf("r%d", i)
			}
		}
		if winner == "" {
			t.Fatalf("no racing commit applied: %v", errs)
		}
		for i, err := range errs {
			if id := fmt.Sprintf("r%d", i); id != winner {
				refused("racing commit "+id, err, winner, "hr")
				gone(id)
			}
		}
	})

	t.Run("Counts", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		if got, err := s.Counts(ctx); err != nil || len(got) != 0 {
			t.Errorf("Counts(empty) = %v, %v, want none", got, err)
		}
		for i, ks := range [][3]string{
			{"acme", "machine", "RUNNING"}, {"acme", "machine", "RUNNING"}, {"evil", "machine", "RUNNING"},
			{"acme", "machine", "HALTED"}, {"acme", "disk", "CREATED"},
		} {
			o := NewObject(fmt.Sprintf("o%d", i), ks[0], ks[1])
			o.State = ks[2]
			MustCreate(t, s, o)
		}
		want := map[[2]string]int{{"machine", "RUNNING"}: 3, {"machine", "HALTED"}: 1, {"disk", "CREATED"}: 1}
		if got, err := s.Counts(ctx); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Counts = %v, %v, want %v", got, err, want)
		}
	})

	t.Run("Reset", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		o := NewObject("m1", "acme", "machine")
		o.Due = T0
		MustCreate(t, s, o, NewEvent(o, "DEPLOYING"))
		gone := NewObject("m2", "acme", "machine")
		MustCreate(t, s, gone, NewEvent(gone, "DEPLOYING"))
		if err := DeleteObject(ctx, s, "acme", "m2", 1, []store.Event{NewEvent(gone, "DESTROYED")}); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		o.Version = 2
		if err := UpdateObject(ctx, s, o, 1, nil, "k"); err != nil {
			t.Fatalf("Update with a key = %v", err)
		}

		if err := s.Reset(ctx); err != nil {
			t.Fatalf("Reset = %v", err)
		}
		if _, err := s.Get(ctx, "acme", "m1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get after Reset = %v, want ErrNotFound", err)
		}
		if got, err := s.List(ctx, "acme", store.Filter{}); err != nil || len(got) != 0 {
			t.Errorf("List after Reset = %v, %v, want none", objectIDs(got), err)
		}
		for _, id := range []string{"m1", "m2"} {
			if _, err := s.Events(ctx, "acme", id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Events(%s) after Reset = %v, want ErrNotFound", id, err)
			}
		}
		if _, _, ok, err := s.Idempotent(ctx, "acme", "k"); err != nil || ok {
			t.Errorf("Idempotent after Reset = %v, %v, want false", ok, err)
		}
		if _, ok, err := s.NextDue(ctx); err != nil || ok {
			t.Errorf("NextDue after Reset = %v, %v, want false", ok, err)
		}
		if got, err := s.Counts(ctx); err != nil || len(got) != 0 {
			t.Errorf("Counts after Reset = %v, %v, want none", got, err)
		}

		again := NewObject("m1", "acme", "machine")
		MustCreate(t, s, again, NewEvent(again, "DEPLOYING"))
		if seqs, _ := EventSeqs(t, s, "acme", "m1"); !reflect.DeepEqual(seqs, []int64{1}) {
			t.Errorf("seqs after Reset and Create = %v, want [1]", seqs)
		}
	})

	t.Run("Import", func(t *testing.T) {
		t.Parallel()
		testImport(t, open(t), open(t))
	})

}

// ReadTenant reads what an export of a tenant holds: its objects and the histories of its
// objects, live and removed (as store.Import takes them).
func ReadTenant(t *testing.T, s store.Store, tenant string) store.Import {
	t.Helper()
	ctx := t.Context()
	objs, err := s.List(ctx, tenant, store.Filter{})
	if err != nil {
		t.Fatalf("List(%q) = %v", tenant, err)
	}
	removed, err := s.Removed(ctx, tenant)
	if err != nil {
		t.Fatalf("Removed(%q) = %v", tenant, err)
	}
	im := store.Import{Tenant: tenant, Objects: objs}
	ids := slices.Sorted(slices.Values(append(objectIDs(objs), removed...)))
	for _, id := range ids {
		evs, err := s.Events(ctx, tenant, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			t.Fatalf("Events(%q, %s) = %v", tenant, id, err)
		}
		im.Events = append(im.Events, evs...)
	}
	return im
}

// retenant is im as another tenant's.
func retenant(im store.Import, tenant string) store.Import {
	out := store.Import{Tenant: tenant, MaxObjects: im.MaxObjects, FaultRules: im.FaultRules}
	for _, o := range im.Objects {
		c := Clone(o)
		c.Tenant = tenant
		out.Objects = append(out.Objects, c)
	}
	for _, e := range im.Events {
		e.Tenant = tenant
		out.Events = append(out.Events, e)
	}
	return out
}

// testImport fills a tenant of src (live objects with histories, one due, one removed) and
// imports what it reads into dst as another tenant: dst then reads the same, and an import
// naming an ID it holds is refused whole.
func testImport(t *testing.T, src, dst store.Store) {
	ctx := t.Context()
	parent := NewObject("imp-p", "a", "cloudspace")
	MustCreate(t, src, parent, NewEvent(parent, "DEPLOYING"))
	parent.State = "DEPLOYED"
	MustUpdate(t, src, parent, NewEvent(parent, "DEPLOYED"))
	kid := NewObject("imp-k", "a", "machine")
	kid.ParentID, kid.State, kid.Due = parent.ID, "STARTING", T0.Add(time.Hour+time.Nanosecond)
	kid.Op = &store.Operation{ID: "op-1", Action: "start", From: "HALTED", StartedAt: T0, PhaseStarted: T0}
	kid.Spec = map[string]any{"cloudspace_id": parent.ID, "memory": 2048.0}
	MustCreate(t, src, kid, NewEvent(kid, "HALTED"), NewEvent(kid, "STARTING"))
	gone := NewObject("imp-g", "a", "disk")
	MustCreate(t, src, gone, NewEvent(gone, "CREATED"))
	failed := NewEvent(gone, "DELETED")
	failed.Error, failed.Message = "boom", "removed"
	if err := DeleteObject(ctx, src, "a", gone.ID, gone.Version, []store.Event{failed}); err != nil {
		t.Fatalf("Delete(%s) = %v", gone.ID, err)
	}
	other := NewObject("imp-o", "other", "machine")
	MustCreate(t, src, other, NewEvent(other, "HALTED"))

	got := ReadTenant(t, src, "a")
	if ids := objectIDs(got.Objects); !slices.Equal(ids, []string{"imp-k", "imp-p"}) {
		t.Fatalf("objects of a = %v, want [imp-k imp-p]", ids)
	}
	if removed, err := src.Removed(ctx, "a"); err != nil || !slices.Equal(removed, []string{"imp-g"}) {
		t.Fatalf("Removed(a) = %v, %v, want [imp-g]", removed, err)
	}
	if removed, err := src.Removed(ctx, "other"); err != nil || len(removed) != 0 {
		t.Fatalf("Removed(other) = %v, %v, want none", removed, err)
	}
	if len(got.Events) != 6 {
		t.Fatalf("events of a = %+v, want 6", got.Events)
	}

	// What a refused import leaves: nothing.
	quota := retenant(got, "b")
	quota.MaxObjects = 1
	var qe *store.QuotaError
	if err := dst.Import(ctx, quota); !errors.As(err, &qe) {
		t.Fatalf("Import of 2 objects with a quota of 1 = %v, want a *QuotaError", err)
	}
	gapped := retenant(got, "b")
	gapped.Events = slices.Delete(slices.Clone(gapped.Events), 0, 1)
	if err := dst.Import(ctx, gapped); !errors.Is(err, store.ErrInvalidBatch) {
		t.Fatalf("Import of a history without its first event = %v, want ErrInvalidBatch", err)
	}
	if objs, err := dst.List(ctx, "b", store.Filter{}); err != nil || len(objs) != 0 {
		t.Fatalf("objects after refused imports = %v, %v, want none", objectIDs(objs), err)
	}

	// The worker's round (its first done before the import: a Claimer's takes over what no
	// process owns then, and an import's objects are no process's) finds the imported phase.
	round := func() []string {
		t.Helper()
		due, err := WorkerRound(ctx, dst, T0.Add(2*time.Hour), 10, 10)
		if err != nil {
			t.Fatalf("the worker's round = %v", err)
		}
		return ScheduledIDs(due)
	}
	if ids := round(); len(ids) != 0 {
		t.Fatalf("the worker's round before Import = %v, want none", ids)
	}
	want := retenant(got, "b")
	if err := dst.Import(ctx, want); err != nil {
		t.Fatalf("Import = %v", err)
	}
	if ids := round(); !slices.Equal(ids, []string{"imp-k"}) {
		t.Errorf("the worker's round after Import = %v, want [imp-k]", ids)
	}
	Checkpointed(t, dst)
	if back := ReadTenant(t, dst, "b"); !reflect.DeepEqual(back, want) {
		t.Errorf("after Import, b reads\n%+v\nwant\n%+v", back, want)
	}
	if n, err := dst.CountObjects(ctx, "b"); err != nil || n != 2 {
		t.Errorf("CountObjects(b) = %d, %v, want 2", n, err)
	}
	due, err := dst.Due(ctx, T0.Add(2*time.Hour))
	if err != nil || !slices.Equal(ScheduledIDs(due), []string{"imp-k"}) {
		t.Errorf("Due after Import = %v, %v, want [imp-k]", ScheduledIDs(due), err)
	}
	// The histories go on from the imported ones.
	k := MustGet(t, dst, "b", "imp-k")
	MustUpdate(t, dst, k, NewEvent(k, "RUNNING"))
	if seqs, _ := EventSeqs(t, dst, "b", "imp-k"); !slices.Equal(seqs, []int64{1, 2, 3}) {
		t.Errorf("seqs after an update of an imported object = %v, want [1 2 3]", seqs)
	}

	// An ID held, an object's or a removed object's history, in any tenant: refused whole.
	for _, tc := range []struct{ name, id string }{{"object", "imp-p"}, {"removed object", "imp-g"}} {
		again := retenant(got, "c")
		again.Objects = slices.DeleteFunc(slices.Clone(again.Objects), func(o *store.Object) bool { return o.ID != tc.id })
		again.Events = slices.DeleteFunc(slices.Clone(again.Events), func(e store.Event) bool { return e.ObjectID != tc.id })
		fresh := NewObject("imp-new", "c", "machine")
		again.Objects = append(again.Objects, fresh)
		var taken *store.IDTakenError
		if err := dst.Import(ctx, again); !errors.As(err, &taken) || taken.ID != tc.id || !errors.Is(err, store.ErrExists) {
			t.Errorf("Import of a held %s = %v, want an *IDTakenError naming %s", tc.name, err, tc.id)
		}
		if _, err := dst.Get(ctx, "c", "imp-new"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get of an object of a refused import = %v, want ErrNotFound", err)
		}
	}

	fk, ok := dst.(store.FaultKeeper)
	if !ok {
		return
	}
	// Numbers the store's own numbering reaches next: a store that numbers on from where it
	// was, not past them, would give them again.
	rules := []store.FaultRule{{ID: "fault-4", Tenant: "b", Rule: []byte(`{"mode":"fail"}`), Count: 3, Fired: 2},
		{ID: "fault-3", Tenant: "b", Rule: []byte(`{"mode":"hang"}`)}}
	if err := dst.Import(ctx, store.Import{Tenant: "d", FaultRules: rules}); err != nil {
		t.Fatalf("Import of fault rules = %v", err)
	}
	stored, err := fk.FaultRules(ctx)
	if err != nil || len(stored) != 2 || stored[0].ID != "fault-4" || stored[0].Fired != 2 || stored[1].ID != "fault-3" {
		t.Fatalf("FaultRules after Import = %+v, %v, want fault-4 (fired 2), fault-3", stored, err)
	}
	added, ok, err := fk.AddFaultRule(ctx, store.FaultRule{Tenant: "d", Rule: []byte(`{}`)}, 10)
	if err != nil || !ok || added.ID == "fault-4" || added.ID == "fault-3" {
		t.Errorf("AddFaultRule after Import = %+v, %v, %v, want a new ID", added, ok, err)
	}
	var taken *store.IDTakenError
	if err := dst.Import(ctx, store.Import{Tenant: "e", FaultRules: rules[1:]}); !errors.As(err, &taken) || taken.ID != "fault-3" {
		t.Errorf("Import of a held fault rule = %v, want an *IDTakenError naming fault-3", err)
	}
}
