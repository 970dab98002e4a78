package simulator

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// yardsKinds are the kinds TestAdviceRuns reaches its refusals with: a yard opens over a
// phase and closes; a crate is made in an OPEN yard and goes with it (it has no deletion of
// its own); a pallet in a yard keeps it from being deleted until the pallet is gone.
const yardsKinds = `kinds:
  - name: yard
    collection: yards
    states: {static: [OPEN, BROKEN], transition: [OPENING], error: [BROKEN], gone: [CLOSED]}
    create: {via: [OPENING], to: OPEN, failure: {to: BROKEN}}
    deletion: {destroy: [close]}
    actions:
      - {name: close, from: [OPEN, BROKEN], to: CLOSED}
  - name: crate
    collection: crates
    parent: {kind: yard, in: [OPEN], delete: cascade}
    states: {static: [PACKED]}
    create: {to: PACKED}
  - name: pallet
    collection: pallets
    parent: {kind: yard, delete: refuse}
    states: {static: [STACKED], gone: [GONE]}
    create: {to: STACKED}
    deletion: {destroy: [unstack]}
    actions:
      - {name: unstack, from: [STACKED], to: GONE}
`

// contended is a store whose commits all lose their compare-and-set while crowded is set, as
// when other clients change an object (or its related objects) between every read and commit.
type contended struct {
	store.Store
	crowded atomic.Bool
}

func (s *contended) Commit(ctx context.Context, b store.Batch) error {
	if s.crowded.Load() && !b.Background {
		return store.ErrVersion
	}
	return s.Store.Commit(ctx, b)
}

// TestAdviceRuns: each 4xx answer of the API whose message tells the client what to do is
// reached here, and what it says to do is then done and works — the request sent again after
// what it says to wait for, or changed as it says — so no message advises something that does
// not help.
func TestAdviceRuns(t *testing.T) {
	kinds, err := lifecycle.Parse("yards.yaml", []byte(yardsKinds))
	if err != nil {
		t.Fatal(err)
	}
	reg := lifecycle.Builtin()
	if err := reg.Add(kinds...); err != nil {
		t.Fatal(err)
	}
	// openYard makes a yard and lets it open.
	openYard := func(h *harness) client.Object {
		h.t.Helper()
		y := h.create("yards", client.CreateRequest{Name: "y"})
		return h.mustSettle("yards", y.ID, "OPEN")
	}
	tooFast := &contended{Store: memstore.New()}
	tests := []struct {
		name string
		opt  harnessOptions
		// refused sends the request the message answers (after what it needs); follow does
		// what the message says and returns the answer that shows it worked.
		refused func(h *harness) (*response, func() *response)
		status  int
		code    client.Code
		// advice is what the message says to do.
		advice string
		// worked are the statuses follow's answer may have.
		worked []int
	}{
		{
			name: "busy: retry when it is static",
			refused: func(h *harness) (*response, func() *response) {
				_, cs := h.openvcloud()
				m := h.runningMachine(cs.ID, "web")
				h.act("machines", m.ID, "reboot", nil)
				stop := func() *response {
					return h.do(http.MethodPost, objPath("machines", m.ID)+"/actions/stop", client.ActionRequest{})
				}
				return stop(), func() *response {
					h.mustSettle("machines", m.ID, "RUNNING")
					return stop()
				}
			},
			status: http.StatusConflict, code: client.CodeBusy, advice: "retry when it is static", worked: []int{http.StatusAccepted},
		},
		{
			name: "changing too fast: retry",
			opt:  harnessOptions{store: tooFast},
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				closeYard := func() *response {
					return h.do(http.MethodPost, objPath("yards", y.ID)+"/actions/close", client.ActionRequest{})
				}
				tooFast.crowded.Store(true)
				r := closeYard()
				tooFast.crowded.Store(false)
				return r, closeYard
			},
			status: http.StatusConflict, code: client.CodeBusy, advice: "changing too fast; retry", worked: []int{http.StatusAccepted, http.StatusOK},
		},
		{
			name: "conflict: read the object again and reapply the change",
			refused: func(h *harness) (*response, func() *response) {
				_, cs := h.openvcloud()
				m := h.runningMachine(cs.ID, "web")
				patch := func(version int64) *response {
					return h.do(http.MethodPatch, objPath("machines", m.ID), client.PatchRequest{Spec: map[string]any{"memory": 4096}},
						"If-Match", strconv.FormatInt(version, 10))
				}
				wantStatus(h.t, h.do(http.MethodPatch, objPath("machines", m.ID), client.PatchRequest{Spec: map[string]any{"label": "x"}}),
					"PATCH by another client", http.StatusOK)
				return patch(m.Version), func() *response { return patch(h.get("machines", m.ID).Version) }
			},
			status: http.StatusPreconditionFailed, code: client.CodeConflict, advice: "read the object again and reapply your change", worked: []int{http.StatusOK},
		},
		{
			name: "a child without its parent: set parent_id to its ID",
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				return h.do(http.MethodPost, "/v1/crates", client.CreateRequest{Name: "c"}), func() *response {
					return h.do(http.MethodPost, "/v1/crates", client.CreateRequest{Name: "c", ParentID: y.ID})
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: "crate objects live in a yard: set parent_id to its ID",
			worked: []int{http.StatusCreated, http.StatusAccepted},
		},
		{
			name: "a parent_id on a kind without parents: remove parent_id",
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				return h.do(http.MethodPost, "/v1/yards", client.CreateRequest{Name: "y2", ParentID: y.ID}), func() *response {
					return h.do(http.MethodPost, "/v1/yards", client.CreateRequest{Name: "y2"})
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: "yard objects have no parent; remove parent_id",
			worked: []int{http.StatusAccepted},
		},
		{
			name: "a parent not in the state its child needs: wait until it is, or bring it there",
			refused: func(h *harness) (*response, func() *response) {
				y := h.create("yards", client.CreateRequest{Name: "y"}) // OPENING
				req := client.CreateRequest{Name: "c", ParentID: y.ID}
				return h.do(http.MethodPost, "/v1/crates", req), func() *response {
					h.mustSettle("yards", y.ID, "OPEN")
					return h.do(http.MethodPost, "/v1/crates", req)
				}
			},
			status: http.StatusUnprocessableEntity, code: client.CodeInvalidTransition, advice: "wait until it is OPEN, or bring it there first",
			worked: []int{http.StatusCreated, http.StatusAccepted},
		},
		{
			name: "an object that goes with its parent: delete the parent",
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				c := h.create("crates", client.CreateRequest{Name: "c", ParentID: y.ID})
				return h.do(http.MethodDelete, objPath("crates", c.ID), nil), func() *response {
					wantStatus(h.t, h.do(http.MethodDelete, objPath("yards", y.ID), nil), "DELETE the yard", http.StatusOK, http.StatusAccepted, http.StatusNoContent)
					h.settle("yards", y.ID)
					return h.do(http.MethodGet, objPath("crates", c.ID), nil)
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: "crate objects cannot be deleted on their own: they go with their yard",
			worked: []int{http.StatusNotFound},
		},
		{
			name: "live children that refuse it: delete them first",
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				p := h.create("pallets", client.CreateRequest{Name: "p", ParentID: y.ID})
				return h.do(http.MethodDelete, objPath("yards", y.ID), nil), func() *response {
					wantStatus(h.t, h.do(http.MethodDelete, objPath("pallets", p.ID), nil), "DELETE the pallet", http.StatusOK, http.StatusAccepted, http.StatusNoContent)
					if _, exists := h.settle("pallets", p.ID); exists {
						h.t.Fatal("the pallet outlived its delete")
					}
					return h.do(http.MethodDelete, objPath("yards", y.ID), nil)
				}
			},
			status: http.StatusUnprocessableEntity, code: client.CodeInvalidTransition, advice: "delete them first",
			worked: []int{http.StatusOK, http.StatusAccepted, http.StatusNoContent},
		},
		{
			name: "a deletion mode the kind lacks: the modes it has",
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				return h.do(http.MethodDelete, objPath("yards", y.ID)+"?mode=delete", nil), func() *response {
					return h.do(http.MethodDelete, objPath("yards", y.ID)+"?mode=destroy", nil)
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: `cannot be deleted with mode "delete"; modes: [destroy]`,
			worked: []int{http.StatusOK, http.StatusAccepted, http.StatusNoContent},
		},
		{
			name: "an unknown mode: use mode=delete or mode=destroy",
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				return h.do(http.MethodDelete, objPath("yards", y.ID)+"?mode=gone", nil), func() *response {
					return h.do(http.MethodDelete, objPath("yards", y.ID)+"?mode=destroy", nil)
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: "use mode=delete (recycle bin) or mode=destroy (permanent)",
			worked: []int{http.StatusOK, http.StatusAccepted, http.StatusNoContent},
		},
		{
			name: "an unknown wait: use wait=static",
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				return h.do(http.MethodGet, objPath("yards", y.ID)+"?wait=open", nil), func() *response {
					return h.do(http.MethodGet, objPath("yards", y.ID)+"?wait=static", nil)
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: "use wait=static", worked: []int{http.StatusOK},
		},
		{
			name: "a timeout that is no duration: one such as 25s",
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				return h.do(http.MethodGet, objPath("yards", y.ID)+"?wait=static&timeout=soon", nil), func() *response {
					return h.do(http.MethodGet, objPath("yards", y.ID)+"?wait=static&timeout=25s", nil)
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: "is not a duration such as 25s", worked: []int{http.StatusOK},
		},
		{
			name: "the object quota: delete some first",
			opt:  harnessOptions{maxObjects: 1},
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				return h.do(http.MethodPost, "/v1/yards", client.CreateRequest{Name: "y2"}), func() *response {
					wantStatus(h.t, h.do(http.MethodDelete, objPath("yards", y.ID), nil), "DELETE the yard", http.StatusOK, http.StatusAccepted, http.StatusNoContent)
					h.settle("yards", y.ID)
					return h.do(http.MethodPost, "/v1/yards", client.CreateRequest{Name: "y2"})
				}
			},
			status: http.StatusForbidden, code: client.CodeForbidden, advice: "delete some first or ask for fewer", worked: []int{http.StatusAccepted},
		},
		{
			name: "no token: send Authorization: Bearer",
			opt:  harnessOptions{tokens: map[string]string{"t1": "a"}},
			refused: func(h *harness) (*response, func() *response) {
				return h.do(http.MethodGet, "/v1/yards", nil), func() *response {
					return h.do(http.MethodGet, "/v1/yards", nil, "Authorization", "Bearer t1")
				}
			},
			status: http.StatusUnauthorized, code: client.CodeUnauthorized, advice: "send Authorization: Bearer <token>", worked: []int{http.StatusOK},
		},
		{
			name: "the fault rule cap: delete some first",
			refused: func(h *harness) (*response, func() *response) {
				var first client.FaultRule
				for i := range engine.MaxFaultRules {
					r := h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "yard", Mode: wire.FaultSlow, Factor: 2})
					wantStatus(h.t, r, fmt.Sprint("fault rule ", i), http.StatusCreated, http.StatusOK)
					if i == 0 {
						first = decodeAs[client.FaultRule](h.t, r)
					}
				}
				add := func() *response {
					return h.do(http.MethodPost, "/v1/sim/faults", client.FaultRule{Kind: "yard", Mode: wire.FaultSlow, Factor: 2})
				}
				return add(), func() *response {
					wantStatus(h.t, h.do(http.MethodDelete, "/v1/sim/faults/"+first.ID, nil), "DELETE a fault rule", http.StatusOK, http.StatusNoContent)
					return add()
				}
			},
			status: http.StatusForbidden, code: client.CodeForbidden, advice: "delete some (DELETE /v1/sim/faults/{id}) first",
			worked: []int{http.StatusCreated, http.StatusOK},
		},
		{
			name: "an import into a tenant that holds objects: reset it first",
			refused: func(h *harness) (*response, func() *response) {
				openYard(h)
				r := h.do(http.MethodGet, "/v1/sim/export", nil)
				wantStatus(h.t, r, "export", http.StatusOK)
				doc := string(r.Body)
				return h.do(http.MethodPost, "/v1/sim/import", doc), func() *response {
					wantStatus(h.t, h.do(http.MethodPost, "/v1/sim/reset", nil), "reset", http.StatusOK, http.StatusNoContent)
					return h.do(http.MethodPost, "/v1/sim/import", doc)
				}
			},
			status: http.StatusPreconditionFailed, code: client.CodeConflict, advice: "reset it first (POST /v1/sim/reset, lifecyclesim reset)",
			worked: []int{http.StatusOK, http.StatusCreated},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt := tt.opt
			opt.reg = reg
			h := newTestServer(t, opt)
			r, follow := tt.refused(h)
			d := wantAPIError(t, r, tt.status, tt.code)
			if !strings.Contains(d.Message, tt.advice) {
				t.Fatalf("the refusal says %q, want it to say %q", d.Message, tt.advice)
			}
			if got := follow(); !slices.Contains(tt.worked, got.Status) {
				t.Errorf("after doing what %q says: %s, want %v", d.Message, got, tt.worked)
			}
		})
	}
}
