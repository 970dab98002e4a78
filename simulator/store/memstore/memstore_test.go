package memstore

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// The memory store passes the exported contract suite, as every store must.
func TestMemStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return New() })
}

// TestMemStoreKeysExpireInOrder records a key a minute for longer than store.KeyRetention: the
// store holds a store.KeyRetention's worth, the newest ones, however long it runs.
func TestMemStoreKeysExpireInOrder(t *testing.T) {
	s := New()
	const n = 5000
	window := int(store.KeyRetention / time.Minute)
	for i := range n {
		o := storetest.NewObject(fmt.Sprintf("m%d", i), "acme", "machine")
		if err := s.Commit(t.Context(), store.Batch{Key: fmt.Sprint("k", i), KeyAt: storetest.T0.Add(time.Duration(i) * time.Minute), Writes: []store.Write{{Object: o}}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.idem) != window+1 {
		t.Errorf("the store holds %d keys, want the last %d minutes' %d", len(s.idem), window, window+1)
	}
	if n := len(s.idemOrder.keys); n > 2*(window+1) {
		t.Errorf("the key queue holds %d entries for %d keys: it is not compacted", n, len(s.idem))
	}
	for _, i := range []int{0, n - window - 2} {
		if _, _, ok, _ := s.Idempotent(t.Context(), "acme", fmt.Sprint("k", i)); ok {
			t.Errorf("key k%d, %v older than the newest, is kept", i, time.Duration(n-1-i)*time.Minute)
		}
	}
	for _, i := range []int{n - window - 1, n - 1} {
		if id, _, ok, _ := s.Idempotent(t.Context(), "acme", fmt.Sprint("k", i)); !ok || id != fmt.Sprintf("m%d", i) {
			t.Errorf("key k%d = %q, %v; want m%d", i, id, ok, i)
		}
	}
}

// A List on a spec field builds the field's index between its read lock and its write lock;
// a Reset in that gap drops every index, and the List must build it again rather than walk
// an index that is gone (it panicked, holding the read lock, and every Commit waited forever).
func TestListBuildsItsIndexAgainAfterReset(t *testing.T) {
	s := New()
	ctx := t.Context()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				if err := s.Reset(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	for i := range 50_000 { // a new field each time: every List builds an index
		if _, err := s.List(ctx, "acme", store.Filter{Link: [2]string{"f" + strconv.Itoa(i), "x"}}); err != nil {
			t.Error(err)
			break
		}
	}
	close(stop)
	wg.Wait()
}

func BenchmarkMemStoreUpdate(b *testing.B) {
	storetest.BenchmarkUpdate(b, New())
}
