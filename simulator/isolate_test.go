package simulator

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
)

// refusingStore refuses the commits that write one object: all of them, or only those that
// move it out of a state (its landing), as a store that cannot save one value would.
type refusingStore struct {
	store.Store
	mu       sync.Mutex
	id       string
	onlyFrom string // when set, only writes that take the object out of this state fail
	attempts int
}

func (s *refusingStore) refuse(id, onlyFrom string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id, s.onlyFrom, s.attempts = id, onlyFrom, 0
}

func (s *refusingStore) tries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

func (s *refusingStore) Commit(ctx context.Context, b store.Batch) error {
	s.mu.Lock()
	for _, w := range b.Writes {
		if s.id != "" && w.Object.ID == s.id && (s.onlyFrom == "" || w.Object.State != s.onlyFrom) {
			s.attempts++
			s.mu.Unlock()
			return errors.New("write /var/lib/lifecyclesim/objects: driver says no")
		}
	}
	s.mu.Unlock()
	return s.Store.Commit(ctx, b)
}

// TestWorkerSetsAsideFailingObject: an object whose landing the store refuses is set aside
// with a backoff of its own (doubling, not retried in the shared loop meanwhile), while
// another tenant's objects land when due; the failure is recorded on the object (operation
// error, status.worker_error, an event) without the store's text, and counted in /metrics;
// once the store takes it, the object lands and the record goes.
func TestWorkerSetsAsideFailingObject(t *testing.T) {
	st := &refusingStore{Store: memstore.New()}
	h := newTestServer(t, harnessOptions{store: st, metrics: true, tokens: map[string]string{"a-token": "acme", "g-token": "globex"}})
	acme, globex := h.as("a-token"), h.as("g-token")
	lease := func(w *harness) client.Object {
		return w.create("leases", client.CreateRequest{Name: "l", Spec: map[string]any{
			"start_date": h.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339), "end_date": h.clock.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)}})
	}
	poisoned := lease(acme)
	st.refuse(poisoned.ID, "") // every write of it, even the record of its failure
	tick := func(d time.Duration) error {
		t.Helper()
		h.manual.Advance(d)
		return h.engine.Tick(t.Context())
	}
	state := func(w *harness, id string) string { return w.get("leases", id).State }

	// Each round another tenant's leases are created and land when due (2 s); the poisoned
	// one is tried when due, then after backoffs of 1 s, 2 s, 4 s: not in between.
	var tried []int
	landed := 0
	for second := range 8 {
		others := []client.Object{lease(globex), lease(globex)}
		if err := tick(2 * time.Second); second == 0 && (err == nil || !strings.Contains(err.Error(), poisoned.ID)) {
			t.Fatalf("Tick with the refused object = %v, want its error", err)
		}
		for _, o := range others {
			if state(globex, o.ID) == "PENDING" {
				landed++
			}
		}
		tried = append(tried, st.tries())
		if err := tick(0); err != nil && strings.Contains(err.Error(), "globex") {
			t.Fatal(err)
		}
		if got := st.tries(); got != tried[len(tried)-1] {
			t.Fatalf("second %d: the object set aside was tried again at once (%d tries, then %d)", second, tried[len(tried)-1], got)
		}
	}
	if landed != 16 {
		t.Errorf("%d of globex's 16 leases landed when due while acme's object failed, want all", landed)
	}
	if state(acme, poisoned.ID) != "CREATING" {
		t.Fatalf("the refused object is %s, want still CREATING", state(acme, poisoned.ID))
	}
	// Tried at t=2 s, then after backoffs of 1, 2, 4 s (at 4, 6, 10 s; next at 18 s): each
	// try is the step and the record of its failure, both refused.
	want := []int{2, 4, 6, 6, 8, 8, 8, 8}
	for i := range want {
		if tried[i] != want[i] {
			t.Fatalf("refused writes after each 2 s = %v, want %v (a backoff of 1 s doubling per try)", tried, want)
		}
	}

	// The store now takes everything but the landing: the record of the failure is visible.
	st.refuse(poisoned.ID, "CREATING")
	if err := tick(16 * time.Second); err == nil {
		t.Fatal("Tick after the backoff did not try the object again")
	}
	o := acme.get("leases", poisoned.ID)
	we, _ := o.Status["worker_error"].(map[string]any)
	if o.Operation == nil || !strings.Contains(o.Operation.Error, "could not advance this object") || we == nil || we["attempts"] != 5.0 {
		t.Fatalf("the object set aside: operation %+v, status.worker_error %v; want the failure recorded (attempt 5)", o.Operation, we)
	}
	evs := acme.events("leases", poisoned.ID)
	if last := evs[len(evs)-1]; !strings.Contains(last.Message, "could not advance this object") {
		t.Errorf("last event = %+v, want the failure", last)
	}
	for _, text := range []string{o.Operation.Error, evs[len(evs)-1].Message} {
		if strings.Contains(text, "/var/lib") || strings.Contains(text, "driver") {
			t.Errorf("the tenant sees the store's text: %q", text)
		}
	}
	r := h.do(http.MethodGet, "/metrics", nil)
	if !strings.Contains(string(r.Body), `lifecyclesim_worker_isolations_total{kind="lease"} 5`) {
		t.Errorf("/metrics does not count 5 isolations of a lease")
	}

	// Once the store takes it, the object lands at its next try and the record goes.
	st.refuse("", "")
	if err := tick(32 * time.Second); err != nil {
		t.Fatal(err)
	}
	o = acme.get("leases", poisoned.ID)
	if o.State != "PENDING" || o.Status["worker_error"] != nil || h.engine.IsolatedObjects() != 0 {
		t.Errorf("after the store recovered: %s, status %v, %d set aside; want PENDING, no worker_error, none", o.State, o.Status, h.engine.IsolatedObjects())
	}
}
