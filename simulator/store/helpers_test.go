package store

import (
	"context"
	"testing"
	"time"
)

// Helpers of the store's internal tests. The exported suite (package storetest) has its own:
// it cannot be imported from here (it imports this package).

// storeT0 has nanoseconds, so a store that rounds times fails the round trip.
var storeT0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

func storeObject(id, tenant, kind string) *Object {
	return &Object{
		ID: id, Tenant: tenant, Kind: kind, Name: "name-" + id, State: "CREATED",
		Spec: map[string]any{}, Status: map[string]any{}, Version: 1,
		StateSince: storeT0, CreatedAt: storeT0, UpdatedAt: storeT0,
	}
}

func storeEvent(o *Object, to string) Event {
	return Event{ObjectID: o.ID, Tenant: o.Tenant, Time: storeT0, Actor: "user", To: to}
}

func storeMustCreate(t *testing.T, s Store, o *Object, events ...Event) {
	t.Helper()
	if err := createObject(t.Context(), s, o, events, ""); err != nil {
		t.Fatalf("Create(%s) = %v", o.ID, err)
	}
}

func storeMustGet(t *testing.T, s Store, tenant, id string) *Object {
	t.Helper()
	o, err := s.Get(t.Context(), tenant, id)
	if err != nil {
		t.Fatalf("Get(%q, %s) = %v", tenant, id, err)
	}
	return o
}

// storeUpdate stores o as its next version with events.
func storeUpdate(ctx context.Context, s Store, o *Object, events ...Event) error {
	expect := o.Version
	o.Version++
	return updateObject(ctx, s, o, expect, events, "")
}

func storeMustUpdate(t *testing.T, s Store, o *Object, events ...Event) {
	t.Helper()
	if err := storeUpdate(t.Context(), s, o, events...); err != nil {
		t.Fatalf("Update(%s) = %v", o.ID, err)
	}
}

// storeEventSeqs lists an object's event seqs and target states.
func storeEventSeqs(t *testing.T, s Store, tenant, id string) ([]int64, []string) {
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

// storeCheckObject checks an object's state, version and number of events; when says when
// (and why), for the messages.
func storeCheckObject(t *testing.T, s Store, tenant, id, when, state string, version int64, events int) {
	t.Helper()
	if got := storeMustGet(t, s, tenant, id); got.State != state || got.Version != version {
		t.Errorf("%s %s = %s v%d, want %s v%d", id, when, got.State, got.Version, state, version)
	}
	if seqs, _ := storeEventSeqs(t, s, tenant, id); len(seqs) != events {
		t.Errorf("events of %s %s = %v, want %d", id, when, seqs, events)
	}
}

func scheduledIDs(due []Scheduled) []string {
	out := []string{}
	for _, d := range due {
		out = append(out, d.ID)
	}
	return out
}

// Single-object writes, through Commit.

func createObject(ctx context.Context, s Store, o *Object, events []Event, key string) error {
	return s.Commit(ctx, Batch{Writes: []Write{{Object: o, Events: events}}, Key: key, KeyAt: time.Now()})
}

func updateObject(ctx context.Context, s Store, o *Object, expect int64, events []Event, key string) error {
	return s.Commit(ctx, Batch{Writes: []Write{{Object: o, Expect: expect, Events: events}}, Key: key, KeyAt: time.Now()})
}

func deleteObject(ctx context.Context, s Store, tenant, id string, expect int64, events []Event) error {
	return s.Commit(ctx, Batch{Writes: []Write{{Object: &Object{ID: id, Tenant: tenant}, Expect: expect, Remove: true, Events: events}}})
}
