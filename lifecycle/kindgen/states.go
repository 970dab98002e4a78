package kindgen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// phases draws 0 to max phases for an action, adding their transition states to k.
func (g *gen) phases(k *lifecycle.Kind, action string, minN, maxN int) []lifecycle.Phase {
	n := minN + g.r.IntN(maxN-minN+1)
	var out []lifecycle.Phase
	for i := range n {
		st := strings.ToUpper(action) + "_ING"
		if n > 1 {
			st = fmt.Sprintf("%s_ING_%d", strings.ToUpper(action), i+1)
		}
		p := lifecycle.Phase{State: st}
		if g.chance(0.25) {
			p.Duration = lifecycle.Duration(time.Duration(1+g.r.IntN(3)) * 500 * time.Millisecond)
			g.use(PhaseDurations)
		}
		k.States.Transition = append(k.States.Transition, st)
		out = append(out, p)
	}
	if n > 0 {
		g.use(TransitionStates)
	} else {
		g.use(InstantActions)
	}
	return out
}

// stateMachine draws the subject's states and actions: a create, a chain of actions that
// reaches every ordinary state (some only through several hops), extra edges, an error state
// and its repair, a final state, a gone state for deletion, timer and system actions.
func (g *gen) stateMachine(k *lifecycle.Kind) {
	n := 2 + g.r.IntN(4)
	states := g.names(stateWords, n)
	k.States.Static = append(k.States.Static, states...)
	k.DefaultDuration = lifecycle.Duration(time.Second)

	hasError := g.chance(0.6)
	const errState, finalState, goneState = "FAULTY", "RETIRED", "REMOVED"
	if hasError {
		k.States.Error = []string{errState}
		g.use(ErrorState)
	}
	// The kind's failure rule.
	if hasError && g.chance(0.5) {
		k.Failure = lifecycle.Failure{To: errState}
		g.use(KindFailureTo)
	} else {
		k.Failure = lifecycle.Failure{Rollback: true}
		g.use(KindFailureRoll)
	}

	if g.chance(0.3) {
		k.Initial = "PLANNED"
		k.States.Static = append([]string{"PLANNED"}, k.States.Static...)
		g.use(InitialState)
	}
	k.Create = lifecycle.Action{Name: g.pick([]string{"create", "build", "provision"}), To: states[0]}
	// With an error state the create can fail, so that failures reach it.
	minPhases := 0
	if hasError {
		minPhases = 1
		if k.Failure.Rollback {
			k.Failure.Fatal = errState
		}
	}
	k.Create.Via = g.phases(k, k.Create.Name, minPhases, 2)
	if k.Initial == "" && len(k.Create.Via) > 0 && k.Failure.Rollback {
		// A create from nothing cannot roll back.
		to := states[0]
		if hasError {
			to = errState
		}
		k.Create.Failure = &lifecycle.Failure{To: to}
	}

	used := map[string]bool{k.Create.Name: true}
	actionName := func() string {
		for {
			w := g.pick(actionWords)
			if !used[w] {
				used[w] = true
				return w
			}
			w = fmt.Sprintf("%s_%d", w, g.r.IntN(100))
			if !used[w] {
				used[w] = true
				return w
			}
		}
	}
	addAction := func(a lifecycle.Action, minPhases int) *lifecycle.Action {
		a.Via = g.phases(k, a.Name, minPhases, 2)
		k.Actions = append(k.Actions, a)
		return &k.Actions[len(k.Actions)-1]
	}
	// Every ordinary state is reached from the one before it (or an earlier one), so later
	// states often need several hops.
	hops := map[string]int{states[0]: 0}
	for i := 1; i < n; i++ {
		from := states[i-1]
		if g.chance(0.3) {
			from = states[g.r.IntN(i)]
		}
		a := lifecycle.Action{Name: actionName(), From: []string{from}, To: states[i]}
		if g.chance(0.3) && i > 1 {
			a.From = append(a.From, states[g.r.IntN(i-1)])
			slices.Sort(a.From)
			a.From = slices.Compact(a.From)
		}
		addAction(a, 0)
		hops[states[i]] = hops[from] + 1
		if hops[states[i]] >= 2 {
			g.use(MultiHopRoute)
		}
	}
	// A way back to the first state from some later one, sometimes.
	if n > 1 && g.chance(0.6) {
		addAction(lifecycle.Action{Name: actionName(), From: []string{states[n-1]}, To: states[0]}, 0)
	}
	if g.chance(0.4) {
		from := states[g.r.IntN(n)]
		addAction(lifecycle.Action{Name: actionName(), From: []string{from}, Returns: true}, 1)
		g.use(ReturnsAction)
	}
	if g.chance(0.2) && n > 1 {
		a := addAction(lifecycle.Action{Name: actionName(), From: []string{states[1]}, To: states[0]}, 0)
		a.ForceFrom = []string{states[n-1]}
		if states[n-1] == states[1] {
			a.ForceFrom = nil
		} else {
			g.use(ForcedFrom)
		}
	}
	if g.chance(0.4) {
		k.States.Final = []string{finalState}
		addAction(lifecycle.Action{Name: "retire", From: []string{states[n-1]}, To: finalState}, 0)
		g.use(FinalState)
	}
	if hasError {
		g.use(RepairAction)
		addAction(lifecycle.Action{Name: "repair", From: []string{errState}, To: states[0]}, 0)
		if g.chance(0.4) {
			k.Actions = append(k.Actions, lifecycle.Action{Name: "heal", Actor: lifecycle.ActorSystem,
				After: lifecycle.Duration(time.Hour), From: []string{errState}, To: states[0]})
			g.use(SelfHealing)
		}
	}
	if g.chance(0.3) {
		k.Fields = append(k.Fields, lifecycle.Field{Name: "wake_at", Type: lifecycle.TypeTime,
			Description: "When the timer action starts.", Default: FarFuture})
		a := lifecycle.Action{Name: "alarm", Actor: lifecycle.ActorTimer, At: "wake_at", From: []string{states[0]}, To: states[n-1]}
		k.Actions = append(k.Actions, a)
		g.use(TimerAction)
		g.use(FieldTime)
		g.use(Defaults)
		if g.chance(0.5) {
			k.Fields = append(k.Fields, lifecycle.Field{Name: "snooze_at", Type: lifecycle.TypeTime, After: "wake_at"})
			g.use(TimeAfter)
		}
	}
	if g.chance(0.25) {
		a := addAction(lifecycle.Action{Name: "reconfigure", From: slices.Clone(states), Returns: true}, 1)
		k.Update = a.Name
		g.use(UpdateAction)
	}
	if g.chance(0.6) {
		from := slices.Clone(states)
		if k.Initial != "" {
			from = append([]string{k.Initial}, from...)
		}
		if hasError {
			from = append(from, errState)
		}
		if len(k.States.Final) > 0 {
			from = append(from, finalState)
		}
		k.States.Gone = []string{goneState}
		addAction(lifecycle.Action{Name: "remove", From: from, To: goneState}, 0)
		k.Deletion = map[string][]string{"destroy": {"remove"}}
		g.use(WithDeletion)
	} else {
		g.use(WithoutDeletion)
	}
}

// deletionActionOf is the kind's deletion action, if any.
func (g *gen) deletionActionOf(k *lifecycle.Kind) *lifecycle.Action {
	for i := range k.Actions {
		if k.Actions[i].Name == "remove" {
			return &k.Actions[i]
		}
	}
	return nil
}

// hold lets the subject's creates be held, sometimes: a HELD state held creates wait in, an
// action that continues the create from there, and the deletion's action allowed from it (a
// held object is removed without its create having run). It is drawn last, so every draw
// before it is the same with or without it.
func (g *gen) hold(k *lifecycle.Kind) {
	if !g.chance(0.3) {
		return
	}
	const held = "HELD"
	k.States.Static = append(k.States.Static, held)
	k.Hold = held
	k.Actions = append(k.Actions, lifecycle.Action{Name: "proceed", From: []string{held}, ContinuesCreate: true})
	if del := g.deletionActionOf(k); del != nil {
		del.From = append(del.From, held)
	}
	g.use(HeldCreate)
}
