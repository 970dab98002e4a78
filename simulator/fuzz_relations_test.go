package simulator

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/memstore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// FuzzRelations drives random sequences of requests, faults, system events and clock moves
// through the engine on families of related objects (Blazar leases, CB-Tumblebug MCIs,
// MobiledgeX cloudlets, the user-defined hangars), and checks after every step:
//   - the kinds' invariants (Blazar's consistency table, the MCI aggregate), after every
//     commit, by the engine itself;
//   - no child outlives its parent, and no object sits in a state its kind does not declare;
//   - an object is in a transition state exactly when an operation runs on it;
//   - every wait and follow link points at a live operation that knows about it, and a
//     parked operation still waits for something.
//
// The seed corpus runs in plain `go test`; `go test -fuzz FuzzRelations ./simulator` explores
// further.
func FuzzRelations(f *testing.F) {
	for seed := range uint32(12) {
		x := 2463534242 + seed*7919
		ops := make([]byte, 160)
		for j := range ops {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			ops[j] = byte(x)
		}
		f.Add(ops)
	}
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	reg := hangarRegistry(f)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 512 {
			ops = ops[:512]
		}
		fz := newRelationsFuzz(t, reg)
		for i := 0; i+1 < len(ops); i += 2 {
			fz.step(ops[i], ops[i+1])
			fz.check(i / 2)
		}
		for _, v := range fz.e.Violations() {
			t.Fatalf("%v", v)
		}
	})
}

type relationsFuzz struct {
	t     *testing.T
	e     *engine.Engine
	store *memstore.Store
	clock *engine.ManualClock
	ctx   context.Context
	n     int
}

func newRelationsFuzz(t *testing.T, reg *lifecycle.Registry) *relationsFuzz {
	store := memstore.New()
	clock := engine.NewManualClock(harnessT0)
	e := engine.New(store, reg, clock, engine.Options{CheckInvariants: true, HealAfter: time.Hour, Seed: 7})
	return &relationsFuzz{t: t, e: e, store: store, clock: clock, ctx: context.Background()}
}

// objects lists every live object.
func (fz *relationsFuzz) objects() []*store.Object {
	objs, err := fz.store.List(fz.ctx, "", store.Filter{})
	if err != nil {
		fz.t.Fatal(err)
	}
	return objs
}

// pick returns an object chosen by b, or nil when there are none.
func (fz *relationsFuzz) pick(b byte) (*store.Object, *lifecycle.Kind) {
	objs := fz.objects()
	if len(objs) == 0 {
		return nil, nil
	}
	o := objs[int(b)%len(objs)]
	k, _ := fz.e.Registry().Kind(o.Kind)
	return o, k
}

// step runs one operation chosen by op with argument arg. Refusals are expected: the point is
// that nothing the engine accepts breaks a relation.
func (fz *relationsFuzz) step(op, arg byte) {
	fz.n++
	now := fz.clock.Now()
	name := fmt.Sprintf("x%d", fz.n)
	kind := func(n string) *lifecycle.Kind { k, _ := fz.e.Registry().Kind(n); return k }
	switch op % 10 {
	case 0: // a lease
		start := now.Add(time.Duration(arg%8) * time.Second)
		_, _ = fz.e.Create(fz.ctx, "", kind("lease"), client.CreateRequest{Name: name,
			Spec: leaseSpec(start, start.Add(time.Duration(1+arg%16)*time.Second), hostReservation)}, "")
	case 1: // an MCI over one or two CSPs
		groups := []map[string]any{subgroup("a", 1+int(arg%3), "ncp", fmt.Sprintf("r%d", arg%5))}
		if arg%2 == 0 {
			groups = append(groups, subgroup("b", int(arg%3), "aws", "us-east-1"))
		}
		_, _ = fz.e.Create(fz.ctx, "", kind("mci"), client.CreateRequest{Name: name, Spec: mciSpec(groups...)}, "")
	case 2: // a hangar, or an edge tree under a random parent
		if arg%2 == 0 {
			_, _ = fz.e.Create(fz.ctx, "", kind("hangar"), client.CreateRequest{Name: name, Spec: bays(int(arg%3), 1)}, "")
			return
		}
		if o, k := fz.pick(arg); o != nil {
			for _, child := range []string{"cluster_inst", "app_inst"} {
				if ck := kind(child); ck.Parent.Kind == k.Name {
					_, _ = fz.e.Create(fz.ctx, "", ck, client.CreateRequest{Name: name, ParentID: o.ID, Spec: ck.SampleSpec(now)}, "")
				}
			}
			return
		}
		_, _ = fz.e.Create(fz.ctx, "", kind("cloudlet"), client.CreateRequest{Name: name}, "")
	case 3, 4: // a user action allowed or not
		if o, k := fz.pick(arg); o != nil {
			actions := fuzzUserActions(k)
			a := actions[int(arg/7)%len(actions)]
			_, _ = fz.e.Act(fz.ctx, "", k, o.ID, a, client.ActionRequest{Force: arg%5 == 0}, "")
		}
	case 5: // a delete
		if o, k := fz.pick(arg); o != nil {
			_, _ = fz.e.Delete(fz.ctx, "", k, o.ID, "")
		}
	case 6: // a spec change: scale, move a date, upgrade
		if o, k := fz.pick(arg); o != nil {
			var spec map[string]any
			switch k.Name {
			case "mci":
				spec = mciSpec(subgroup("a", int(arg%4), "ncp", "r1"))
			case "hangar":
				spec = bays(int(arg%3), int(arg%2))
			case "lease":
				spec = map[string]any{"end_date": now.Add(time.Duration(1+arg%20) * time.Second).Format(time.RFC3339)}
			case "cloudlet":
				spec = map[string]any{"version": fmt.Sprint(arg)}
			case "cluster_inst":
				spec = map[string]any{"num_nodes": int(arg % 5)}
			default:
				return
			}
			_, _ = fz.e.Patch(fz.ctx, "", k, o.ID, 0, spec)
		}
	case 7: // a system event: a CRM restart, a VM losing track
		if o, k := fz.pick(arg); o != nil {
			for _, a := range k.AllActions() {
				if !a.ByUser() && a.At == "" {
					_, _ = fz.e.RunSystem(fz.ctx, "", k, o.ID, a.Name)
				}
			}
		}
	case 8: // a fault rule on a random kind's phases
		kinds := []string{"vm", "lease", "event", "cluster_inst", "app_inst", "drone", "cloudlet"}
		mode := []string{wire.FaultFail, wire.FaultDrop, wire.FaultSlow}[arg%3]
		r := client.FaultRule{Kind: kinds[int(arg)%len(kinds)], Mode: mode, Count: 1 + int(arg%3), Factor: 3}
		if _, err := fz.e.Faults().Add(context.Background(), "", r); err != nil {
			fz.t.Fatal(err)
		}
	default: // time passes
		fz.clock.Advance(time.Duration(arg%9) * 500 * time.Millisecond)
		if err := fz.e.Tick(fz.ctx); err != nil {
			fz.t.Fatalf("Tick: %v", err)
		}
	}
}

// check verifies the structural rules of relations over every live object.
func (fz *relationsFuzz) check(step int) {
	t := fz.t
	objs := fz.objects()
	byID := map[string]*store.Object{}
	for _, o := range objs {
		byID[o.ID] = o
	}
	for _, o := range objs {
		k, err := fz.e.Registry().Kind(o.Kind)
		if err != nil {
			t.Fatalf("step %d: %s has unknown kind %s", step, o.ID, o.Kind)
		}
		if !k.HasState(o.State) {
			t.Fatalf("step %d: %s %s is in undeclared state %q", step, o.Kind, o.ID, o.State)
		}
		if k.IsTransition(o.State) != (o.Op != nil) {
			t.Fatalf("step %d: %s %s is in %s with operation %+v", step, o.Kind, o.ID, o.State, o.Op)
		}
		if o.ParentID != "" && byID[o.ParentID] == nil {
			t.Fatalf("step %d: %s %s outlives its parent %s", step, o.Kind, o.ID, o.ParentID)
		}
		if o.Op == nil {
			continue
		}
		if f := o.Op.Follows; f != "" {
			l := byID[f]
			if l == nil || l.Op == nil || !slices.Contains(l.Op.Followers, o.ID) {
				t.Fatalf("step %d: %s %s follows %s, which runs no operation leading it", step, o.Kind, o.ID, f)
			}
		}
		if o.Op.Parked && o.Op.Pending() == 0 {
			t.Fatalf("step %d: %s %s is parked waiting for nothing", step, o.Kind, o.ID)
		}
		fz.checkWaits(step, o, objs, byID)
	}
	for _, o := range objs {
		if q := o.Queue; q != nil {
			by := byID[q.By]
			if by == nil || by.Op == nil || by.Op.ID != q.Op {
				t.Fatalf("step %d: %s %s is queued by %s's operation %s, which is over", step, o.Kind, o.ID, q.By, q.Op)
			}
		}
	}
}

// checkWaits checks an operation's count of what it waits for and its limit lanes against the
// objects: the count is the number of operations naming it, a lane's running count the
// number of them running in the lane, its queue the chain of objects from its head. (It does
// not check a lane against the limit's bounds.)
func (fz *relationsFuzz) checkWaits(step int, o *store.Object, objs []*store.Object, byID map[string]*store.Object) {
	t := fz.t
	waits := 0
	running := map[[2]string]int{}
	for _, c := range objs {
		if c.Op != nil && c.Op.WaitedBy == o.ID && c.Op.WaitedOp == o.Op.ID {
			waits++
			if len(c.Op.Lane) == 2 {
				running[[2]string{c.Op.Lane[0], c.Op.Lane[1]}]++
			}
		}
	}
	if waits != o.Op.Waits {
		t.Fatalf("step %d: %s %s counts %d operations it waits for; %d name it", step, o.Kind, o.ID, o.Op.Waits, waits)
	}
	for outer, lanes := range o.Op.Lanes {
		for inner, l := range lanes {
			if got := running[[2]string{outer, inner}]; got != l.Running {
				t.Fatalf("step %d: %s %s lane %s/%s counts %d running; %d run in it", step, o.Kind, o.ID, outer, inner, l.Running, got)
			}
			n := 0
			for id := l.Head; id != ""; id = byID[id].Queue.Next {
				if q := byID[id]; q == nil || q.Queue == nil || q.Queue.By != o.ID {
					t.Fatalf("step %d: %s %s lane %s/%s: %s is in its queue but not queued by it", step, o.Kind, o.ID, outer, inner, id)
				}
				n++
			}
			if n != l.Queued {
				t.Fatalf("step %d: %s %s lane %s/%s counts %d queued; its chain holds %d", step, o.Kind, o.ID, outer, inner, l.Queued, n)
			}
		}
	}
}

// fuzzUserActions lists the actions a user may run on k.
func fuzzUserActions(k *lifecycle.Kind) []string {
	var out []string
	for _, a := range k.AllActions() {
		if a.ByUser() {
			out = append(out, a.Name)
		}
	}
	return out
}
