package pgstore_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// A group of commits that only update and read objects goes as one merged write, and each
// commit of it succeeds or fails as it would alone: a failed comparison (a version, a tenant,
// the state of what it read, one object of several) changes nothing of its commit and
// nothing of the others'. Commits that name an object another one updates go after it, in
// transactions of their own, and see its changes.
func TestPostgresMergedWrite(t *testing.T) {
	url := pgtest.Database(t)
	s := openPostgres(t, url+"&pool_max_conns=1")
	ctx := t.Context()
	objs := map[string]*store.Object{}
	for _, id := range []string{"a0", "a1", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "hold", "p1", "z9"} {
		o := storetest.NewObject(id, "t", "machine")
		if id[0] == 'c' {
			o.ParentID = "p1"
		}
		storetest.MustCreate(t, s, o, storetest.NewEvent(o, "CREATED"))
		objs[id] = o
	}
	// update is a write of id to state, at the version after expect.
	update := func(id string, expect int64, state string) store.Write {
		o := *objs[id]
		o.State, o.Version = state, expect+1
		return store.Write{Object: &o, Expect: expect, Events: []store.Event{storetest.NewEvent(&o, state), storetest.NewEvent(&o, state+"-2")}}
	}
	// otherTenant is a write of id as another tenant's: the object is not found.
	otherTenant := func(id string) store.Write {
		w := update(id, 1, "RUNNING")
		w.Object.Tenant = "other"
		return w
	}
	commits := []struct {
		name string
		b    store.Batch
		want error
	}{
		{"an action that read its parent as it is", store.Batch{Writes: []store.Write{update("c1", 1, "RUNNING")},
			Reads: []store.Read{{Tenant: "t", ID: "p1", State: "CREATED"}}}, nil},
		{"an action that read its parent in another state", store.Batch{Writes: []store.Write{update("c2", 1, "RUNNING")},
			Reads: []store.Read{{Tenant: "t", ID: "p1", State: "DELETING"}}}, store.ErrVersion},
		{"another tenant's object", store.Batch{Writes: []store.Write{otherTenant("c3")}}, store.ErrNotFound},
		// Two comparisons fail: the commit fails for the one of the object first in ID order.
		{"another tenant's object, after a read that failed", store.Batch{Writes: []store.Write{otherTenant("c7")},
			Reads: []store.Read{{Tenant: "t", ID: "a0", State: "DELETING"}}}, store.ErrVersion},
		{"another tenant's object, before a read that failed", store.Batch{Writes: []store.Write{otherTenant("a1")},
			Reads: []store.Read{{Tenant: "t", ID: "z9", State: "DELETING"}}}, store.ErrNotFound},
		{"the parent's change, after the actions that read it", store.Batch{Writes: []store.Write{update("p1", 1, "DELETING")}}, nil},
		{"two landings, one at a stale version", store.Batch{Writes: []store.Write{update("c4", 1, "RUNNING"), update("c5", 9, "RUNNING")}},
			store.ErrVersion},
		{"an action", store.Batch{Writes: []store.Write{update("c6", 1, "RUNNING")}}, nil},
		{"a second action on the same object, from the same version", store.Batch{Writes: []store.Write{update("c6", 1, "HALTED")}},
			store.ErrVersion},
	}

	// Another connection holds a row: the store's one connection waits on it with the first
	// commit, and the others pile up behind it, to go together. Watched from a connection of
	// its own: within a transaction (hold's), PostgreSQL answers pg_stat_activity from what
	// it read first.
	tx := holdRow(t, url, "hold")
	watch := connect(t, url)
	before := pgstore.MergedCommits(s)
	var wg sync.WaitGroup
	var first error
	wg.Go(func() { first = s.Commit(ctx, store.Batch{Writes: []store.Write{update("hold", 1, "RUNNING")}}) })
	simtest.Eventually(t, 30*time.Second, "the first commit waits on the held row", func() bool {
		var waiting bool
		err := watch.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock')").Scan(&waiting)
		return err == nil && waiting && pgstore.PendingCommits(s) == 0
	})
	errs := make([]error, len(commits))
	for i, c := range commits {
		wg.Go(func() { errs[i] = s.Commit(ctx, c.b) })
		// In order: the group keeps it, and so does the merged write.
		simtest.Eventually(t, 30*time.Second, "the commit waits for the connection", func() bool {
			return pgstore.PendingCommits(s) == i+1
		})
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if first != nil {
		t.Fatalf("the first commit = %v", first)
	}
	for i, c := range commits {
		if !errors.Is(errs[i], c.want) || (c.want == nil) != (errs[i] == nil) {
			t.Errorf("%s: Commit = %v, want %v", c.name, errs[i], c.want)
		}
	}
	// The first went alone, in statements of its own; of the others, all but the two that
	// name an object another updates went in one merged write.
	if n := pgstore.MergedCommits(s) - before; n != int64(len(commits)-2) {
		t.Errorf("%d commits went in merged writes, want %d", n, len(commits)-2)
	}

	for id, want := range map[string]struct {
		state   string
		version int64
	}{
		"c1": {"RUNNING", 2}, "c2": {"CREATED", 1}, "c3": {"CREATED", 1}, "p1": {"DELETING", 2},
		"c4": {"CREATED", 1}, "c5": {"CREATED", 1}, "c6": {"RUNNING", 2}, "c7": {"CREATED", 1}, "a1": {"CREATED", 1},
	} {
		o, evs := mustRead(t, s, "t", id)
		wantEvents := 1
		if want.version == 2 {
			wantEvents = 3
		}
		var seqs []int64
		for _, e := range evs {
			seqs = append(seqs, e.Seq)
		}
		if o.State != want.state || o.Version != want.version || len(evs) != wantEvents || evs[len(evs)-1].Seq != int64(wantEvents) {
			t.Errorf("%s: %s at version %d with events %v; want %s at version %d with %d events",
				id, o.State, o.Version, seqs, want.state, want.version, wantEvents)
		}
	}
}
