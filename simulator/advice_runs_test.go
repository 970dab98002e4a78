package simulator

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
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

// churning is a store whose objects another client keeps changing while busy is set: each
// object a List or Get reads is committed again at the next version before the reader sees
// it, so what the reader compares or commits at the version it read is already stale.
type churning struct {
	store.Store
	busy atomic.Bool
}

func (s *churning) List(ctx context.Context, tenant string, f store.Filter) ([]*store.Object, error) {
	objs, err := s.Store.List(ctx, tenant, f)
	for _, o := range objs {
		if err == nil {
			err = s.change(ctx, o)
		}
	}
	return objs, err
}

func (s *churning) Get(ctx context.Context, tenant, id string) (*store.Object, error) {
	o, err := s.Store.Get(ctx, tenant, id)
	if err == nil {
		err = s.change(ctx, o)
	}
	return o, err
}

// change commits o again at its next version while the store is busy, as another client's
// change of it does.
func (s *churning) change(ctx context.Context, o *store.Object) error {
	if !s.busy.Load() {
		return nil
	}
	c := *o
	c.Version++
	return s.Store.Commit(ctx, store.Batch{Writes: []store.Write{{Object: &c, Expect: o.Version}}})
}

// holdLongPoll sends a long-poll on a yard and returns the channel its answer comes on, once
// the server counts it held (or once it is answered, if it was not held).
func holdLongPoll(h *harness, id string) <-chan *response {
	h.t.Helper()
	got := make(chan *response, 1)
	go func() {
		r, err := h.request(http.MethodGet, objPath("yards", id)+"?wait=static&timeout=60s", nil)
		if err != nil {
			r = &response{Body: []byte(err.Error())}
		}
		got <- r
	}()
	var early *response
	simtest.Eventually(h.t, 30*time.Second, "the long-poll held", func() bool {
		select {
		case early = <-got:
			return true
		default:
		}
		return strings.Contains(string(h.do(http.MethodGet, "/metrics", nil).Body), `lifecyclesim_held_requests{tenant="",type="wait"} 1`)
	})
	if early != nil {
		got <- early
	}
	return got
}

// heldFull holds one long-poll (all the server allows) and sends another, refused; following
// the advice, a poll without wait is answered at once, and once the held one ends, the
// long-poll sent again is held until its yard opens.
func heldFull(h *harness) (*response, func() *response) {
	a := h.create("yards", client.CreateRequest{Name: "a"}) // OPENING until the clock moves
	h.advance(a.Operation.DueAt.Sub(h.manual.Now()) / 2)
	b := h.create("yards", client.CreateRequest{Name: "b"}) // due after a
	first := holdLongPoll(h, a.ID)
	refused := h.do(http.MethodGet, objPath("yards", b.ID)+"?wait=static&timeout=60s", nil)
	return refused, func() *response {
		r := h.do(http.MethodGet, objPath("yards", b.ID), nil)
		wantStatus(h.t, r, "GET without wait", http.StatusOK)
		if o := decodeAs[client.Object](h.t, r); o.State != "OPENING" {
			h.t.Fatalf("the yard polled without wait is %s, want it OPENING still", o.State)
		}
		h.mustSettle("yards", a.ID, "OPEN")
		wantStatus(h.t, <-first, "the held long-poll once its yard opened", http.StatusOK)
		again := holdLongPoll(h, b.ID)
		select {
		case r := <-again:
			h.t.Fatalf("the long-poll sent again was answered before its yard opened: %s", r)
		default:
		}
		h.mustSettle("yards", b.ID, "OPEN")
		return <-again
	}
}

// clockAdvance posts an advance of the simulator's clock.
func clockAdvance(h *harness, d string) *response {
	return h.do(http.MethodPost, "/v1/sim/clock", client.ClockAdvance{Advance: d})
}

// clockAhead advances the clock of a simulator on the wall clock (a worker's harness) by the
// longest advances until it is lead ahead of the wall clock (a multiple of a second).
func clockAhead(h *harness, lead time.Duration) {
	h.t.Helper()
	for lead > 0 {
		d := min(lead, engine.MaxClockAdvance)
		wantStatus(h.t, clockAdvance(h, d.String()), "clock advance "+d.String(), http.StatusOK)
		lead -= d
	}
}

// TestAdviceRuns: each 4xx answer of the API whose message tells the client what to do is
// reached here, and what it says to do is then done and works — the request sent again after
// what it says to wait for, or changed as it says — so no message advises something that does
// not help. Every answer must match openapi.json, its details included.
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
	restless, restlessReset := &churning{Store: memstore.New()}, &churning{Store: memstore.New()}
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
					r := h.do(http.MethodPost, "/v1/sim/faults", map[string]any{"kind": "yard", "mode": wire.FaultSlow, "factor": 2})
					wantStatus(h.t, r, fmt.Sprint("fault rule ", i), http.StatusCreated, http.StatusOK)
					if i == 0 {
						first = decodeAs[client.FaultRule](h.t, r)
					}
				}
				add := func() *response {
					return h.do(http.MethodPost, "/v1/sim/faults", map[string]any{"kind": "yard", "mode": wire.FaultSlow, "factor": 2})
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
		{
			name:    "a tenant's long-polls at its limit: retry after one ends, or poll without wait",
			opt:     harnessOptions{maxWaits: 1, metrics: true},
			refused: heldFull,
			status:  http.StatusTooManyRequests, code: client.CodeRateLimited, advice: "open long-polls, its limit: retry after one ends (or poll without wait)",
			worked: []int{http.StatusOK},
		},
		{
			name:    "the server's held requests at their total: retry shortly, or poll without wait",
			opt:     harnessOptions{maxWaits: 2, heldConns: httpapi.ReservedConns + 1, metrics: true},
			refused: heldFull,
			status:  http.StatusTooManyRequests, code: client.CodeRateLimited, advice: "all it keeps for them: retry shortly (or poll without wait)",
			worked: []int{http.StatusOK},
		},
		{
			name: "an export of objects that keep changing: retry the export",
			opt:  harnessOptions{store: restless},
			refused: func(h *harness) (*response, func() *response) {
				y := openYard(h)
				restless.busy.Store(true)
				r := h.do(http.MethodGet, "/v1/sim/export", nil)
				restless.busy.Store(false)
				return r, func() *response {
					r := h.do(http.MethodGet, "/v1/sim/export", nil)
					if st := decodeAs[engine.State](h.t, r); len(st.Objects) != 1 || st.Objects[0].ID != y.ID {
						h.t.Errorf("the export sent again holds %+v, want the yard %s", st.Objects, y.ID)
					}
					return r
				}
			},
			status: http.StatusConflict, code: client.CodeBusy, advice: "kept changing while they were exported; retry the export",
			worked: []int{http.StatusOK},
		},
		{
			name: "a reset of objects that keep changing: retry the reset",
			opt:  harnessOptions{store: restlessReset, tokens: map[string]string{"t1": "a"}},
			refused: func(h *harness) (*response, func() *response) {
				h = h.as("t1")
				y := openYard(h)
				restlessReset.busy.Store(true)
				r := h.do(http.MethodPost, "/v1/sim/reset", nil)
				restlessReset.busy.Store(false)
				return r, func() *response {
					wantStatus(h.t, h.do(http.MethodPost, "/v1/sim/reset", nil), "the reset sent again", http.StatusOK, http.StatusNoContent)
					return h.do(http.MethodGet, objPath("yards", y.ID), nil)
				}
			},
			status: http.StatusConflict, code: client.CodeBusy, advice: "objects kept changing while the reset removed them; retry the reset",
			worked: []int{http.StatusNotFound},
		},
		{
			name: "a clock too far ahead: advance it the rest of the way",
			opt:  harnessOptions{worker: true},
			refused: func(h *harness) (*response, func() *response) {
				clockAhead(h, engine.MaxClockOffset-engine.MaxClockAdvance/2)
				r := clockAdvance(h, engine.MaxClockAdvance.String())
				return r, func() *response {
					m := regexp.MustCompile(`advance it by (\S+) at most`).FindStringSubmatch(wantAPIError(h.t, r, http.StatusBadRequest, client.CodeInvalid).Message)
					if m == nil {
						h.t.Fatalf("the refusal names no advance")
					}
					return clockAdvance(h, m[1])
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: "advance it by 43800h0m0s at most",
			worked: []int{http.StatusOK},
		},
		{
			name: "a clock as far ahead as it may run: start on a new store",
			opt:  harnessOptions{worker: true},
			refused: func(h *harness) (*response, func() *response) {
				clockAhead(h, engine.MaxClockOffset)
				return clockAdvance(h, "1s"), func() *response {
					// A simulator started on a new store, its clock restored from the store as
					// lifecyclesim restores it at start-up.
					fresh := newTestServer(h.t, harnessOptions{reg: h.engine.Registry(), worker: true})
					if err := fresh.engine.RestoreClock(context.Background()); err != nil {
						h.t.Fatal(err)
					}
					if ahead := time.Until(fresh.engine.Clock().Now()); ahead > time.Minute {
						h.t.Errorf("the clock of a simulator on a new store is %s ahead of the wall clock", ahead)
					}
					return clockAdvance(fresh, "1h")
				}
			},
			status: http.StatusBadRequest, code: client.CodeInvalid, advice: "it is 876000h0m0s ahead: start the simulator on a new store",
			worked: []int{http.StatusOK},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt := tt.opt
			// Every exchange is checked against openapi.json too: the refusals' details (the
			// quota's, the held limits', a removal's dependents) are as it documents them.
			opt.reg, opt.openapi = reg, newOpenAPIValidator(t)
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
