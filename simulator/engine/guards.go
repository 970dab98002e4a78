package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// checkLinkValues checks the links a create or a patch sets in spec: each must name an
// existing object of the link's kind (the states a link needs are the setting action's, see
// checkLinks). The targets are part of the step's compare-and-set.
func (e *Engine) checkLinkValues(s *step, k *lifecycle.Kind, spec, only map[string]any) error {
	for _, l := range k.Links {
		if only != nil {
			if _, ok := only[l.Field]; !ok {
				continue
			}
		}
		id, _ := spec[l.Field].(string)
		if id == "" {
			continue
		}
		t, err := s.load(id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (t.o.Kind != l.Kind || t.k.IsGone(t.o.State))) {
			return &Error{Code: wire.CodeInvalid, Message: fmt.Sprintf("spec.%s: %s %q not found", l.Field, l.Kind, id),
				Details: map[string]string{"field": "spec." + l.Field}}
		}
		if err != nil {
			return err
		}
		s.depend(t)
	}
	return nil
}

// checkGuards enforces every guard on action a for an object (its parent ID and spec): the
// parent rule and the kind's guards on ancestors and linked objects. A refusal names the
// blocking object, its state and the states it must be in.
func (e *Engine) checkGuards(s *step, k *lifecycle.Kind, a *lifecycle.Action, parentID string, spec map[string]any) error {
	for _, g := range k.GuardsFor(a) {
		var blocker *change
		switch {
		case g.Ancestor != "":
			b, err := s.ancestor(parentID, g.Ancestor)
			if err != nil {
				return err
			}
			blocker = b
		case g.Link != "":
			id, _ := spec[g.Link].(string)
			if id == "" {
				continue
			}
			b, err := s.load(id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			s.depend(b)
			blocker = b
		}
		if blocker == nil || slices.Contains(g.States, blocker.o.State) {
			continue
		}
		rel := "ancestor"
		if blocker.o.ID == parentID {
			rel = "parent"
		}
		if g.Link != "" {
			rel = "linked"
		}
		return &Error{
			Code: wire.CodeInvalidTransition,
			Message: fmt.Sprintf("%s action %q needs its %s %s %s in state %s, but it is %s; wait until it is %s, or bring it there first",
				k.Name, a.Name, rel, blocker.k.Name, blocker.o.ID, orStates(g.States), blocker.o.State, orStates(g.States)),
			Details: wire.TransitionDetails{Kind: blocker.k.Name, State: blocker.o.State, Action: a.Name, Allowed: []string{},
				BlockedBy: blocker.o.ID, Need: g.States},
		}
	}
	return nil
}

// ancestor walks up from parentID to the first object of kind (nil when the chain ends).
func (s *step) ancestor(parentID, kind string) (*change, error) {
	id := parentID
	for range 16 {
		if id == "" {
			return nil, nil
		}
		p, err := s.load(id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		s.depend(p)
		if p.o.Kind == kind {
			return p, nil
		}
		id = p.o.ParentID
	}
	return nil, nil
}

// checkLinks enforces the links action a sets on an object whose spec already holds the
// request's params: the object a link names must exist (for the tenant) and be in an allowed
// state.
func (e *Engine) checkLinks(s *step, k *lifecycle.Kind, a *lifecycle.Action, spec map[string]any) error {
	sets, _ := k.LinksSetBy(a.Name)
	for _, l := range sets {
		id, _ := spec[l.Field].(string)
		if id == "" {
			return errorf(wire.CodeInvalid, "%s %s needs params.%s: the ID of the %s", k.Name, a.Name, l.Field, l.Kind)
		}
		t, err := s.load(id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && t.o.Kind != l.Kind) {
			return errorf(wire.CodeInvalid, "%s %s: %s %q not found", k.Name, a.Name, l.Kind, id)
		}
		if err != nil {
			return err
		}
		s.depend(t)
		if err := linkState(k, a, l, t); err != nil {
			return err
		}
	}
	return nil
}

// checkSetLinkStates checks, for a create or a patch whose spec sets links (only: the fields
// the patch changes; nil for a create), that the objects the links action a sets name are in
// one of the links' `in:` states, as an action's params are (checkLinks). A link left unset
// is no link; checkLinkValues has checked that the objects exist.
func (e *Engine) checkSetLinkStates(s *step, k *lifecycle.Kind, a *lifecycle.Action, spec, only map[string]any) error {
	sets, _ := k.LinksSetBy(a.Name)
	for _, l := range sets {
		if _, changed := only[l.Field]; only != nil && !changed {
			continue
		}
		id, _ := spec[l.Field].(string)
		if id == "" || len(l.States) == 0 {
			continue
		}
		t, err := s.load(id)
		if err != nil {
			return err
		}
		if err := linkState(k, a, l, t); err != nil {
			return err
		}
	}
	return nil
}

// linkState refuses a link set by action a to t while t is in none of the link's states,
// naming t, its state and the states it must be in.
func linkState(k *lifecycle.Kind, a *lifecycle.Action, l lifecycle.Link, t *change) error {
	if len(l.States) == 0 || slices.Contains(l.States, t.o.State) {
		return nil
	}
	return &Error{Code: wire.CodeInvalidTransition,
		Message: fmt.Sprintf("%s %s: %s %s is %s; it must be %s", k.Name, a.Name, l.Kind, t.o.ID, t.o.State, strings.Join(l.States, ", ")),
		Details: wire.TransitionDetails{Kind: l.Kind, State: t.o.State, Action: a.Name, Allowed: []string{},
			BlockedBy: t.o.ID, Need: l.States}}
}

// checkRefuse refuses an action that removes c while it has children whose delete policy is
// refuse, naming them.
func (e *Engine) checkRefuse(s *step, c *change, a *lifecycle.Action) error {
	if a.Returns || !c.k.IsGone(a.To) {
		return nil
	}
	if err := e.checkLinkRefuse(s, c, a); err != nil {
		return err
	}
	kids, err := s.list(store.Filter{ParentID: c.o.ID})
	if err != nil {
		return err
	}
	// The count decides: a child made (or gone) after it was read makes the step decide again.
	for _, rk := range e.relationsOf(c.k.Name).refusing {
		var counted []*change
		for _, kid := range kids {
			if kid.o.Kind == rk.Name {
				counted = append(counted, kid)
			}
		}
		s.dependSet(store.Filter{Kind: rk.Name, ParentID: c.o.ID}, counted)
	}
	var blocking []string
	var deps []wire.Dependent
	var kinds []string
	var undeletable []*lifecycle.Kind
	for _, kid := range kids {
		if kid.k.DeletePolicy() == lifecycle.DeleteRefuse {
			blocking = append(blocking, fmt.Sprintf("%s %s (%s)", kid.k.Name, kid.o.ID, kid.o.State))
			deps = append(deps, dependent(kid, wire.ViaParent))
			if !slices.Contains(kinds, kid.k.Name) {
				kinds = append(kinds, kid.k.Name)
				if len(kid.k.Deletion) == 0 {
					undeletable = append(undeletable, kid.k)
				}
			}
		}
	}
	if len(blocking) == 0 {
		return nil
	}
	shown := blocking
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(blocking)-10))
	}
	how := "delete them first"
	if len(undeletable) > 0 {
		// A DELETE cannot remove them: say what does (the kind file check makes sure something does).
		var goes []string
		for _, k := range undeletable {
			goes = append(goes, fmt.Sprintf("%s objects have no deletion and go only when %s lands them in %s", k.Name,
				strings.Join(k.RemovingActions(), " or "), strings.Join(k.States.Gone, " or ")))
		}
		how = "they must be gone first (" + strings.Join(goes, "; ") + ")"
	}
	return &Error{Code: wire.CodeInvalidTransition,
		Message: fmt.Sprintf("%s %s still has %d %s: %s: %s", c.k.Name, c.o.ID, len(blocking),
			strings.Join(kinds, " and ")+" objects", how, strings.Join(shown, ", ")),
		Details: wire.TransitionDetails{Kind: c.k.Name, State: c.o.State, Action: a.Name, Allowed: []string{}, Dependents: firstTen(deps)}}
}

// dependent is t as a removal's refusal names it, depending through its field via.
func dependent(t *change, via string) wire.Dependent {
	return wire.Dependent{ID: t.o.ID, Kind: t.k.Name, Name: t.o.Name, State: t.o.State, Via: via}
}

// checkLinkRefuse refuses an action that removes c while objects whose refusing link
// (`delete: refuse`) names it exist, naming them (Sahara's "in use by").
func (e *Engine) checkLinkRefuse(s *step, c *change, a *lifecycle.Action) error {
	var blocking, ids []string
	var deps []wire.Dependent
	for _, lr := range e.relationsOf(c.k.Name).linkedBy {
		if !lr.link.Refuses() {
			continue
		}
		f := store.Filter{Kind: lr.kind.Name, Link: [2]string{lr.link.Field, c.o.ID}}
		linkers, err := s.list(f)
		if err != nil {
			return err
		}
		// The set decides: a linker made (or gone) after it was read makes the step decide again.
		s.dependSet(f, linkers)
		for _, t := range linkers {
			if t.o.Spec[lr.link.Field] == c.o.ID {
				blocking = append(blocking, fmt.Sprintf("%s %s %q (%s)", t.k.Name, t.o.ID, t.o.Name, t.o.State))
				ids = append(ids, t.o.ID)
				deps = append(deps, dependent(t, lr.link.Field))
			}
		}
	}
	if len(blocking) == 0 {
		return nil
	}
	shown := blocking
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(blocking)-10))
	}
	return &Error{Code: wire.CodeInvalidTransition,
		Message: fmt.Sprintf("%s %s is in use by %d objects that name it: delete them first: %s", c.k.Name, c.o.ID, len(blocking), strings.Join(shown, ", ")),
		Details: wire.TransitionDetails{Kind: c.k.Name, State: c.o.State, Action: a.Name, Allowed: []string{}, InUseBy: firstTen(ids),
			Dependents: firstTen(deps)}}
}

// firstTen is the first ten of xs (the objects a refusal's details name).
func firstTen[T any](xs []T) []T { return xs[:min(len(xs), 10)] }

func nonNilAny(xs []any) []any {
	if xs == nil {
		return []any{}
	}
	return xs
}
