package lifecycle

import (
	"fmt"
	"slices"
)

// The generic derivations any kind may name in `derive.use`. Each reads the states of the
// kind's children of one kind (derive.children).
const (
	// DeriveCountByState writes a map of child state to the number of children in it.
	DeriveCountByState = "count_by_state"
	// DeriveCountIn writes the number of children in one of the `in` states.
	DeriveCountIn = "count_in"
	// DeriveAllIn writes true when there are children and every one is in one of the `in` states.
	DeriveAllIn = "all_in"
	// DeriveAnyIn writes true when some child is in one of the `in` states.
	DeriveAnyIn = "any_in"
	// DeriveDominantState derives the state most children are in (ties go to the state listed
	// first in `order`, then to the first in alphabetical order).
	DeriveDominantState = "dominant_state"
)

// GenericDerivations lists the generic derivations' names.
var GenericDerivations = []string{DeriveCountByState, DeriveCountIn, DeriveAllIn, DeriveAnyIn, DeriveDominantState}

// fn is d with the functions of fs (Registry.Derivation).
func (d *Derive) fn(fs *funcs) (DeriveFunc, bool) {
	if f, ok := d.countFn(fs); ok {
		return f.ofViews(), true
	}
	return chain(d, func(u Derivation) (DeriveFunc, bool) { return u.fn(fs) }, fs.derive)
}

// countFn is d as a function of counts with the functions of fs (Registry.CountDerivation).
func (d *Derive) countFn(fs *funcs) (CountDeriveFunc, bool) {
	return chain(d, func(u Derivation) (CountDeriveFunc, bool) { return u.countFn(fs) }, fs.countDerive)
}

// chain composes d's steps of one argument type (the children's views, or their counts per
// state): the derivations of Use in order, then the family function, each found by use or
// family. ok is false when one is not found, or there are none.
func chain[T any, F ~func(View, T) Derived](d *Derive, use func(Derivation) (F, bool), family func(string) (F, bool)) (F, bool) {
	var steps []F
	for _, u := range d.Use {
		f, ok := use(u)
		if !ok {
			return nil, false
		}
		steps = append(steps, f)
	}
	if d.Function != "" {
		f, ok := family(d.Function)
		if !ok {
			return nil, false
		}
		steps = append(steps, f)
	}
	if len(steps) == 0 {
		return nil, false
	}
	return func(self View, related T) Derived {
		var out Derived
		for _, f := range steps {
			out.merge(f(self, related))
		}
		return out
	}, true
}

// merge adds a later derivation's result: its state, when it has one, wins.
func (d *Derived) merge(next Derived) {
	if next.State != "" {
		d.State = next.State
	}
	for k, v := range next.Status {
		if d.Status == nil {
			d.Status = map[string]any{}
		}
		d.Status[k] = v
	}
}

// CountStates counts views per state.
func CountStates(views []View) map[string]int {
	counts := make(map[string]int, 4)
	for _, v := range views {
		counts[v.State]++
	}
	return counts
}

// ofViews is f as a function of the views it counts.
func (f CountDeriveFunc) ofViews() DeriveFunc {
	return func(self View, related []View) Derived { return f(self, CountStates(related)) }
}

// fn returns the derivation as a function of the children's views.
func (u Derivation) fn(fs *funcs) (DeriveFunc, bool) {
	if f, ok := u.countFn(fs); ok {
		return f.ofViews(), true
	}
	return fs.derive(u.Function)
}

// countFn returns the derivation as a function of the children's counts per state: a generic
// one, or a family function registered with RegisterCountDerive.
func (u Derivation) countFn(fs *funcs) (CountDeriveFunc, bool) {
	set := func(v any) Derived {
		if u.Status == "" {
			return Derived{}
		}
		return Derived{Status: map[string]any{u.Status: v}}
	}
	switch u.Function {
	case DeriveCountByState:
		return func(_ View, kids map[string]int) Derived {
			counts := map[string]any{}
			for s, n := range kids {
				if n > 0 {
					counts[s] = n
				}
			}
			return set(counts)
		}, true
	case DeriveCountIn:
		return func(_ View, kids map[string]int) Derived { return set(u.count(kids)) }, true
	case DeriveAllIn:
		return func(_ View, kids map[string]int) Derived {
			total := total(kids)
			return set(total > 0 && u.count(kids) == total)
		}, true
	case DeriveAnyIn:
		return func(_ View, kids map[string]int) Derived { return set(u.count(kids) > 0) }, true
	case DeriveDominantState:
		return func(_ View, kids map[string]int) Derived {
			s := u.dominant(kids)
			d := set(s)
			if s == "" {
				d.Status = nil
			}
			d.State = s
			return d
		}, true
	}
	return fs.countDerive(u.Function)
}

// total is how many children the counts hold.
func total(kids map[string]int) int {
	n := 0
	for _, c := range kids {
		n += c
	}
	return n
}

func (u Derivation) count(kids map[string]int) int {
	n := 0
	for _, s := range u.In {
		n += kids[s]
	}
	return n
}

// dominant is the state most children are in; ties go to the state earlier in Order, then to
// the alphabetically first. Empty when there are no children.
func (u Derivation) dominant(kids map[string]int) string {
	rank := func(s string) int {
		if i := slices.Index(u.Order, s); i >= 0 {
			return i
		}
		return len(u.Order)
	}
	best := ""
	for s, n := range kids {
		switch {
		case n <= 0:
			continue
		case best == "":
		case n < kids[best]:
			continue
		case n == kids[best] && (rank(s) > rank(best) || rank(s) == rank(best) && s > best):
			continue
		}
		best = s
	}
	if best == "" {
		return u.Empty
	}
	return best
}

// compileDerive checks a derive on its own (the child kind's states are checked against the
// registry by checkRelations).
func (k *Kind) compileDerive(add func(field, format string, args ...any)) {
	d := k.Derive
	if d.Function == "" && len(d.Use) == 0 {
		add("derive", "a derive needs `use:` (generic derivations: %s) or a family `function`", listOrNone(GenericDerivations))
	}
	if d.Function != "" {
		if _, ok := builtinFuncs.derive(d.Function); !ok {
			add("derive.function", "unknown derive function %q%s; family functions are %s, and any kind may list generic derivations under `use:` (%s)",
				d.Function, didYouMean(d.Function, append(builtinFuncs.deriveNames(), GenericDerivations...)), listOrNone(builtinFuncs.deriveNames()), listOrNone(GenericDerivations))
		}
	}
	if d.From == "" {
		add("derive.children", "name the child kind whose objects feed the derivations: `children: <kind>`")
	}
	for i, u := range d.Use {
		at := fmt.Sprintf("derive.use[%d]", i)
		generic := slices.Contains(GenericDerivations, u.Function)
		if _, ok := u.fn(builtinFuncs); !ok {
			add(at+".function", "unknown derivation %q%s; generic derivations are %s, family functions %s",
				u.Function, didYouMean(u.Function, append(slices.Clone(GenericDerivations), builtinFuncs.deriveNames()...)), listOrNone(GenericDerivations), listOrNone(builtinFuncs.deriveNames()))
			continue
		}
		switch u.Function {
		case DeriveCountIn, DeriveAllIn, DeriveAnyIn:
			if len(u.In) == 0 {
				add(at+".in", "%s needs `in:`, the child states it looks for", u.Function)
			}
		}
		if generic && u.Function != DeriveDominantState && u.Status == "" {
			add(at+".status", "%s writes a status field: name it with `status: <field>`", u.Function)
		}
		if u.Function != DeriveDominantState && (len(u.Order) > 0 || u.Empty != "") {
			add(at, "`order` and `empty` apply to dominant_state only")
		}
		if !generic && (u.Status != "" || len(u.In) > 0) {
			add(at, "a family function takes no `status` or `in`: it writes the fields it computes")
		}
	}
}

// checkDerive checks the derivations' states against the child kind.
func checkDerive(k *Kind, dk *Kind, add func(field, format string, args ...any)) {
	for i, u := range k.Derive.Use {
		at := fmt.Sprintf("derive.use[%d]", i)
		for j, s := range u.In {
			if !dk.HasState(s) {
				add(fmt.Sprintf("%s.in[%d]", at, j), "%q is not a state of %s%s", s, dk.Name, didYouMean(s, dk.allStates()))
			}
		}
		for j, s := range u.Order {
			if !dk.HasState(s) {
				add(fmt.Sprintf("%s.order[%d]", at, j), "%q is not a state of %s%s", s, dk.Name, didYouMean(s, dk.allStates()))
			}
		}
		if u.Function == DeriveDominantState && k.Derive.State && u.Empty != "" && !k.IsStatic(u.Empty) {
			add(at+".empty", "%q is not a static state of %s", u.Empty, k.Name)
		}
	}
}
