package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// walker drives one object along its state machine: it waits for static states, walks routes
// action by action and reports failures with the server's message and the last state seen.
type walker struct {
	c      *client.Client
	k      *lifecycle.Kind
	id     string
	params map[string]any
	poll   client.WaitOptions
	// kinds finds the parent's kind, to wait for a parent the system moves on.
	kinds *lifecycle.Registry
	// pending is the rest of the answer to the last create, action or delete, which the server
	// sends once the object is static: the next wait reads it instead of polling. One left
	// unread ends with the operation's context.
	pending *client.Watch
	// onState, when set, sees each state a wait reads (an action's progress messages).
	onState func(*client.Object)
}

// newWalker drives object id of kind k, sending params with every action.
func newWalker(d *providerData, k *lifecycle.Kind, id string, params map[string]any) *walker {
	return &walker{c: d.client, k: k, id: id, params: params, poll: client.WaitOptions{PollTimeout: d.pollTimeout}, kinds: d.kinds}
}

func (r *kindResource) walker(k *lifecycle.Kind, m *objectModel) *walker {
	return newWalker(r.data, k, m.ID.ValueString(), r.params(m))
}

// waitOptions are the options of one wait: they log each state seen.
func (w *walker) waitOptions(ctx context.Context) client.WaitOptions {
	opts := w.poll
	var last string
	opts.OnProgress = func(o *client.Object) {
		if o.State != last {
			tflog.Info(ctx, "waiting for object", map[string]any{"kind": w.k.Name, "id": w.id, "state": o.State})
			last = o.State
		}
		if w.onState != nil {
			w.onState(o)
		}
	}
	return opts
}

// The requests that start an operation ask the server to wait on them too, and keep the rest
// of the answer for the next wait.

// create creates the object and takes its ID.
func (w *walker) create(ctx context.Context, req client.CreateRequest) (*client.Object, error) {
	o, watch, err := w.c.CreateWait(ctx, w.k.Collection, req, w.waitOptions(ctx))
	w.pending = watch
	if err != nil {
		return nil, err
	}
	w.id = o.ID
	return o, nil
}

// actWait runs an action; the answer is the object in transition.
func (w *walker) actWait(ctx context.Context, action string, req client.ActionRequest) (*client.Object, error) {
	o, watch, err := w.c.ActWait(ctx, w.k.Collection, w.id, action, req, w.waitOptions(ctx))
	w.pending = watch
	return o, err
}

// delete sends the DELETE of a deletion mode; removed says the object was removed at once.
func (w *walker) delete(ctx context.Context, mode string) (removed bool, err error) {
	o, watch, err := w.c.DeleteWait(ctx, w.k.Collection, w.id, mode, w.waitOptions(ctx))
	w.pending = watch
	return err == nil && o == nil, err
}

// wait waits until the object is static: it reads the rest of the answer that started the
// object's operation when there is one, and long-polls otherwise.
func (w *walker) wait(ctx context.Context) (*client.Object, error) {
	var o *client.Object
	var err error
	if p := w.pending; p != nil {
		w.pending = nil
		o, err = p.Wait(ctx)
	} else {
		o, err = w.c.WaitStatic(ctx, w.k.Collection, w.id, w.waitOptions(ctx))
	}
	if err != nil {
		var we *client.WaitError
		if errors.As(err, &we) && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return we.Object, &waitError{kind: w.k.Name, id: w.id, last: we.LastState, err: err}
		}
		return nil, err
	}
	return o, nil
}

// waitAutomatic waits until the system moves a static object out of its state (an automatic
// action such as self-healing), then until it is static again. The wait is bounded by ctx.
func (w *walker) waitAutomatic(ctx context.Context, o *client.Object) (*client.Object, error) {
	tflog.Info(ctx, "waiting for the system to move the object on", map[string]any{"kind": w.k.Name, "id": w.id, "state": o.State})
	start := o.State
	delay := 200 * time.Millisecond
	for o.State == start && o.Static {
		select {
		case <-ctx.Done():
			return o, fmt.Errorf("waiting for the system to move %s %s out of %s: %w", w.k.Name, w.id, start, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
		var err error
		if o, err = w.c.Get(ctx, w.k.Collection, w.id); err != nil {
			return nil, err
		}
	}
	return w.wait(ctx)
}

// waitState waits until the object reaches state, which the system or a timer brings it to
// (a Blazar lease ACTIVE at its start_date); it fails when the object settles elsewhere for
// good (a failed start: ERROR) or is gone.
func (w *walker) waitState(ctx context.Context, o *client.Object, state string) (*client.Object, error) {
	for {
		var err error
		if o == nil || !o.Static {
			if o, err = w.wait(ctx); err != nil {
				return o, err
			}
		}
		if o.State == state {
			return o, nil
		}
		if w.k.IsError(o.State) || w.k.IsFinal(o.State) || !w.k.CanTransition(o.State, state, true) && !w.reachesByItself(o.State, state) {
			msg := fmt.Sprintf("%s %s is %s and will not become %s", w.k.Name, w.id, o.State, state)
			if le := lastError(o); le != "" {
				msg += ": " + le
			}
			return o, errors.New(msg)
		}
		if o, err = w.waitAutomatic(ctx, o); err != nil {
			return o, err
		}
	}
}

// reachesByItself reports whether timer or system actions lead from one state to another.
func (w *walker) reachesByItself(from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, a := range w.k.AllActions() {
			if a.ByUser() {
				continue
			}
			if ok, _ := a.AllowedFrom(s); !ok || a.FromAny {
				continue
			}
			next := a.Target(s)
			if next == to {
				return true
			}
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	return false
}

// waitCreated waits for a new object's create action and checks it succeeded.
func (w *walker) waitCreated(ctx context.Context, o *client.Object) (*client.Object, error) {
	if !o.Static {
		var err error
		if o, err = w.wait(ctx); err != nil {
			if client.IsNotFound(err) {
				return nil, fmt.Errorf("the create action failed and the %s was removed%s", w.k.Name, w.eventsError(ctx))
			}
			return o, err
		}
	}
	if want := w.k.Create.To; o.State != want && !w.k.IsHeld(o.State) { // held: made, waiting to continue
		// A timer or the system may have moved the new object on already (a lease whose
		// start is now): that is a create that succeeded, unless it recorded a failure.
		if w.reachesByItself(want, o.State) && lastError(o) == "" {
			return o, nil
		}
		if l, err := w.k.Lands(o.State, ""); err != nil || l != want {
			return o, &stepError{kind: w.k.Name, id: w.id, action: w.k.Create.Name, want: want, obj: o}
		}
	}
	return o, nil
}

// eventsError finds the failure message in the history of an object that is gone.
func (w *walker) eventsError(ctx context.Context) string {
	evs, err := w.c.Events(ctx, w.k.Collection, w.id)
	if err != nil {
		return ""
	}
	for _, e := range slices.Backward(evs) {
		if e.Error != "" {
			return ": " + e.Error
		}
	}
	return ""
}

// converge walks the shortest route to the desired static state, re-checking it against the
// object as it is now (the world may have moved since the plan).
func (w *walker) converge(ctx context.Context, o *client.Object, desired string) (*client.Object, error) {
	var err error
	if o == nil || !o.Static {
		if o, err = w.wait(ctx); err != nil {
			return o, err
		}
	}
	if desired == "" {
		return o, nil
	}
	route, err := w.k.Route(o.State, "", desired, false)
	if err != nil {
		return o, fmt.Errorf("cannot reach %s any more: %w", desired, err)
	}
	if len(route) > 0 && route[0].From != o.State {
		// The system moves the object on by itself first (self-healing resumes a paused
		// cloudspace): wait for that, then walk from where it went.
		if o, err = w.waitAutomatic(ctx, o); err != nil {
			return o, err
		}
		return w.converge(ctx, o, desired)
	}
	for i, step := range route {
		logStep(ctx, w, step, i, len(route))
		if o, err = w.act(ctx, step); err != nil {
			return o, err
		}
	}
	return o, nil
}

// convergeFrom is converge for an object the plan saw static in state seen, without reading
// it first (given o, it is converge from o): the server starts an action only from a state that allows it, so the first action
// of the route from seen is its own check. When the server refuses it (the object moved, or is
// busy), the walk starts over from the object as it is; when the action ran from another
// state that allows it too, the walk goes on from where that landed. Either way the object
// reaches the desired state as converge would take it there, and a walk nothing disturbed
// costs one request a step (the action, answered again once it landed).
func (w *walker) convergeFrom(ctx context.Context, o *client.Object, seen, desired string) (*client.Object, error) {
	if o != nil || desired == "" || seen == desired || !w.k.IsStatic(seen) {
		return w.converge(ctx, o, desired)
	}
	route, err := w.k.Route(seen, "", desired, false)
	if err != nil || len(route) == 0 || route[0].From != seen {
		return w.converge(ctx, nil, desired)
	}
	step := route[0]
	logStep(ctx, w, step, 0, len(route))
	started, err := w.start(ctx, step)
	switch {
	case client.IsInvalidTransition(err) || client.IsBusy(err):
		tflog.Info(ctx, "object moved since the plan; walking from where it is", map[string]any{"kind": w.k.Name, "id": w.id, "seen": seen})
		return w.converge(ctx, nil, desired)
	case err != nil:
		return nil, err
	case started.Operation != nil && started.Operation.From != "" && started.Operation.From != seen:
		return w.converge(ctx, nil, desired) // started from elsewhere: wait, then walk on
	}
	if o, err = w.landed(ctx, step); err != nil {
		return o, err
	}
	return w.converge(ctx, o, desired)
}

func logStep(ctx context.Context, w *walker, step lifecycle.Step, i, n int) {
	tflog.Info(ctx, "running lifecycle action", map[string]any{
		"kind": w.k.Name, "id": w.id, "action": step.Action, "from": step.From, "to": step.To,
		"step": fmt.Sprintf("%d/%d", i+1, n),
	})
}

// act runs one step and waits for it. A step refused because a related object (the parent, an
// ancestor a guard looks at) is somewhere the system moves it on from (a PAUSED cloudspace
// that self-healing resumes, an upgrading cloudlet) waits for that object like it waits for
// the object itself, then runs.
func (w *walker) act(ctx context.Context, step lifecycle.Step) (*client.Object, error) {
	if _, err := w.start(ctx, step); err != nil {
		return nil, err
	}
	return w.landed(ctx, step)
}

// start asks the server to run the step's action; the answer is the object in transition,
// and the next wait reads the rest of it.
func (w *walker) start(ctx context.Context, step lifecycle.Step) (*client.Object, error) {
	var started *client.Object
	err := w.unblocked(ctx, step.Action, func() error {
		var err error
		started, err = w.actWait(ctx, step.Action, client.ActionRequest{Force: step.Force, Params: w.params})
		return err
	})
	if errors.Is(err, context.Canceled) {
		// Interrupted (Ctrl-C) before the answer: the object stays where it is, or goes on.
		return nil, &waitError{kind: w.k.Name, id: w.id, last: step.From, action: step.Action, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", step.Action, w.id, err)
	}
	return started, nil
}

// landed waits for a started step and checks it ended where it should.
func (w *walker) landed(ctx context.Context, step lifecycle.Step) (*client.Object, error) {
	o, err := w.wait(ctx)
	if err != nil {
		return o, err
	}
	if o.State != step.To {
		return o, &stepError{kind: w.k.Name, id: w.id, action: step.Action, want: step.To, obj: o}
	}
	return o, nil
}

// maxBlockedWaits bounds how often one request is retried after waiting for the object that
// blocked it, in case the world keeps moving.
const maxBlockedWaits = 10

// unblocked runs call (a request that starts action); when the server refuses it for the state
// of a related object the system is moving on, it waits for that object and calls again.
func (w *walker) unblocked(ctx context.Context, action string, call func() error) error {
	for range maxBlockedWaits {
		err := call()
		if err == nil || !client.HasCode(err, client.CodeInvalidTransition) {
			return err
		}
		moved, perr := w.waitBlocked(ctx, action, err)
		if perr != nil {
			return perr
		}
		if !moved {
			return err
		}
	}
	return call()
}

// waitBlocked handles an action refused for the state of a related object: the one the
// refusal names (blocked_by), else the parent. It reports moved when it waited for the system
// to bring that object to a state the action accepts (the caller retries), a *parentError when
// the object will not get there by itself, and false with no error when no related object is
// the reason (the caller reports the refusal).
func (w *walker) waitBlocked(ctx context.Context, action string, refusal error) (moved bool, err error) {
	if w.kinds == nil {
		return false, nil
	}
	var ae *client.Error
	if errors.As(refusal, &ae) {
		if td, ok := ae.Transition(); ok && td.BlockedBy != "" && len(td.Need) > 0 {
			bk, err := w.kinds.Kind(td.Kind)
			if err != nil {
				return false, nil //nolint:nilerr // the refusal itself is the error to report
			}
			return w.waitRelated(ctx, action, bk, td.BlockedBy, td.Need, true)
		}
	}
	a, ok := w.k.Action(action)
	if !ok {
		return false, nil
	}
	need := w.k.RequiredParentStates(a)
	if need == nil || w.id == "" {
		return false, nil
	}
	o, err := w.c.Get(ctx, w.k.Collection, w.id)
	if err != nil || o.ParentID == "" {
		return false, nil //nolint:nilerr // the refusal itself is the error to report
	}
	pk, err := w.kinds.Kind(w.k.Parent.Kind)
	if err != nil {
		return false, nil //nolint:nilerr // as above
	}
	return w.waitRelated(ctx, action, pk, o.ParentID, need, false)
}

// waitRelated waits for the related object id of kind rk to get to one of need by the
// system's doing; named says the server named it as the blocker (so it being in need already
// means it just got there: retry).
func (w *walker) waitRelated(ctx context.Context, action string, rk *lifecycle.Kind, id string, need []string, named bool) (bool, error) {
	p, err := w.c.Get(ctx, rk.Collection, id)
	if err != nil {
		return false, nil //nolint:nilerr // the related object is gone: the refusal is the error
	}
	if slices.Contains(need, p.State) {
		return named, nil
	}
	if to := settled(rk, p); to == p.State || !slices.Contains(need, to) {
		return false, newParentError(w.k.Name, action, rk, p.ID, p.State, need)
	}
	tflog.Info(ctx, "waiting for the system to move a related object on", map[string]any{
		"kind": w.k.Name, "id": w.id, "action": action, "related": p.ID, "related_state": p.State,
	})
	pw := &walker{c: w.c, k: rk, id: p.ID, poll: w.poll, kinds: w.kinds}
	if p.Static {
		_, err = pw.waitAutomatic(ctx, p)
	} else {
		_, err = pw.wait(ctx)
	}
	if err != nil {
		return false, fmt.Errorf("waiting for the %s %s to leave %s (the system moves it on by itself) before %s: %w",
			rk.Name, p.ID, p.State, action, err)
	}
	return true, nil
}

// patch changes spec fields, waiting for the update action the kind may run.
// writeOut sends spec members whose values the object holds already (a default written
// out), so the simulator records them as written: no value changes and no action runs.
func (w *walker) writeOut(ctx context.Context, members map[string]any) (*client.Object, error) {
	o, err := w.c.Patch(ctx, w.k.Collection, w.id, 0, client.PatchRequest{Spec: members})
	if err != nil {
		return nil, fmt.Errorf("recording %s as written: %w", strings.Join(sortedKeys(members), ", "), err)
	}
	return o, nil
}

func (w *walker) patch(ctx context.Context, changes map[string]any) (*client.Object, error) {
	o, err := w.wait(ctx)
	if err != nil {
		return o, err
	}
	var patched *client.Object
	err = w.unblocked(ctx, w.k.Update, func() error {
		var err error
		patched, err = w.c.Patch(ctx, w.k.Collection, w.id, 0, client.PatchRequest{Spec: changes})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("changing %s: %w", strings.Join(sortedKeys(changes), ", "), err)
	}
	before := o.State
	if o, err = w.wait(ctx); err != nil {
		return o, err
	}
	if w.k.Update != "" {
		a, _ := w.k.Action(w.k.Update)
		if want := a.Target(before); o.State != want {
			return o, &stepError{kind: w.k.Name, id: w.id, action: a.Name, want: want, obj: o}
		}
		// An update that failed and rolled back lands where it started, with the change
		// undone: that is a failure too.
		if patched.Operation != nil && failedOp(o) == patched.Operation.ID {
			return o, fmt.Errorf("%s %s: %s failed and was rolled back, so the change was not applied: %s",
				w.k.Name, w.id, a.Name, lastError(o))
		}
	}
	return o, nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
