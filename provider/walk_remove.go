package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// Removing an object: the route to a deletion mode's action, then the wait until it is gone.

// remove deletes the object in a deletion mode: one DELETE when the mode's action is allowed
// now, else the route to where the mode ends; then it waits until the object is gone or in
// that end state. An object already gone is success.
//
// seen is the state the plan saw the object in ("" when not known). When it is static, the
// first request goes out without reading the object: the server refuses what the object's
// state does not allow, and then the object is read and the deletion goes on from where it
// is. After that, each round starts from the object the last wait returned, so a deletion
// nothing disturbs costs one request a step (each answered again once the object is static or
// gone).
func (w *walker) remove(ctx context.Context, mode, seen string) error {
	targets := w.k.DeletionTargets(mode)
	// o is the object as last known, nil when it must be read; guessed says it is the plan's.
	var o *client.Object
	guessed := false
	// A deletion that runs from any state (Savanna, Blazar) does not wait for a running
	// phase: it preempts it.
	fromAny := false
	for _, n := range w.k.Deletion[mode] {
		if a, ok := w.k.Action(n); ok && a.FromAny {
			removed, err := w.delete(ctx, mode)
			if removed || client.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			fromAny = true
			break
		}
	}
	if !fromAny && w.k.IsStatic(seen) && !slices.Contains(targets, seen) {
		o, guessed = &client.Object{ID: w.id, State: seen, Static: true}, true
	}
	// moved says a request sent on the plan's word was refused: the object is elsewhere.
	moved := func(err error) bool {
		return guessed && (client.IsInvalidTransition(err) || client.IsBusy(err))
	}
rounds:
	for range 8 { // a few rounds: the world may move under us
		if o == nil || !o.Static {
			var err error
			o, err = w.wait(ctx)
			if client.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			guessed = false
		}
		from := o
		o = nil
		if slices.Contains(targets, from.State) {
			return nil
		}
		if da, derr := w.k.DeletionAction(mode, from.State); derr == nil {
			tflog.Info(ctx, "deleting object", map[string]any{"kind": w.k.Name, "id": w.id, "mode": mode, "state": from.State})
			var removed bool
			dctx := ctx
			if guessed {
				// Sent on the plan's word: if the object is busy, the next round long-polls
				// until it is static rather than the client retrying for minutes.
				dctx = client.WithoutBusyRetry(ctx)
			}
			err := w.unblocked(ctx, da.Name, func() error {
				var err error
				removed, err = w.delete(dctx, mode)
				return err
			})
			if removed {
				return nil
			}
			if deps := dependentsOf(err); len(deps) > 0 {
				// Refused for objects that depend on it: the plan's guess was not wrong. Once
				// those being removed already are gone (a destroy that deletes them at the
				// same time), it goes; others keep it.
				if waited, werr := w.waitRemoved(ctx, deps); werr != nil || !waited {
					return errors.Join(err, werr)
				}
				guessed = false
				continue
			}
			if err != nil && !client.IsNotFound(err) && !client.IsBusy(err) && !moved(err) {
				return err
			}
			guessed = false
			continue
		}
		if l, err := w.k.Lands(from.State, ""); err == nil && l != from.State {
			// The system moves the object on by itself first: wait for it.
			if _, err := w.waitAutomatic(ctx, from); err != nil && !client.IsNotFound(err) {
				return err
			}
			guessed = false
			continue
		}
		route, err := w.routeToAny(from.State, targets)
		if err != nil {
			return fmt.Errorf("cannot %s the %s from state %s: %w", mode, w.k.Name, from.State, err)
		}
		if len(route) == 0 {
			continue
		}
		// Walk up to the state the deletion action starts from; the next round deletes.
		if len(route) > 1 {
			route = route[:len(route)-1]
		}
		for _, step := range route {
			landed, err := w.act(ctx, step)
			if moved(err) {
				guessed = false
				continue rounds
			}
			guessed = false
			if err != nil && !client.IsNotFound(err) {
				return err
			}
			o = landed
		}
	}
	return fmt.Errorf("the %s %s did not reach %s", w.k.Name, w.id, strings.Join(targets, " or "))
}

// routeToAny finds the shortest route to one of the targets.
func (w *walker) routeToAny(from string, targets []string) (lifecycle.Route, error) {
	var best lifecycle.Route
	var firstErr error
	for _, t := range targets {
		r, err := w.k.Route(from, "", t, true)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if best == nil || len(r) < len(best) {
			best = r
		}
	}
	if best == nil {
		return nil, firstErr
	}
	return best, nil
}

// dependentsOf are the objects a removal was refused for (err's details.dependents), if any.
func dependentsOf(err error) []client.Dependent {
	var ae *client.Error
	if !errors.As(err, &ae) {
		return nil
	}
	d, _ := ae.Transition()
	return d.Dependents
}

// waitRemoved waits until every one of deps is gone, when each is being removed already (in a
// phase of an action that removes it), and reports whether it waited: the removal they held
// up may go now. When one of them is not being removed, it does not wait.
func (w *walker) waitRemoved(ctx context.Context, deps []client.Dependent) (bool, error) {
	if w.kinds == nil {
		return false, nil
	}
	kinds := make([]*lifecycle.Kind, len(deps))
	for i, d := range deps {
		k, err := w.kinds.Kind(d.Kind)
		if err != nil || !removing(k, d.State) {
			return false, nil //nolint:nilerr // an unknown kind is not being removed: the refusal stands
		}
		kinds[i] = k
	}
	for i, d := range deps {
		tflog.Info(ctx, "waiting for a dependent being removed", map[string]any{"kind": d.Kind, "id": d.ID, "state": d.State})
		if _, err := w.c.WaitStatic(ctx, kinds[i].Collection, d.ID, w.poll); err != nil && !client.IsNotFound(err) {
			return false, err
		}
	}
	return true, nil
}

// removing reports whether an object of kind k in state is being removed: in a phase of an
// action that leaves it gone.
func removing(k *lifecycle.Kind, state string) bool {
	for _, name := range k.RemovingActions() {
		a, _ := k.Action(name)
		for _, p := range a.Via {
			if p.State == state {
				return true
			}
		}
	}
	return false
}
