package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Requests are accepted here. Each is one step: read, check (state machine, guards, links,
// delete policy, declared fields), change, and commit everything it implies in one
// compare-and-set transaction. A lost race re-reads and tries again.

// Create makes an object (and the children its kind makes with it) and starts its create
// action. With an idempotency key, a retry returns the object the first call made. A held
// create (req.Hold) makes the object alone, in its kind's hold state: the action that
// continues the create starts it and makes the children (Act).
func (e *Engine) Create(ctx context.Context, tenant string, k *lifecycle.Kind, req wire.CreateRequest, key string) (*store.Object, error) {
	o, _, err := e.create(ctx, tenant, k, req, key)
	return o, err
}

// CreateFamily is Create that also returns the children the create made with the object, as
// that commit wrote them, so a caller that answers them (the Blazar dialect answers a lease
// with its reservations and events) need not read them back. ok is false when the answer is
// not this call's commit (a create answered from its idempotency key): list the children.
func (e *Engine) CreateFamily(ctx context.Context, tenant string, k *lifecycle.Kind, req wire.CreateRequest, key string) (o *store.Object, kids []*store.Object, ok bool, err error) {
	o, made, err := e.create(ctx, tenant, k, req, key)
	if err != nil || made == nil || made.o != o {
		return o, nil, false, err
	}
	return o, made.kids, true, nil
}

// family is what one create's commit made: the object and its children.
type family struct {
	o    *store.Object
	kids []*store.Object
}

// create creates an object of kind k; made is what the last build made (its object is the
// answer unless the answer came from an idempotency key).
func (e *Engine) create(ctx context.Context, tenant string, k *lifecycle.Kind, req wire.CreateRequest, key string) (_ *store.Object, made *family, _ error) {
	if err := checkCreate(req, key); err != nil {
		return nil, nil, err
	}
	var ik idemKey
	if key != "" {
		// A key is scoped to the tenant, the operation and its target (here: creating a kind)
		// and bound to the body: a retry with the same body gets the first answer, a reuse
		// with another body is refused.
		ik = createKey(k, req, key)
		// Concurrent retries with one key on this process wait for the first rather than race
		// it (an optimisation: the store claims the key with the commit, so a race, here or
		// with another replica, still makes one object).
		defer e.lockObject("idempotency\x00" + tenant + "\x00" + ik.scoped)()
		if o, ok, err := e.recorded(ctx, tenant, ik, ""); err != nil || ok {
			return o, nil, err
		}
	}
	if req.Name == "" {
		return nil, nil, errorf(wire.CodeInvalid, "name is required")
	}
	if k.MadeByParent {
		return nil, nil, errorf(wire.CodeInvalid, "%s objects are made by their %s (from its spec): create or change the %s instead",
			k.Name, k.Parent.Kind, k.Parent.Kind)
	}
	if req.Hold && k.Hold == "" {
		return nil, nil, &Error{Code: wire.CodeInvalid, Message: fmt.Sprintf("a %s create cannot be held: the kind has no hold state; create without hold", k.Name),
			Details: map[string]string{"field": "hold"}}
	}
	// The quota is counted by the commit, with every object the request makes (step.quota).
	o, err := e.accept(ctx, tenant, ik, func(s *step) (*store.Object, error) {
		made = nil
		spec := maps.Clone(req.Spec)
		if spec == nil {
			spec = map[string]any{}
		}
		if err := e.checkParent(s, k, req.ParentID); err != nil {
			return nil, err
		}
		if err := e.checkGuards(s, k, &k.Create, req.ParentID, spec); err != nil {
			return nil, err
		}
		if err := k.CheckSpec(spec, s.now); err != nil {
			return nil, AsError(err)
		}
		if err := e.checkLinkValues(s, k, spec, nil); err != nil {
			return nil, err
		}
		if err := e.checkSetLinkStates(s, k, &k.Create, spec, nil); err != nil {
			return nil, err
		}
		o := &store.Object{
			ID: newID(k.Name), Tenant: tenant, Kind: k.Name, Name: req.Name, ParentID: req.ParentID,
			State: k.Initial, Spec: spec, Defaulted: lifecycle.Defaulted(req.Spec, spec), Status: map[string]any{}, CreatedAt: s.now,
		}
		c := s.insert(o, k)
		if req.Hold {
			s.hold(c)
			return o, nil
		}
		s.start(c, &k.Create, false, ActorUser)
		if err := s.makeChildren(c); err != nil {
			return nil, err
		}
		made = &family{o: o}
		for _, id := range s.order {
			if kid := s.objs[id]; kid.o.ParentID == o.ID && !kid.remove {
				made.kids = append(made.kids, kid.o)
			}
		}
		return o, nil
	})
	return o, made, err
}

// hold puts the object c, just made, in its kind's hold state: static, with no operation and
// no children, until the action that continues the create starts.
func (s *step) hold(c *change) {
	o := c.o
	o.State, o.StateSince = c.k.Hold, s.now
	o.Due = s.e.staticDue(o, c.k)
	cont := ""
	for _, a := range c.k.Actions {
		if a.ContinuesCreate {
			cont = a.Name
			break
		}
	}
	c.event(store.Event{Time: s.now, Actor: ActorUser, To: o.State,
		Message: fmt.Sprintf("created held: %s starts the %s", cont, c.k.Create.Name)})
}

// Created returns what a create of kind k with body req and idempotency key key made, when
// the tenant's key is recorded already (ok true): the object as it is now, or a refusal when
// the key was recorded with another body. A dialect that checks more than the engine before
// a create (Blazar's unique lease names) asks it first, so a retry gets the first answer
// instead of the check's refusal.
func (e *Engine) Created(ctx context.Context, tenant string, k *lifecycle.Kind, req wire.CreateRequest, key string) (*store.Object, bool, error) {
	if key == "" {
		return nil, false, nil
	}
	return e.recorded(ctx, tenant, createKey(k, req, key), "")
}

// createKey is the idempotency key of a create of kind k.
func createKey(k *lifecycle.Kind, req wire.CreateRequest, key string) idemKey {
	return idemKey{scoped: "create\x00" + k.Name + "\x00" + key, user: key, hash: bodyHash(req)}
}

// idemKey is a request's idempotency key: scoped (to the tenant's operation and its target)
// as the store records it, as the client sent it (for messages), and the body hash it binds.
type idemKey struct {
	scoped, user, hash string
}

// recorded answers a request whose key is recorded already (ok true): with the object the
// first request made or acted on, as it is now, or a refusal when the key was recorded with
// another body. target, when set, is the object the request acts on: a key recorded for
// another object is not this request's.
func (e *Engine) recorded(ctx context.Context, tenant string, ik idemKey, target string) (*store.Object, bool, error) {
	id, h, ok, err := e.store.Idempotent(ctx, tenant, ik.scoped)
	if err != nil || !ok || (target != "" && id != target) {
		return nil, false, err
	}
	o, err := e.replay(ctx, tenant, ik, id, h)
	return o, true, err
}

// replay is the answer to a request whose key was recorded for object id with body hash h:
// the same answer, on any replica, as the request that recorded it gets when it is retried.
func (e *Engine) replay(ctx context.Context, tenant string, ik idemKey, id, h string) (*store.Object, error) {
	if h != "" && h != ik.hash {
		return nil, keyReused(ik.user)
	}
	return e.getOrGone(ctx, tenant, id)
}

// accept runs a request's step until its commit wins the compare-and-set race: build reads
// what it needs into the step, checks and changes it, and returns the object to answer with;
// the step then commits (claiming the idempotency key, if any, in the same transaction) or,
// having lost to another change, starts over from fresh reads. A step that changed nothing
// commits nothing. A request whose key another request (on any replica sharing the store)
// claimed first gets that one's answer: when its commit finds the key taken, and when its
// step is refused (an action finds its object busy with the operation the winner started).
//
// The first attempt may decide from the store's decision cache (store.CachedLineageGetter,
// getGuarded). Such a decision stands only when its commit writes the object: the commit
// compares the version it was decided from and the states of the ancestors it read. A
// refusal, an answer that writes nothing, or a commit that lost is decided again from a
// fresh read.
func (e *Engine) accept(ctx context.Context, tenant string, ik idemKey, build func(s *step) (*store.Object, error)) (*store.Object, error) {
	mayCache := true
	for range casRetries + 1 {
		s := e.newStep(ctx, tenant)
		s.keyHash, s.quota, s.mayCache = ik.hash, e.maxObjects, mayCache
		mayCache = false
		o, err := build(s)
		if s.cached && (err != nil || !s.writes(o)) {
			if s.overdue && e.landingWait > 0 {
				// Busy with a phase that is over: the caller (afterLanding) waits for the
				// landing, which moves the object on here and in the cache, or answers from a
				// fresh read once it has waited long enough. A fresh read now would most
				// likely find the same phase, not yet landed.
				return nil, err
			}
			continue // decided from what may be stale: decide again from a fresh read
		}
		if err != nil {
			if ik.scoped != "" {
				if o, ok, rerr := e.recorded(ctx, tenant, ik, ""); ok {
					return o, rerr
				}
			}
			return nil, err
		}
		var qe *store.QuotaError
		var taken *store.KeyTakenError
		if err := s.commit(ik.scoped); errors.Is(err, store.ErrVersion) || errors.Is(err, store.ErrExists) {
			continue // lost the race, or (after the wall clock went back) made a taken ID
		} else if errors.As(err, &taken) {
			return e.replay(ctx, tenant, ik, taken.ID, taken.BodyHash)
		} else if errors.As(err, &qe) {
			return nil, quotaError(qe)
		} else if err != nil {
			return nil, err
		}
		return o, nil
	}
	return nil, errorf(wire.CodeBusy, "the object or its related objects are changing too fast; retry")
}

// getGuarded reads the object an action runs on into step s. Over a store whose reads are
// round trips (a store.LineageGetter) it reads the ancestors the action's guards look at in
// the same call, and the step holds them for the guards; from the store's decision cache
// (store.CachedLineageGetter) when the step may (accept says when).
func (e *Engine) getGuarded(s *step, k *lifecycle.Kind, id, action string) (*store.Object, error) {
	lg, ok := e.store.(store.LineageGetter)
	a, known := k.Action(action)
	depth := 0
	if ok && known {
		depth = e.guardDepth(k, a)
	}
	if _, cache := lg.(store.CachedLineageGetter); depth == 0 && (!cache || !s.mayCache) {
		return e.get(s.ctx, s.tenant, k, id)
	}
	var objs []*store.Object
	var err error
	if cg, ok := lg.(store.CachedLineageGetter); ok && s.mayCache {
		objs, s.cached, err = cg.GetLineageCached(s.ctx, s.tenant, id, depth)
	} else {
		objs, err = lg.GetLineage(s.ctx, s.tenant, id, depth)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && objs[0].Kind != k.Name) {
		return nil, errorf(wire.CodeNotFound, "%s %q not found", k.Name, id)
	}
	if err != nil {
		return nil, err
	}
	s.track(objs[0], k)
	for _, p := range objs[1:] {
		if pk, err := e.reg.Kind(p.Kind); err == nil {
			s.track(p, pk)
		}
	}
	return objs[0], nil
}

// guardDepth is how many levels up the farthest ancestor action a's guards name is (0 when
// they name none).
func (e *Engine) guardDepth(k *lifecycle.Kind, a *lifecycle.Action) int {
	depth := 0
	for _, g := range k.GuardsFor(a) {
		if g.Ancestor == "" {
			continue
		}
		cur := k
		for n := 1; n <= 16 && cur.Parent != nil; n++ {
			if cur.Parent.Kind == g.Ancestor {
				depth = max(depth, n)
				break
			}
			next, err := e.reg.Kind(cur.Parent.Kind)
			if err != nil {
				break
			}
			cur = next
		}
	}
	return depth
}

// checkParent checks a new object's parent: kinds with a parent need one of the right kind.
func (e *Engine) checkParent(s *step, k *lifecycle.Kind, parentID string) error {
	if k.Parent == nil {
		if parentID != "" {
			return errorf(wire.CodeInvalid, "%s objects have no parent; remove parent_id", k.Name)
		}
		return nil
	}
	if parentID == "" {
		return errorf(wire.CodeInvalid, "%s objects live in a %s: set parent_id to its ID", k.Name, k.Parent.Kind)
	}
	p, err := s.load(parentID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && p.o.Kind != k.Parent.Kind) {
		return errorf(wire.CodeInvalid, "parent %s %q not found", k.Parent.Kind, parentID)
	}
	if err != nil {
		return err
	}
	s.depend(p)
	return nil
}

// Act runs a user action on an object. It is one compare-and-set: static state and version v
// become the first phase and version v+1; a second action on a busy object gets busy.
//
// An action on an object whose phase is over (due) but not yet landed waits for the landing,
// up to landingWait, rather than answer busy: the object's transition has ended, and the
// worker (of any replica) is behind. Requests that wait leave the CPU to the worker, so a
// backlog drains instead of turning into busy answers until it does.
func (e *Engine) Act(ctx context.Context, tenant string, k *lifecycle.Kind, id, action string, req wire.ActionRequest, key string) (*store.Object, error) {
	return e.afterLanding(ctx, id, func(overdue *bool) (*store.Object, error) {
		return e.act(ctx, tenant, k, id, action, req, key, "", overdue)
	})
}

// landingWait bounds how long an action waits for the worker to land its object's due phase
// (Act) before it answers busy.
const landingWait = 2 * time.Second

// afterLanding runs attempt until it does not find its object busy with a phase that is due
// (attempt sets *overdue), waiting for the object's next change between attempts, for up to
// e.landingWait. The watch is taken before the attempt that finds the phase due, so a landing
// committed after that attempt's read wakes the wait. Such an attempt may decide from the
// store's decision cache (accept); the last one, once the wait is over, is given no overdue
// to set and decides from a fresh read.
func (e *Engine) afterLanding(ctx context.Context, id string, attempt func(overdue *bool) (*store.Object, error)) (*store.Object, error) {
	var deadline *time.Timer
	for watching := false; ; watching = true {
		var changed <-chan struct{}
		release := func() {}
		if watching {
			changed, release = e.hub.watch(id)
		}
		overdue := false
		o, err := attempt(&overdue)
		if err == nil || !overdue || e.landingWait <= 0 {
			release()
			return o, err
		}
		if !watching {
			deadline = time.NewTimer(e.landingWait)
			defer deadline.Stop()
			continue // watch, then look again: the landing may have come meanwhile
		}
		select {
		case <-changed:
			release()
		case <-deadline.C:
			release()
			return attempt(nil)
		case <-ctx.Done():
			release()
			return o, err
		}
	}
}

// act runs an action. deletion marks the action a DELETE request runs: it may be one the
// system drives, since the kind declares it as its deletion.
//
// overdue, when not nil, is set when the action finds the object busy with a phase whose due
// time has passed (the worker has not landed it yet).
func (e *Engine) act(ctx context.Context, tenant string, k *lifecycle.Kind, id, action string, req wire.ActionRequest, key string, deletion string, overdue *bool) (*store.Object, error) {
	// Locked before the idempotency check, so a retry sent while the first attempt runs
	// finds its key rather than a busy object.
	if err := checkKey(key); err != nil {
		return nil, err
	}
	defer e.lockObject(id)()
	var ik idemKey
	if key != "" {
		// Scoped to the tenant, the action and its object; bound to the body. Claimed with
		// the accepted action, in one write.
		ik = idemKey{scoped: "act\x00" + id + "\x00" + action + "\x00" + key, user: key, hash: bodyHash(req)}
		if o, ok, err := e.recorded(ctx, tenant, ik, id); err != nil || ok {
			return o, err
		}
	}
	return e.accept(ctx, tenant, ik, func(s *step) (*store.Object, error) {
		if overdue != nil {
			*overdue = false
		}
		o, err := e.getGuarded(s, k, id, action)
		if err != nil {
			return nil, err
		}
		if deletion != "" && o.Op == nil {
			// Delete chose the action from an earlier read: what this step reads decides (a
			// concurrent deletion may have landed since, as a worker on another replica lands it).
			if slices.Contains(k.DeletionTargets(deletion), o.State) {
				return o, nil // already deleted in this mode
			}
			if a, err := k.DeletionAction(deletion, o.State); err == nil {
				action = a.Name
			}
		}
		c := s.track(o, k)
		a, ok := k.Action(action)
		if !ok || (!a.ByUser() && deletion == "") {
			return nil, AsError(&lifecycle.UnknownActionError{Kind: k.Name, Action: action, Known: userActions(k)})
		}
		if o.Op != nil && a.FromAny && o.Op.Action == action {
			return o, nil // already running: a repeated delete does not start it over
		}
		if o.Op != nil && !a.FromAny {
			if overdue != nil {
				*overdue = !o.Due.IsZero() && !o.Due.After(s.now)
				s.overdue = *overdue
			}
			return nil, e.busy(o, k)
		}
		if o.Op == nil {
			if a.ByUser() {
				if _, err := k.Check(o.State, action, req.Force); err != nil {
					return nil, AsError(err)
				}
			} else if ok, needsForce := a.AllowedFrom(o.State); !ok || needsForce {
				return nil, AsError(&lifecycle.InvalidTransitionError{Kind: k.Name, From: o.State, Action: action, Allowed: k.Allowed(o.State, false)})
			}
		}
		if err := e.checkGuards(s, k, a, o.ParentID, o.Spec); err != nil {
			return nil, err
		}
		if err := e.checkRefuse(s, c, a); err != nil {
			return nil, err
		}
		origin := ""
		if o.Op != nil { // a from-any action (delete) preempts the running one
			origin = e.preempt(s, c, action)
		}
		prevSpec := maps.Clone(o.Spec)
		if len(req.Params) > 0 {
			merged := maps.Clone(o.Spec)
			applyChange(merged, req.Params)
			if err := k.CheckChange(o.State, req.Params, merged, s.now); err != nil {
				return nil, AsError(err)
			}
			o.Spec = merged
		}
		if err := e.checkLinks(s, k, a, o.Spec); err != nil {
			return nil, err
		}
		s.startLinked(c, a, req.Force, ActorUser, func(op *store.Operation) { op.Deletion = deletion })
		if a.ContinuesCreate {
			// The held create goes on: its children are made now, as the create makes them.
			if err := s.makeChildren(c); err != nil {
				return nil, err
			}
		}
		if o.Op != nil {
			o.Op.PrevSpec = prevSpec // a rollback undoes the request's params too
			if origin != "" {
				o.Op.From = origin
			}
		}
		return o, nil
	})
}

// preempt ends c's running operation for a from-any action; its followers fail with it. It
// returns the static state the preempted operation started from (where a rollback returns).
func (e *Engine) preempt(s *step, c *change, by string) string {
	op := c.o.Op
	s.ends(c, "preempted")
	s.recordLanding(c, op, c.o.State, ActorUser, true)
	c.event(store.Event{Time: s.now, Actor: ActorUser, From: c.o.State, To: c.o.State, Action: op.Action,
		OperationID: op.ID, Message: "preempted by " + by})
	for _, id := range op.Followers {
		if f, err := s.load(id); err == nil && f.o.Op != nil && f.o.Op.Follows == c.o.ID {
			s.follow(f, c, true)
		}
	}
	s.flush(op)
	c.o.Op = nil
	return op.From
}

// applyChange applies a spec change: null values remove fields.
func applyChange(spec, change map[string]any) {
	for f, v := range change {
		if v == nil {
			delete(spec, f)
		} else {
			spec[f] = v
		}
	}
}

// Patch changes spec fields. With the kind's update action the change starts it (and is undone
// if it rolls back); otherwise it applies at once to a static object. Children follow the
// change (copied fields, scaled counts) in the same step.
//
// As an action does (Act), a patch of an object whose phase is over but not yet landed waits
// for the landing, up to landingWait, rather than answer busy.
func (e *Engine) Patch(ctx context.Context, tenant string, k *lifecycle.Kind, id string, ifMatch int64, req map[string]any) (*store.Object, error) {
	if err := checkSpecSize(req); err != nil {
		return nil, err
	}
	return e.afterLanding(ctx, id, func(overdue *bool) (*store.Object, error) {
		return e.patch(ctx, tenant, k, id, ifMatch, req, overdue)
	})
}

// patch is one attempt of Patch; it sets *overdue when it finds the object busy with a phase
// whose due time has passed.
func (e *Engine) patch(ctx context.Context, tenant string, k *lifecycle.Kind, id string, ifMatch int64, req map[string]any, overdue *bool) (*store.Object, error) {
	defer e.lockObject(id)()
	return e.accept(ctx, tenant, idemKey{}, func(s *step) (*store.Object, error) {
		o, err := e.get(ctx, tenant, k, id)
		if err != nil {
			return nil, err
		}
		if ifMatch != 0 && o.Version != ifMatch {
			return nil, &Error{Code: wire.CodeConflict,
				Message: fmt.Sprintf("version is %d, not %d: read the object again and reapply your change", o.Version, ifMatch)}
		}
		// JSON merge patch (RFC 7386): a member equal to its current value is no change, so a
		// client that sends the whole spec back changes only what differs (an immutable
		// field repeated is not a change of it). A patch that changes nothing is answered
		// with the object as it is — unless it sits in a state its update leaves (a failed
		// update's UpdateError): the same patch again retries the update.
		spec := changedMembers(k, o.Spec, req, s.now)
		// The values of a failed update are in the spec but not applied: asked again of an
		// idle object, they are a change, and the update runs again (a cloudlet's upgrade,
		// once fixed). Asked again while an operation runs (the retried update itself), they
		// are answered as any repeated patch is.
		if o.Op == nil {
			for f := range unapplied(o) {
				if v, ok := req[f]; ok {
					spec[f] = v
				}
			}
		}
		unchanged := len(spec) == 0 && len(req) > 0
		if unchanged && o.Op != nil {
			return o, nil
		}
		if o.Op != nil {
			if overdue != nil {
				*overdue = !o.Due.IsZero() && !o.Due.After(s.now)
			}
			return nil, e.busy(o, k)
		}
		c := s.track(o, k)
		if unchanged && !retriesUpdate(k, o) {
			// The spec stays as it is; but when the children it makes are not what it says
			// (an MCI after refine removed failed VMs, a scale-out that failed part way),
			// sending it again converges them, as it always has.
			drift, err := s.childrenDrift(c)
			if err != nil {
				return nil, err
			}
			if !drift {
				// No value changes; but the members the client wrote are written now (a
				// default written out), which the object records.
				if d := patchDefaulted(o.Defaulted, req, o.Spec); !slices.Equal(d, o.Defaulted) {
					o.Defaulted = d
					c.event(store.Event{Time: s.now, Actor: ActorUser, From: o.State, To: o.State,
						Message: "spec written out (no value changed): " + strings.Join(slices.Sorted(maps.Keys(req)), ", ")})
				}
				return o, nil
			}
			spec = membersMakingChildren(k, req)
		}
		old := maps.Clone(o.Spec)
		merged := maps.Clone(o.Spec)
		applyChange(merged, spec)
		if err := checkSpecSize(merged); err != nil {
			return nil, err
		}
		if err := k.CheckUpdate(o.State, o.Spec, spec, merged, s.now); err != nil {
			return nil, AsError(err)
		}
		if err := e.checkLinkValues(s, k, merged, spec); err != nil {
			return nil, err
		}
		o.Spec = merged
		o.Defaulted = patchDefaulted(o.Defaulted, req, merged)
		if k.Update != "" {
			a, _ := k.Action(k.Update)
			if _, err := k.Check(o.State, a.Name, false); err != nil {
				return nil, AsError(err)
			}
			if err := e.checkGuards(s, k, a, o.ParentID, o.Spec); err != nil {
				return nil, err
			}
			if err := e.checkSetLinkStates(s, k, a, o.Spec, spec); err != nil {
				return nil, err
			}
			s.start(c, a, false, ActorUser)
			if o.Op != nil {
				o.Op.PrevSpec = old
			}
		} else {
			o.Due = e.staticDue(o, k)
			c.event(store.Event{Time: s.now, Actor: ActorUser, From: o.State, To: o.State, Message: "spec updated"})
		}
		if err := s.reconcile(c, old, spec); err != nil {
			return nil, AsError(err)
		}
		return o, nil
	})
}

// retriesUpdate reports whether a patch that changes nothing runs the kind's update again: the
// object is static in a state the update runs from and does not land in (an update error).
func retriesUpdate(k *lifecycle.Kind, o *store.Object) bool {
	if k.Update == "" || o.Op != nil {
		return false
	}
	a, ok := k.Action(k.Update)
	if !ok {
		return false
	}
	if _, err := k.Check(o.State, a.Name, false); err != nil {
		return false
	}
	return a.Target(o.State) != o.State
}

// membersMakingChildren returns the members of a patch that counted children are made from
// (an MCI's subgroups).
func membersMakingChildren(k *lifecycle.Kind, patch map[string]any) map[string]any {
	out := map[string]any{}
	for _, ch := range k.Children {
		if v, ok := patch[ch.Each]; ok && ch.Each != "" {
			out[ch.Each] = v
		}
	}
	return out
}

// changedMembers returns the members of a merge patch that change the spec: a member equal to
// the current value (as JSON) is left out, a null for an absent field too.
func changedMembers(k *lifecycle.Kind, current, patch map[string]any, now time.Time) map[string]any {
	out := make(map[string]any, len(patch))
	for f, v := range patch {
		cur, ok := current[f]
		if v == nil && !ok {
			continue
		}
		if ok && v != nil && reflect.DeepEqual(jsonValue(cur), jsonValue(v)) {
			continue
		}
		// A value that leaves out defaults (an item without its defaulted count, a null for
		// a defaulted field) is no change when, filled in, it is the current one.
		if filled, valid := k.Filled(f, v, now); ok && valid && reflect.DeepEqual(jsonValue(cur), jsonValue(filled)) {
			continue
		}
		out[f] = v
	}
	return out
}

// patchDefaulted is an object's defaulted paths (store.Object.Defaulted) after a PATCH whose
// members, as the client wrote them, are req, and whose spec after it is merged: the paths
// under req's members are those merged filled in, the others stay. Not known (nil) stays so.
func patchDefaulted(prev []string, req, merged map[string]any) []string {
	if prev == nil {
		return nil
	}
	out := []string{}
	for _, p := range prev {
		if _, written := req[topField(p)]; !written {
			out = append(out, p)
		}
	}
	checked := make(map[string]any, len(req))
	for key := range req {
		if v, ok := merged[key]; ok {
			checked[key] = v
		}
	}
	out = append(out, lifecycle.Defaulted(req, checked)...)
	slices.Sort(out)
	return out
}

// topField is the top-level field of a path (size of size, parts of parts[0].count).
func topField(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// Delete runs the action of a deletion mode.
func (e *Engine) Delete(ctx context.Context, tenant string, k *lifecycle.Kind, id, mode string) (*store.Object, error) {
	if mode == "" {
		mode = "destroy"
	}
	o, err := e.get(ctx, tenant, k, id)
	if err != nil {
		return nil, err
	}
	if _, ok := k.Deletion[mode]; !ok {
		if len(k.Deletion) == 0 && k.Parent != nil {
			return nil, errorf(wire.CodeInvalid, "%s objects cannot be deleted on their own: they go with their %s", k.Name, k.Parent.Kind)
		}
		return nil, errorf(wire.CodeInvalid, "%s objects cannot be deleted with mode %q; modes: %v", k.Name, mode, slices.Sorted(maps.Keys(k.Deletion)))
	}
	if o.Op != nil {
		for _, n := range k.Deletion[mode] {
			if a, _ := k.Action(n); a.FromAny {
				return e.act(ctx, tenant, k, id, n, wire.ActionRequest{}, "", mode, nil)
			}
		}
		return nil, e.busy(o, k)
	}
	if slices.Contains(k.DeletionTargets(mode), o.State) {
		return o, nil // already where this deletion ends (a machine in the recycle bin)
	}
	a, err := k.DeletionAction(mode, o.State)
	if err != nil {
		return nil, AsError(err)
	}
	return e.act(ctx, tenant, k, id, a.Name, wire.ActionRequest{}, "", mode, nil)
}

// injectable reports whether a system action may be started by RunSystem: one that happens on
// its own (a CRM restart, a VM losing track), not a user's, a timer's (it has its time) or one
// a relation drives (a reservation's activation happens only with its lease's start).
func (e *Engine) injectable(k *lifecycle.Kind, a *lifecycle.Action) bool {
	return !a.ByUser() && a.At == "" && !e.reg.DrivenByRelations(k.Name, a.Name)
}

// RunSystem starts an action that the system, a timer or a CRM drives, as if it happened now
// (fault injection: a MobiledgeX CRM restart, a CB-Tumblebug VM losing track).
func (e *Engine) RunSystem(ctx context.Context, tenant string, k *lifecycle.Kind, id, action string) (*store.Object, error) {
	defer e.lockObject(id)()
	return e.accept(ctx, tenant, idemKey{}, func(s *step) (*store.Object, error) {
		o, err := e.get(ctx, tenant, k, id)
		if err != nil {
			return nil, err
		}
		a, ok := k.Action(action)
		if !ok || !e.injectable(k, a) {
			var known []string
			for _, a := range k.AllActions() {
				if e.injectable(k, a) {
					known = append(known, a.Name)
				}
			}
			return nil, AsError(&lifecycle.UnknownActionError{Kind: k.Name,
				Action: action + " (only system events that happen on their own can be injected)", Known: known})
		}
		if o.Op != nil {
			return nil, e.busy(o, k)
		}
		if ok, _ := a.AllowedFrom(o.State); !ok {
			return nil, AsError(&lifecycle.InvalidTransitionError{Kind: k.Name, From: o.State, Action: action, Allowed: []string{}})
		}
		c := s.track(o, k)
		s.start(c, a, false, string(a.Actor))
		return o, nil
	})
}

// checkCreate bounds a create request's name, spec and key.
func checkCreate(req wire.CreateRequest, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if len(req.Name) > MaxNameBytes {
		return &Error{Code: wire.CodeInvalid, Message: fmt.Sprintf("name is %d bytes, over the limit of %d", len(req.Name), MaxNameBytes),
			Details: map[string]string{"field": "name"}}
	}
	return checkSpecSize(req.Spec)
}

// checkSpecSize bounds a spec (or a change to one), encoded as JSON.
func checkSpecSize(spec map[string]any) error {
	if spec == nil {
		return nil
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return errorf(wire.CodeInvalid, "spec: %v", err)
	}
	if len(b) > MaxSpecBytes {
		return &Error{Code: wire.CodeInvalid, Message: fmt.Sprintf("spec is %d bytes as JSON, over the limit of %d", len(b), MaxSpecBytes),
			Details: map[string]string{"field": "spec"}}
	}
	return nil
}
