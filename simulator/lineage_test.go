package simulator

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// lineageStore is an in-memory store that reads an object with its ancestors in one call
// (store.LineageGetter), as the PostgreSQL store does, and records the reads it serves.
type lineageStore struct {
	*memstore.Store
	mu       sync.Mutex
	gets     []string // IDs read by Get
	lineages []int    // the depth of each GetLineage
}

func (s *lineageStore) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	s.mu.Lock()
	s.gets = append(s.gets, id)
	s.mu.Unlock()
	return s.Store.Get(ctx, tenant, id)
}

func (s *lineageStore) GetLineage(ctx context.Context, tenant, id string, depth int) ([]*store.Object, error) {
	s.mu.Lock()
	s.lineages = append(s.lineages, depth)
	s.mu.Unlock()
	o, err := s.Store.Get(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	out := []*store.Object{o}
	for range depth {
		if o.ParentID == "" {
			break
		}
		p, err := s.Store.Get(ctx, tenant, o.ParentID)
		if errors.Is(err, store.ErrNotFound) {
			break // the chain ends at an ancestor that is gone
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		o = p
	}
	return out, nil
}

// reads returns the reads served since the last call and forgets them.
func (s *lineageStore) reads() (gets []string, lineages []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gets, lineages = s.gets, s.lineages
	s.gets, s.lineages = nil, nil
	return gets, lineages
}

// An action guarded by an ancestor's state, over a store whose reads are round trips, reads
// the object and the ancestors its guards name in one call, and the guards decide on them: a
// machine's stop reads the machine and its cloudspace, an AppInst's delete reads up to the
// cloudlet two levels up, which refuses it while it upgrades.
func TestGuardedActionReadsLineageOnce(t *testing.T) {
	st := &lineageStore{Store: memstore.New()}
	h := newTestServer(t, harnessOptions{store: st})
	_, cs := h.openvcloud()
	m := h.runningMachine(cs.ID, "vm")
	st.reads()
	wantStatus(t, h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", nil), "stop", http.StatusAccepted)
	if gets, lineages := st.reads(); !slices.Equal(lineages, []int{1}) || slices.Contains(gets, cs.ID) || slices.Contains(gets, m.ID) {
		t.Errorf("stop read lineages of depth %v and got %v, want one lineage of depth 1 (machine, cloudspace) and no Get of either", lineages, gets)
	}
	h.mustSettle("machines", m.ID, "HALTED")

	cl, _, app := h.edge()
	h.addFault(client.FaultRule{Kind: "cloudlet", Action: "upgrade", Mode: wire.FaultHang, Count: 1})
	wantStatus(t, h.do(http.MethodPatch, objPath("cloudlets", cl.ID), client.PatchRequest{Spec: map[string]any{"version": "2.0"}}), "upgrade", http.StatusAccepted)
	st.reads()
	d := wantAPIError(t, h.do(http.MethodDelete, objPath("app_insts", app.ID), nil), http.StatusUnprocessableEntity, client.CodeInvalidTransition)
	if !strings.Contains(d.Message, cl.ID) {
		t.Errorf("DELETE AppInst during the cloudlet's upgrade: %q does not name the cloudlet", d.Message)
	}
	if _, lineages := st.reads(); !slices.Contains(lineages, 2) {
		t.Errorf("DELETE AppInst read lineages of depth %v, want one of depth 2 (AppInst, ClusterInst, cloudlet)", lineages)
	}
}
